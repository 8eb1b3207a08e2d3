/**
 * The conntrack classification on address ids (src/analysis/conntrack-classify.ts reading
 * the ids the parser hands out, src/model/conntrack-ids.ts) gives exactly what the
 * string-keyed classification before it gave (test/helpers/conntrack-classify-text.ts):
 * on the lab captures (with their API objects, and with a kube-dns endpoint moved so some
 * entries are stale), on a generated capture, and on a capture with IPv6 in both
 * spellings and odd entries (unreplied, zones, marks, non-canonical IPv4, expectation and
 * unparsable lines kept as diagnostics) against Services written in other spellings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs, writeModeBundle } from '../../bench/gen/capture.js';
import { classifyConntrackColumns, CODE_OK, CODE_STALE_GONE, CODE_STALE_UNTRANSLATED, CODE_VIA_ENDPOINT, CODE_VIA_NODEPORT } from '../../src/analysis/conntrack-classify.js';
import { buildConntrackIndex, buildConntrackTableIndex, conntrackSource, conntrackTargets } from '../../src/analysis/conntrack-index.js';
import { CONNTRACK_SORT_COLUMNS, DEFAULT_CONNTRACK_SORT, sortedOrder } from '../../src/analysis/conntrack-sort.js';
import { conntrackOrder, conntrackSearchText } from '../../src/analysis/conntrack-filter.js';
import { conntrackRow, conntrackView } from '../../src/analysis/conntrack-view.js';
import { toPlain } from '../../src/model/plain.js';
import { ConntrackColumnRows } from '../../src/parsers/conntrack-columns.js';
import type { ServiceFrontends } from '../../src/analysis/conntrack-nat.js';
import type { ConntrackEntry } from '../../src/model/conntrack.js';
import { addressIdsFromText, conntrackAddressIds, conntrackRows } from '../../src/model/conntrack-ids.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseConntrack, parseConntrackStream } from '../../src/parsers/conntrack.js';
import { classifyConntrackColumnsByText } from '../helpers/conntrack-classify-text.js';
import { snapshotWithMovedDnsEndpoint } from '../helpers/conntrack-fixtures.js';
import { snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';
import { ctLine } from './conntrack-builders.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The ids handed out with `entries` name each entry's own address text. */
function expectIdsNameTheText(entries: readonly ConntrackEntry[]): void {
  const ids = conntrackAddressIds(entries);
  entries.forEach((e, i) => {
    expect(ids.addresses[ids.origSrc[i]!]).toBe(e.orig.src);
    expect(ids.addresses[ids.origDst[i]!]).toBe(e.orig.dst);
    expect(ids.addresses[ids.replySrc[i]!]).toBe(e.reply.src);
    expect(ids.addresses[ids.replyDst[i]!]).toBe(e.reply.dst);
  });
  // Equal text ⇔ equal id: as many distinct ids as distinct texts.
  const texts = new Set(entries.flatMap((e) => [e.orig.src, e.orig.dst, e.reply.src, e.reply.dst]));
  const used = new Set([...ids.origSrc, ...ids.origDst, ...ids.replySrc, ...ids.replyDst]);
  expect(used.size).toBe(texts.size);
}

/** Old and new classification of `entries`, compared; returns the new one. */
function expectSameClassification(entries: readonly ConntrackEntry[], services: readonly ServiceFrontends[], nodes: readonly string[]) {
  const byIds = classifyConntrackColumns(entries, services, nodes);
  const byText = classifyConntrackColumnsByText(entries, services, nodes);
  expect(byIds.staleCount).toBe(byText.staleCount);
  expect([...byIds.serviceOf]).toEqual([...byText.serviceOf]);
  expect([...byIds.codeOf]).toEqual([...byText.codeOf]);
  return byIds;
}

function expectSameOnSnapshot(snapshot: NodeSnapshot) {
  const entries = conntrackSource(snapshot).part?.value?.entries ?? [];
  expect(entries.length).toBeGreaterThan(0);
  const { services, nodeAddresses } = conntrackTargets(snapshot);
  expect(services.length).toBeGreaterThan(0);
  expectIdsNameTheText(entries);
  return expectSameClassification(entries, services, nodeAddresses);
}

describe('conntrack classification on address ids', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('equals the string-keyed one on the lab capture %s', async (name) => {
    const c = expectSameOnSnapshot(await snapshotOf(name));
    expect([...c.codeOf].some((x) => (x & 3) === CODE_OK)).toBe(true);
  });

  it.each(['lab-iptables', 'lab-nftables'])('equals it on %s with a kube-dns endpoint moved (stale entries)', async (name) => {
    const c = expectSameOnSnapshot(await snapshotWithMovedDnsEndpoint(name));
    expect(c.staleCount).toBeGreaterThan(0);
  });

  it.each(['iptables', 'cilium'] as const)('equals it on a generated %s capture (1,000 Services × 4, 20,000 flows)', { timeout: 120_000 }, async (mode) => {
    const world = generateWorld({ services: 1000, endpoints: 4, seed: 'ids-1', modes: [mode], conntrack: 20_000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-ids-'));
    dirs.push(dir);
    writeModeBundle(world, mode, dir);
    const c = expectSameOnSnapshot(await snapshotOfDir(dir));
    const codes = new Set([...c.codeOf]);
    // The generated flows reach Services by VIP and NodePort (kube-proxy) or straight to endpoints (Cilium).
    if (mode === 'iptables') expect(codes.has(CODE_OK | CODE_VIA_NODEPORT)).toBe(true);
    else expect(codes.has(CODE_OK | CODE_VIA_ENDPOINT)).toBe(true);
  });

  it('equals it on IPv6 in both spellings and odd entries, with Services in other spellings', async () => {
    const v6 = (orig: string, reply: string, rest: Partial<Parameters<typeof ctLine>[0]> = {}) => ctLine({ l3: 'ipv6     10', orig, reply, ...rest });
    const lines = [
      // VIP fd00:96::a:80 → endpoint fd00:244::5:8080, compressed and /proc spellings.
      v6('src=fd00:244::9 dst=fd00:96::a sport=40000 dport=80', 'src=fd00:244::5 dst=fd00:244::9 sport=8080 dport=40000'),
      v6('src=fd00:0244:0000:0000:0000:0000:0000:0009 dst=fd00:0096:0000:0000:0000:0000:0000:000a sport=40001 dport=80', 'src=fd00:0244:0000:0000:0000:0000:0000:0005 dst=fd00:0244:0000:0000:0000:0000:0000:0009 sport=8080 dport=40001'),
      // Endpoint gone; not translated (unreplied).
      v6('src=fd00:244::9 dst=fd00:96::a sport=40002 dport=80', 'src=fd00:244::77 dst=fd00:244::9 sport=8080 dport=40002'),
      ctLine({ l3: 'ipv6     10', head: 'tcp      6 119 SYN_SENT', orig: 'src=fd00:244::9 dst=fd00:96::a sport=40003 dport=80', afterOrig: '[UNREPLIED]', reply: 'src=fd00:96::a dst=fd00:244::9 sport=80 dport=40003', afterReply: 'mark=0 use=1' }),
      // NodePort on the node's IPv6 address, and straight to an endpoint.
      v6('src=2001:db8::1 dst=fd00:10::1 sport=40004 dport=30080', 'src=fd00:244::5 dst=fd00:10::1 sport=8080 dport=5555'),
      v6('src=fd00:244::9 dst=fd00:244::5 sport=40005 dport=8080', 'src=fd00:244::5 dst=fd00:244::9 sport=8080 dport=40005'),
      // IPv4 with marks, zones, counters, a leading-zero address, UDP and icmp.
      ctLine({ afterReply: '[ASSURED] mark=7 secmark=3 zone=2 delta-time=44 use=1 id=9' }),
      ctLine({ afterOrig: 'zone-orig=1', afterReply: 'zone-reply=2 [ASSURED] use=1' }),
      ctLine({ afterOrig: 'packets=3 bytes=180', afterReply: 'packets=2 bytes=99 [ASSURED] mark=0 use=1' }),
      ctLine({ orig: 'src=10.244.0.9 dst=010.96.12.34 sport=1 dport=80', reply: 'src=10.244.0.31 dst=10.244.0.9 sport=8080 dport=1' }),
      ctLine({ head: 'udp      17 30', orig: 'src=10.244.0.9 dst=10.96.0.10 sport=5353 dport=53', reply: 'src=10.96.0.10 dst=10.244.0.9 sport=53 dport=5353', afterReply: 'mark=0 use=1' }),
      ctLine({ head: 'icmp     1 29', orig: 'src=10.0.0.1 dst=10.96.12.34 type=8 code=0 id=7', reply: 'src=10.244.0.31 dst=10.0.0.1 type=0 code=0 id=7' }),
      ctLine(),
      // Not entries: an expectation line, garbage, a truncated line.
      '300 proto=6 src=10.0.0.1 dst=10.0.0.2 sport=0 dport=21 mask-src=255.255.255.255 mask-dst=255.255.255.255 sport=0 dport=65535 master-src=10.0.0.1 master-dst=10.0.0.2 sport=1 dport=21 class=0 helper=ftp',
      'this is not conntrack',
      ctLine().slice(0, 60),
    ];
    const text = `${lines.join('\n')}\n`;
    const services: ServiceFrontends[] = [
      {
        namespace: 'default', name: 'web6',
        vips: [{ ip: 'fd00:0096:0000:0000:0000:0000:0000:000a', port: 80, protocol: 'TCP' }],
        nodePorts: [{ port: 30080, protocol: 'TCP' }],
        endpoints: [{ ip: 'FD00:244:0:0:0:0:0:5', port: 8080, protocol: 'TCP' }],
      },
      {
        namespace: 'default', name: 'web',
        vips: [{ ip: '10.96.12.34', port: 80, protocol: 'TCP' }, { ip: '010.96.12.34', port: 80, protocol: 'TCP' }],
        nodePorts: [],
        endpoints: [{ ip: '10.244.0.31', port: 8080, protocol: 'TCP' }],
      },
      { namespace: 'kube-system', name: 'kube-dns', vips: [{ ip: '10.96.0.10', port: 53, protocol: 'UDP' }], nodePorts: [], endpoints: [{ ip: '10.244.0.3', port: 53, protocol: 'UDP' }] },
      // A second Service on the same VIP and port: the first one wins in both.
      { namespace: 'z', name: 'shadow', vips: [{ ip: '10.96.12.34', port: 80, protocol: 'TCP' }], nodePorts: [{ port: 30080, protocol: 'TCP' }], endpoints: [{ ip: '10.244.0.31', port: 8080, protocol: 'TCP' }] },
    ];
    const nodes = ['fd00:10:0:0::1', '10.0.0.1'];
    for (const parsed of [parseConntrack(text, 'ct'), await parseConntrackStream(lines, 'ct')]) {
      const entries = parsed.value.entries;
      expect(entries.length).toBe(13);
      expect(parsed.diagnostics.length).toBeGreaterThanOrEqual(3);
      expectIdsNameTheText(entries);
      const c = expectSameClassification(entries, services, nodes);
      const codes = [...c.codeOf];
      expect(codes.slice(0, 6)).toEqual([CODE_OK, CODE_OK, CODE_STALE_GONE, CODE_STALE_UNTRANSLATED, CODE_OK | CODE_VIA_NODEPORT, CODE_OK | CODE_VIA_ENDPOINT]);
      expect(c.serviceOf[9]).toBe(1);
      // The same with ids made from the text (a table the parser did not number).
      const copy = entries.slice();
      expect(conntrackAddressIds(copy).addresses.length).toBe(addressIdsFromText(entries).addresses.length);
      expectSameClassification(copy, services, nodes);
    }
  });
});

describe('the conntrack table in columns', () => {
  const odd = [
    ctLine(),
    ctLine({ l3: 'ipv6     10', orig: 'src=fd00:244::9 dst=fd00:96::a sport=40000 dport=80', reply: 'src=fd00:244::5 dst=fd00:244::9 sport=8080 dport=40000' }),
    ctLine({ afterOrig: 'packets=3 bytes=180', afterReply: 'packets=2 bytes=99 [ASSURED] mark=0 use=1' }),
    ctLine({ afterOrig: 'packets=18446744073709551615 bytes=7', afterReply: 'packets=2 bytes=99 [ASSURED] mark=0 use=1' }),
    ctLine({ head: 'tcp      6 119 SYN_SENT', afterOrig: '[UNREPLIED]', afterReply: 'mark=0 use=1' }),
    ctLine({ afterReply: '[ASSURED] mark=7 zone=2 use=1' }),
    ctLine({ head: 'icmp     1 29', orig: 'src=10.0.0.1 dst=10.96.12.34 type=8 code=0 id=7', reply: 'src=10.244.0.31 dst=10.0.0.1 type=0 code=0 id=7' }),
    ctLine({ head: 'tcp      6 ESTABLISHED', orig: 'src=10.244.0.9 dst=010.96.12.34 sport=1 dport=80' }),
  ].join('\n');

  it.each([
    ['odd lines', () => odd],
    ['a generated capture', () => {
      const world = generateWorld({ services: 60, endpoints: 3, seed: 'rows-1', modes: ['iptables'], conntrack: 3000 });
      return writeAndRead(world);
    }],
  ])('reads %s in place as the entries hold them, and the pane index sorts as one built from plain entries', (_name, text) => {
    const parsed = parseConntrack(text(), 'ct').value;
    const rows = conntrackRows(parsed);
    expect(rows).toBeInstanceOf(ConntrackColumnRows);
    const entries = parsed.entries;
    expect(rows.length).toBe(entries.length);
    for (let i = 0; i < rows.length; i++) {
      const e = entries[i]!;
      expect(rows.proto(i)).toBe(e.proto);
      expect(rows.origDport(i)).toBe(e.orig.dport);
      expect(rows.replySport(i)).toBe(e.reply.sport);
      expect(rows.origSport(i)).toBe(e.orig.sport);
      expect(rows.replyDport(i)).toBe(e.reply.dport);
      expect(rows.state(i)).toBe(e.state);
      expect(rows.timeout(i)).toBe(e.timeout);
      expect(rows.flags(i)).toEqual(e.flags);
      expect(rows.mark(i)).toBe(e.mark);
      expect(rows.zone(i)).toBe(e.zone);
      for (const which of ['packets', 'bytes'] as const) {
        const [a, b] = [e.orig[which], e.reply[which]];
        expect(rows.counterTotal(i, which)).toBe(a === undefined && b === undefined ? null : Number((a ?? 0n) + (b ?? 0n)));
      }
      expect(toPlain(rows.entry(i))).toStrictEqual(toPlain(e));
    }
    expect((rows as ConntrackColumnRows).materialized).toBe(true);
    const services: ServiceFrontends[] = [
      { namespace: 'default', name: 'web', vips: [{ ip: '10.96.12.34', port: 80, protocol: 'TCP' }], nodePorts: [], endpoints: [{ ip: '10.244.0.31', port: 8080, protocol: 'TCP' }] },
    ];
    const plainIndex = buildConntrackIndex(entries.map((e) => toPlain(e)), services, []);
    // A fresh parse: its rows are read in place (the filter and sorts below make no entry).
    const fresh = parseConntrack(text(), 'ct').value;
    const freshRows = conntrackRows(fresh) as ConntrackColumnRows;
    const columnIndex = buildConntrackTableIndex(fresh, services, []);
    for (const filter of FILTERS) expect([filter, [...conntrackOrder(columnIndex, query(filter))]]).toEqual([filter, [...byText(plainIndex, filter)]]);
    for (const column of CONNTRACK_SORT_COLUMNS) {
      for (const descending of [false, true]) {
        expect([...sortedOrder(columnIndex, { column, descending })]).toEqual([...sortedOrder(plainIndex, { column, descending })]);
      }
    }
    // The filter's word test and every sort read the columns in place: no entry object made.
    expect(freshRows.materialized).toBe(false);
    expect(freshRows.entriesMade).toBe(0);
  });

  it('gives the Conntrack pane its rows without making an object per entry', async () => {
    const world = generateWorld({ services: 200, endpoints: 3, seed: 'rows-2', modes: ['iptables'], conntrack: 5000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-rows-'));
    dirs.push(dir);
    writeModeBundle(world, 'iptables', dir);
    const snapshot = await snapshotOfDir(dir);
    const rows = conntrackRows(snapshot.conntrack!.value!);
    expect(rows).toBeInstanceOf(ConntrackColumnRows);
    const view = conntrackView(snapshot, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    expect(view.summary.total).toBe(5000);
    const shown = [...view.order.slice(0, 40)].map((i) => conntrackRow(view.index, i));
    expect(shown.some((r) => r.status === 'ok')).toBe(true);
    // Every sort of the column index equals that of an index of plain entries, classified the string-keyed way.
    const plainEntries = Array.from({ length: rows.length }, (_, i) => toPlain(rows.entry(i)));
    const targets = conntrackTargets(snapshot);
    const byText = classifyConntrackColumnsByText(plainEntries, targets.services, targets.nodeAddresses);
    expect([...view.index.serviceOf]).toEqual([...byText.serviceOf]);
    expect([...view.index.codeOf]).toEqual([...byText.codeOf]);
    const plainIndex = buildConntrackIndex(plainEntries, targets.services, targets.nodeAddresses);
    for (const column of CONNTRACK_SORT_COLUMNS) {
      for (const descending of [false, true]) {
        expect([...sortedOrder(view.index, { column, descending })]).toEqual([...sortedOrder(plainIndex, { column, descending })]);
      }
    }
    const filtered = conntrackView(snapshot, { sort: DEFAULT_CONNTRACK_SORT, filter: 'tcp ok', service: null }).order;
    expect(filtered.length).toBeGreaterThan(0);
    expect([...filtered]).toEqual([...keepMatching(plainIndex, 'tcp ok')]);
    expect((rows as ConntrackColumnRows).materialized).toBe(false);
    // Only the 40 rows shown above and this test's plain copies were made as objects (the filter and sorts read in place).
    expect((rows as ConntrackColumnRows).entriesMade).toBe(40 + rows.length);
    // Other readers (trace, diagnose, show conntrack) still get the entries: made once, then kept.
    const entries = snapshot.conntrack!.value!.entries;
    expect(entries).toBe(snapshot.conntrack!.value!.entries);
    expect(toPlain(shown[0]!.entry)).toStrictEqual(toPlain(entries[view.order[0]!]!));
    expect((rows as ConntrackColumnRows).materialized).toBe(true);
  });
});

/** Plain filters (the word test's) that reach every field it reads: protocol, state, addresses and ports, the SNAT note, flags, mark, zone, Service, status. */
const FILTERS = ['tcp', 'udp ok', 'established', 'syn_sent', 'assured', 'unreplied', 'mark=0', 'mark=7', 'zone=2', '10.244.0', '.9:5', ':80', ':8080', 'fd00:244::9', 'fd00:96', 'snat as', 'default/web', 'stale', 'no-service', 'icmp', '31:80', '0.0.1', 'tcp 10.96 ok'];

function query(filter: string) {
  return { sort: DEFAULT_CONNTRACK_SORT, filter, service: null };
}

/** The default-sorted order of `index` kept by `filter` tested on each entry's whole search text (the definition the word test is held to). */
function byText(index: ReturnType<typeof buildConntrackIndex>, filter: string): number[] {
  const words = filter.toLowerCase().split(/\s+/).filter((w) => w !== '');
  return [...sortedOrder(index, DEFAULT_CONNTRACK_SORT)].filter((i) => words.every((w) => conntrackSearchText(index, i).includes(w)));
}

/** The conntrack text of a generated world's iptables bundle. */
function writeAndRead(world: ReturnType<typeof generateWorld>): string {
  return modeOutputs(world, 'iptables').get('conntrack')!;
}

/** The default-sorted order of `index` kept by the text filter `filter` (the pane's, on another index). */
function keepMatching(index: ReturnType<typeof buildConntrackIndex>, filter: string): Uint32Array {
  return conntrackOrder(index, { sort: DEFAULT_CONNTRACK_SORT, filter, service: null });
}

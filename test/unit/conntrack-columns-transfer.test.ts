/**
 * Issue 23 item 4: the parser's conntrack column table moved between threads by transfer
 * (src/parsers/conntrack-transfer.ts `encodeConntrackColumns` / `decodeConntrackColumns`,
 * used by the parse worker) is rebuilt as the same table a main-thread parse gives: rows
 * (every field read in place and every entry), entries, address ids and their `idOf`
 * (IPv6 spellings included), the classification (against the old string-keyed reference,
 * test/helpers/conntrack-classify-text.ts), diagnostics, events and trailers — on the three
 * lab captures, generated iptables and Cilium captures, and IPv6 and odd lines; with the
 * sender's kind numbering different from the receiver's (the kinds are re-packed). A table
 * that is not the parser's column table goes through the entry codec (the old path).
 * The real worker (tsc's dist/src/collect/parse-worker.js: build first) is checked on a
 * generated capture: its table arrives as columns and no entry object is made.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs, writeModeBundle } from '../../bench/gen/capture.js';
import { classifyConntrackRows } from '../../src/analysis/conntrack-classify.js';
import type { ServiceFrontends } from '../../src/analysis/conntrack-nat.js';
import { conntrackIndex, conntrackTargets } from '../../src/analysis/conntrack-index.js';
import { buildFirstSnapshot, completeSnapshot, piecedProbes, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { conntrackRows, type ConntrackRows } from '../../src/model/conntrack-ids.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import type { ConntrackTable } from '../../src/model/conntrack.js';
import { toPlain } from '../../src/model/plain.js';
import { parseConntrack, parseConntrackStream } from '../../src/parsers/conntrack.js';
import { ConntrackColumnRows } from '../../src/parsers/conntrack-columns.js';
import { decodeConntrack, decodeConntrackColumns, encodeConntrack, encodeConntrackColumns, type EncodedConntrackColumns } from '../../src/parsers/conntrack-transfer.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { classifyConntrackColumnsByText } from '../helpers/conntrack-classify-text.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { ctLine } from './conntrack-builders.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const v6 = (orig: string, reply: string, rest: Partial<Parameters<typeof ctLine>[0]> = {}) => ctLine({ l3: 'ipv6     10', orig, reply, ...rest });

/** IPv6 in both spellings, every kind of special entry, events, a summary cut into an entry, and lines that are not entries. */
const ODD = [
  v6('src=fd00:244::9 dst=fd00:96::a sport=40000 dport=80', 'src=fd00:244::5 dst=fd00:244::9 sport=8080 dport=40000'),
  v6('src=fd00:0244:0000:0000:0000:0000:0000:0009 dst=fd00:0096:0000:0000:0000:0000:0000:000a sport=40001 dport=80', 'src=fd00:0244:0000:0000:0000:0000:0000:0005 dst=fd00:0244:0000:0000:0000:0000:0000:0009 sport=8080 dport=40001'),
  v6('src=fd00:244::9 dst=fd00:96::a sport=40002 dport=80', 'src=fd00:244::77 dst=fd00:244::9 sport=8080 dport=40002'),
  ctLine({ l3: 'ipv6     10', head: 'tcp      6 119 SYN_SENT', orig: 'src=fd00:244::9 dst=fd00:96::a sport=40003 dport=80', afterOrig: '[UNREPLIED]', reply: 'src=fd00:96::a dst=fd00:244::9 sport=80 dport=40003', afterReply: 'mark=0 use=1' }),
  ctLine({ afterReply: '[ASSURED] mark=7 secmark=3 zone=2 delta-time=44 use=1 id=9' }),
  ctLine({ afterOrig: 'zone-orig=1', afterReply: 'zone-reply=2 [ASSURED] use=1' }),
  ctLine({ afterOrig: 'packets=3 bytes=180', afterReply: 'packets=2 bytes=99 [ASSURED] mark=0 use=1' }),
  ctLine({ afterOrig: 'packets=18446744073709551615 bytes=7', afterReply: 'packets=2 bytes=99 [ASSURED] mark=0 use=1' }),
  ctLine({ head: 'tcp      6 9999999 ESTABLISHED' }),
  ctLine({ orig: 'src=10.244.0.9 dst=010.96.12.34 sport=1 dport=80', reply: 'src=10.244.0.31 dst=10.244.0.9 sport=8080 dport=1' }),
  ctLine({ head: 'udp      17 30', orig: 'src=10.244.0.9 dst=10.96.0.10 sport=5353 dport=53', reply: 'src=10.96.0.10 dst=10.244.0.9 sport=53 dport=5353', afterReply: 'mark=0 use=1' }),
  ctLine({ head: 'icmp     1 29', orig: 'src=10.0.0.1 dst=10.96.12.34 type=8 code=0 id=7', reply: 'src=10.244.0.31 dst=10.0.0.1 type=0 code=0 id=7' }),
  ctLine({ head: 'tcp      6 ESTABLISHED', orig: 'src=10.244.0.9 dst=010.96.12.34 sport=1 dport=80' }),
  `${ctLine()}\t `,
  ctLine({ prefix: '    [NEW]' }),
  `${ctLine().slice(0, 50)}conntrack v1.4.7 (conntrack-tools): 3 flow entries have been shown.`,
  ctLine().slice(50),
  '300 proto=6 src=10.0.0.1 dst=10.0.0.2 sport=0 dport=21 mask-src=255.255.255.255 mask-dst=255.255.255.255 sport=0 dport=65535 master-src=10.0.0.1 master-dst=10.0.0.2 sport=1 dport=21 class=0 helper=ftp',
  'this is not conntrack',
  ctLine().slice(0, 60),
  ctLine(),
].join('\n');

const ODD_SERVICES: ServiceFrontends[] = [
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
];

/**
 * `enc` as a sender with another kind numbering would have encoded it: kind index j
 * becomes `(j * 7 + 3) % 1024` (a permutation of the 1024 indices), headers moved with it.
 */
function renumbered(enc: EncodedConntrackColumns): EncodedConntrackColumns {
  const to = (j: number) => (j * 7 + 3) % 1024;
  const headers: (number | undefined)[] = [];
  enc.headers.forEach((h, j) => {
    if (h !== undefined) headers[to(j)] = h;
  });
  const kind = enc.kind.map((k) => (k < 0 ? k : (k & ~1023) | to(k & 1023)));
  return { ...enc, kind, headers };
}

/** `parsed`'s table sent as a worker sends it (encoded, cloned with its buffers transferred, renumbered) and decoded here. */
function sentAndRebuilt(parsed: ParseResult<ConntrackTable>): ParseResult<ConntrackTable> {
  const sent = encodeConntrackColumns(parsed);
  expect(sent).toBeDefined();
  // The sender makes no entry object either (a million on a huge replay, at the hand-over).
  const sender = conntrackRows(parsed.value) as ConntrackColumnRows;
  expect([sender.materialized, sender.entriesMade]).toEqual([false, 0]);
  const cloned = structuredClone(sent!.encoded, { transfer: sent!.transfer });
  const back = decodeConntrackColumns(renumbered(cloned));
  expect(back).toBeDefined();
  return back!;
}

/** Every field the rows read in place, and each entry, equal; ids equal; `idOf` equal on `probes`. */
function expectSameRows(a: ConntrackRows, b: ConntrackRows, probes: readonly string[]): void {
  expect(b.length).toBe(a.length);
  for (let i = 0; i < a.length; i++) {
    expect(b.proto(i)).toBe(a.proto(i));
    expect(b.origDport(i)).toBe(a.origDport(i));
    expect(b.replySport(i)).toBe(a.replySport(i));
    expect(toPlain(b.entry(i))).toStrictEqual(toPlain(a.entry(i)));
    expect(b.entry(i).raw).toBe(a.entry(i).raw);
  }
  expect(b.ids.addresses).toEqual(a.ids.addresses);
  for (const col of ['origSrc', 'origDst', 'replySrc', 'replyDst'] as const) expect([...b.ids[col]]).toEqual([...a.ids[col]]);
  for (const text of probes) expect([text, b.ids.idOf(text)]).toEqual([text, a.ids.idOf(text)]);
}

/** What `idOf` is asked: every address text, its other IPv6 spellings and case, IPv4 with a leading zero, texts no entry holds. */
function idProbes(rows: ConntrackRows, text: string): string[] {
  const spellings = text.match(/(?<=(src|dst)=)[^ ]+/g) ?? [];
  return [...rows.ids.addresses, ...spellings, ...spellings.map((s) => s.toUpperCase()), '10.96.012.34', '10.0.0.254', 'fd00::ffff', '', 'nonsense'];
}

/** A fresh main-thread parse of `text` and the table rebuilt from another parse sent by transfer: equal in everything. */
async function expectRebuiltEqual(text: string, services: readonly ServiceFrontends[], nodes: readonly string[]): Promise<ConntrackTable> {
  const reference = parseConntrack(text, 'conntrack');
  const back = sentAndRebuilt(await parseConntrackStream(text.split('\n'), 'conntrack'));
  const [ra, rb] = [conntrackRows(reference.value), conntrackRows(back.value)];
  expect(rb).toBeInstanceOf(ConntrackColumnRows);
  expectSameRows(ra, rb, idProbes(ra, text));
  expect((rb as ConntrackColumnRows).materialized).toBe(false);
  const [ca, cb] = [classifyConntrackRows(ra, services, nodes), classifyConntrackRows(rb, services, nodes)];
  expect([...cb.serviceOf]).toEqual([...ca.serviceOf]);
  expect([...cb.codeOf]).toEqual([...ca.codeOf]);
  expect(cb.staleCount).toBe(ca.staleCount);
  // And the string-keyed reference classifier on the rebuilt entries.
  const byText = classifyConntrackColumnsByText(back.value.entries, services, nodes);
  expect([...cb.serviceOf]).toEqual([...byText.serviceOf]);
  expect([...cb.codeOf]).toEqual([...byText.codeOf]);
  expect(back.value.entries.map(toPlain)).toStrictEqual(reference.value.entries.map(toPlain));
  expect(back.value.events?.map(toPlain)).toStrictEqual(reference.value.events?.map(toPlain));
  expect(back.value.trailers).toStrictEqual(reference.value.trailers);
  expect(back.value.reportedCount).toBe(reference.value.reportedCount);
  expect(back.diagnostics).toStrictEqual(reference.diagnostics);
  expect(jsonText(back.value)).toBe(jsonText(reference.value));
  return back.value;
}

async function expectRebuiltEqualOnFixture(name: string) {
  const snapshot = await snapshotOf(name);
  const { services, nodeAddresses } = conntrackTargets(snapshot);
  const text = readFileSync(path.join('fixtures', name, 'probes', 'conntrack.stdout'), 'utf8');
  const table = await expectRebuiltEqual(text, services, nodeAddresses);
  expect(table.entries.length).toBeGreaterThan(0);
  expect(services.length).toBeGreaterThan(0);
}

describe('the conntrack column table sent by transfer', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('rebuilds %s as a main-thread parse gives it', expectRebuiltEqualOnFixture);

  // 12,000 of 16,384 slots: the columns sent are copies; 12,500: views of the builder's buffers (cutsInPlace).
  it.each([
    ['iptables', 12_000],
    ['cilium', 12_000],
    ['iptables', 12_500],
  ] as const)('rebuilds a generated %s capture (600 Services × 4, %i flows)', { timeout: 120_000 }, async (mode, flows) => {
    const world = generateWorld({ services: 600, endpoints: 4, seed: 'xfer-1', modes: [mode], conntrack: flows });
    const text = modeOutputs(world, mode).get('conntrack')!;
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-xfer-'));
    dirs.push(dir);
    writeModeBundle(world, mode, dir);
    const input = await inputOf(dir);
    const { services, nodeAddresses } = conntrackTargets(buildFirstSnapshot(input));
    const table = await expectRebuiltEqual(text, services, nodeAddresses);
    expect(table.entries.length).toBe(flows);
  });

  it('rebuilds IPv6 in both spellings and odd lines (specials, events, big counters, kept text, a cut summary)', async () => {
    const table = await expectRebuiltEqual(`${ODD}\n`, ODD_SERVICES, ['fd00:10:0:0::1', '10.0.0.1']);
    expect(table.events?.length).toBe(1);
    const rows = conntrackRows(table);
    // Both IPv6 spellings name one id; the expanded one is looked up to it.
    expect(rows.ids.idOf('fd00:0244:0000:0000:0000:0000:0000:0009')).toBe(rows.ids.idOf('fd00:244::9'));
    expect(rows.ids.idOf('fd00:244::9')).toBeGreaterThanOrEqual(0);
  });

  it('sends a table that is not the parser\'s column table through the entry codec (undefined here)', () => {
    const parsed = parseConntrack(`${ODD}\n`, 'conntrack');
    const plain = { value: { ...parsed.value, entries: parsed.value.entries.map(toPlain) }, diagnostics: parsed.diagnostics };
    expect(encodeConntrackColumns(plain)).toBeUndefined();
    const { encoded, transfer } = encodeConntrack(plain);
    // The entry codec sends plain copies (`plainConntrackEntry`: fields that are undefined are left out).
    expect(decodeConntrack(structuredClone(encoded, { transfer }))!.value.entries.map(toPlain)).toEqual(plain.value.entries);
  });

  it('the worker sends a generated capture as columns: the snapshot equals the in-process one and no entry object is made', { timeout: 120_000 }, async () => {
    const world = generateWorld({ services: 300, endpoints: 3, seed: 'xfer-2', modes: ['iptables'], conntrack: 6000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-xfer-w-'));
    dirs.push(dir);
    writeModeBundle(world, 'iptables', dir);
    appendFileSync(path.join(dir, 'probes', 'conntrack.stdout'), `${ODD}\n`);
    const input = await inputOf(dir);
    const inProcess = await completeSnapshot(input, buildFirstSnapshot(input));
    const viaWorker = await completeSnapshot(input, buildFirstSnapshot(input), { workers: { enabled: true, minBytes: 0 } });
    const [ra, rb] = [conntrackRows(inProcess.conntrack!.value!), conntrackRows(viaWorker.conntrack!.value!)];
    expect(rb).toBeInstanceOf(ConntrackColumnRows);
    expect(viaWorker.conntrack!.diagnostics.some((d) => d.code === 'parse-worker-failed')).toBe(false);
    // The pane's index comes primed from the worker, classified as here, without entries.
    const primed = conntrackIndex(viaWorker);
    const fresh = conntrackIndex(inProcess);
    expect([...primed.serviceOf]).toEqual([...fresh.serviceOf]);
    expect([...primed.codeOf]).toEqual([...fresh.codeOf]);
    expect((rb as ConntrackColumnRows).materialized).toBe(false);
    expectSameRows(ra, rb, ra.ids.addresses);
    expect(viaWorker.conntrack!.diagnostics).toStrictEqual(inProcess.conntrack!.diagnostics);
    expect(jsonText(viaWorker.conntrack!.value)).toBe(jsonText(inProcess.conntrack!.value));
  });
});

/** The JSON text of `value`, counters (bigints) as decimal text. */
function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** The staged-load input of bundle `dir`, read in pieces as a replay session reads it. */
async function inputOf(dir: string): Promise<SnapshotInput> {
  const transport = new ReplayTransport(dir);
  const runs = await runProbes(transport, { stdoutAsPieces: piecedProbes() });
  const apiText = transport.apiText();
  return { runs, ...(apiText !== undefined ? { apiText } : {}), source: { kind: 'replay', label: dir, live: false }, capturedAt: runs[0]!.result.startedAt };
}

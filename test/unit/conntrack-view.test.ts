import { describe, expect, it } from 'vitest';
import { classifyConntrack, type ServiceFrontends } from '../../src/analysis/conntrack-nat.js';
import {
  buildConntrackIndex,
  classifyConntrackColumns,
  conntrackElapsedSeconds,
  conntrackIndex,
  conntrackOrder,
  conntrackRow,
  conntrackSearchText,
  conntrackView,
  conntrackWordTest,
  CONNTRACK_SORT_COLUMNS,
  DEFAULT_CONNTRACK_SORT,
  nextConntrackSort,
  reverseConntrackSort,
  sortedOrder,
  type ConntrackIndex,
  type ConntrackQuery,
  type ConntrackRowView,
  type ConntrackSortColumn,
} from '../../src/analysis/conntrack-view.js';
import { addressSortKey } from '../../src/analysis/service-view.js';
import { UserError } from '../../src/errors.js';
import { showConntrack } from '../../src/report/conntrack.js';
import { conntrackSummaryLine } from '../../src/ui/panes/ConntrackPane.js';
import type { ConntrackEntry } from '../../src/model/conntrack.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { MOVED_DNS_ENDPOINT, snapshotWithMovedDnsEndpoint } from '../helpers/conntrack-fixtures.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { makeEntry, makeTuple } from './conntrack-builders.js';

function makeService(over: Partial<ServiceFrontends> = {}): ServiceFrontends {
  return {
    namespace: 'default',
    name: 'web',
    vips: [{ ip: '10.96.12.34', port: 80, protocol: 'TCP' }],
    nodePorts: [],
    endpoints: [{ ip: '10.244.0.31', port: 8080, protocol: 'TCP' }],
    ...over,
  };
}

const DNS = makeService({
  namespace: 'kube-system',
  name: 'kube-dns',
  vips: [{ ip: '10.96.0.10', port: 53, protocol: 'UDP' }, { ip: 'fd00:10:96:0:0:0:0:a', port: 53, protocol: 'UDP' }],
  endpoints: [{ ip: '10.244.0.2', port: 53, protocol: 'UDP' }, { ip: 'fd00:244:0:0:0:0:0:2', port: 53, protocol: 'UDP' }],
});
const WEB = makeService({ nodePorts: [{ port: 30080, protocol: 'TCP' }] });
/** A second Service on web's VIP: the first one listed wins, as in classifyConntrack. */
const SHADOW = makeService({ name: 'shadow', endpoints: [{ ip: '10.244.0.99', port: 8080, protocol: 'TCP' }] });
const NODE_IPS = ['192.168.49.2', 'fd00:49:0:0:0:0:0:2'];

const udp = (over: Parameters<typeof makeEntry>[0]) => makeEntry({ proto: 'udp', protoNum: 17, state: undefined, timeout: 28, flags: [], ...over });

/** One entry per case the classifier distinguishes. */
const CASES: readonly ConntrackEntry[] = [
  makeEntry(), // ok via VIP
  makeEntry({ endpoint: ['10.244.0.23', 8080] }), // endpoint gone
  makeEntry({ endpoint: ['10.96.12.34', 80], flags: ['UNREPLIED'] }), // not translated
  makeEntry({ vip: ['192.168.49.2', 30080], seenAs: ['192.168.49.2', 61000] }), // ok via NodePort
  makeEntry({ vip: ['fd00:49::2', 30080], endpoint: ['10.244.0.7', 8080], client: ['fd00::1', 5000] }), // NodePort on an IPv6 node address, endpoint gone
  makeEntry({ vip: ['10.0.0.1', 30080] }), // NodePort port, but not a node address
  makeEntry({ vip: ['10.96.12.34', 443] }), // VIP address, other port
  makeEntry({ vip: ['10.244.0.31', 8080], endpoint: ['10.244.0.31', 8080] }), // straight to web's endpoint, no NAT (Cilium socket LB)
  makeEntry({ vip: ['10.244.0.31', 9090], endpoint: ['10.244.0.31', 9090] }), // that Pod, on a port no Service has
  udp({ vip: ['10.96.0.10', 53], endpoint: ['10.244.0.2', 53] }), // ok
  udp({ vip: ['10.96.0.10', 53], endpoint: ['10.244.0.3', 53] }), // stale
  makeEntry({ vip: ['10.96.0.10', 53], endpoint: ['10.244.0.2', 53] }), // TCP to a UDP-only VIP
  udp({ client: ['fd00::9', 4000], vip: ['fd00:10:96::a', 53], endpoint: ['fd00:244::2', 53] }), // IPv6 spelled differently
  makeEntry({
    proto: 'icmp', protoNum: 1, state: undefined,
    orig: makeTuple({ src: '10.244.0.9', dst: '10.96.12.34', icmpType: 8, icmpCode: 0, icmpId: 1 }),
    reply: makeTuple({ src: '10.244.0.31', dst: '10.244.0.9', icmpType: 0, icmpCode: 0, icmpId: 1 }),
  }),
];

function rowsOf(index: ConntrackIndex, order: Uint32Array, elapsed = 0): ConntrackRowView[] {
  return [...order].map((i) => conntrackRow(index, i, elapsed));
}

function query(over: Partial<ConntrackQuery> = {}): ConntrackQuery {
  return { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null, ...over };
}

describe('classifyConntrackColumns', () => {
  it('gives the Service, status and reason classifyConntrack gives, entry by entry', () => {
    const services = [DNS, WEB, SHADOW];
    const reference = classifyConntrack(CASES, services, NODE_IPS).matches;
    const index = buildConntrackIndex(CASES, services, NODE_IPS);
    const got = rowsOf(index, sortedOrder(index, { column: 'timeout', descending: false })).sort((a, b) => a.index - b.index);
    expect(got.map((r) => [r.service, r.via, r.status, r.staleReason, r.pointsAt])).toEqual(
      reference.map((m) => [
        m.service ? `${m.service.namespace}/${m.service.name}` : null,
        m.via ?? null,
        m.status,
        m.staleReason ?? null,
        m.pointsAt ?? null,
      ]),
    );
    // The cases cover every outcome, so the comparison above means something.
    expect(new Set(reference.map((m) => `${m.status}/${m.staleReason ?? ''}/${m.via ?? ''}`))).toEqual(
      new Set(['ok//vip', 'stale/endpoint-gone/vip', 'stale/not-translated/vip', 'ok//nodePort', 'stale/endpoint-gone/nodePort', 'ok//endpoint', 'no-service//']),
    );
    expect(index.staleCount).toBe(reference.filter((m) => m.status === 'stale').length);
  });

  it('lets the first Service listed win a shared VIP', () => {
    const c = classifyConntrackColumns([makeEntry()], [SHADOW, WEB], []);
    expect([c.serviceOf[0], c.codeOf[0]]).toEqual([0, 2]); // shadow, stale: 10.244.0.31 is web's endpoint
  });
});

describe('conntrackView on the lab captures', () => {
  it('lab-cilium: stale flows are not checked (Cilium\'s own conntrack is not compared, as diagnose says): the summary says so, not "0 stale" (en, ja)', async () => {
    const cilium = conntrackView(await snapshotOf('lab-cilium'), query());
    expect(cilium.summary.staleChecked).toBe(false);
    const en = conntrackSummaryLine(cilium, 'en');
    expect(en).toMatch(/ · stale not checked$/);
    expect(en).not.toMatch(/\d+ stale/);
    expect(conntrackSummaryLine(cilium, 'ja')).toMatch(/ · 古いエントリは未確認$/);
    const iptables = conntrackView(await snapshotOf('lab-iptables'), query());
    expect(iptables.summary.staleChecked).toBe(true);
    expect(conntrackSummaryLine(iptables, 'en')).toMatch(/ · 0 stale$/);
  });

  it('show conntrack says the same as the pane: on lab-cilium the stale count is unknown (text en/ja: "stale not checked"; JSON: stale null, staleChecked false), on lab-iptables a count', async () => {
    const cilium = await snapshotOf('lab-cilium');
    const summaryLine = (text: string) => text.split('\n').find((l) => l.includes('nf_conntrack'))!;
    expect(summaryLine(showConntrack(cilium, 'text'))).toMatch(/ · stale not checked$/);
    expect(showConntrack(cilium, 'text')).not.toMatch(/\d+ stale/);
    expect(summaryLine(showConntrack(cilium, 'text', {}, 'ja'))).toMatch(/ · 古いエントリは未確認$/);
    const json = JSON.parse(showConntrack(cilium, 'json')) as { summary: Record<string, unknown> };
    expect([json.summary.stale, json.summary.staleShown, json.summary.staleChecked]).toEqual([null, null, false]);
    const iptables = await snapshotOf('lab-iptables');
    expect(summaryLine(showConntrack(iptables, 'text'))).toMatch(/ · 0 stale$/);
    expect(summaryLine(showConntrack(iptables, 'text', {}, 'ja'))).toMatch(/ · 古いエントリ 0 件$/);
    const ipJson = JSON.parse(showConntrack(iptables, 'json')) as { summary: Record<string, unknown> };
    expect([ipJson.summary.stale, ipJson.summary.staleShown, ipJson.summary.staleChecked]).toEqual([0, 0, true]);
  });

  it.each(['lab-iptables', 'lab-nftables'])('%s: every entry belongs to web or kube-dns and is answered by a current endpoint', async (name) => {
    const snapshot = await snapshotOf(name);
    const view = conntrackView(snapshot, query());
    const entries = snapshot.conntrack!.value!.entries;
    expect(view.availability).toEqual({ kind: 'table' });
    expect(view.summary).toEqual({
      shown: entries.length,
      total: entries.length,
      count: snapshot.conntrackCount,
      max: snapshot.conntrackMax,
      percent: (snapshot.conntrackCount! / snapshot.conntrackMax!) * 100,
      stale: 0,
      staleShown: 0,
      staleChecked: true,
    });
    const rows = rowsOf(view.index, view.order);
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set(['ok']));
    // Pod → ClusterIP by VIP; outside host → node IP:30080 by NodePort, masqueraded.
    for (const r of rows) {
      if (r.entry.orig.dport === 30080) expect([r.service, r.via, r.nat.snat]).toEqual(['default/web', 'nodePort', true]);
      else if (r.entry.orig.dst === '10.96.12.34') expect([r.service, r.via, r.nat.snat]).toEqual(['default/web', 'vip', false]);
      else expect([r.service, r.via, r.entry.proto]).toEqual(['kube-system/kube-dns', 'vip', 'udp']);
    }
    // Sorted by Service: default/web before kube-system/kube-dns.
    const services = rows.map((r) => r.service);
    expect(services).toEqual([...services].sort());
  });

  it('flags exactly the entries answered by a kube-dns endpoint that moved', async () => {
    const snapshot = await snapshotWithMovedDnsEndpoint('lab-iptables');
    const view = conntrackView(snapshot, query());
    const rows = rowsOf(view.index, view.order);
    const stale = rows.filter((r) => r.status === 'stale');
    const expected = snapshot.conntrack!.value!.entries.filter((e) => e.reply.src === MOVED_DNS_ENDPOINT.from);
    expect(expected.length).toBeGreaterThan(0);
    expect(stale.map((r) => r.entry)).toEqual(expected);
    for (const r of stale) {
      expect([r.service, r.staleReason, r.pointsAt]).toEqual(['kube-system/kube-dns', 'endpoint-gone', { ip: MOVED_DNS_ENDPOINT.from, port: 53 }]);
    }
    expect([view.summary.stale, view.summary.staleShown]).toEqual([expected.length, expected.length]);
    const onlyStale = conntrackView(snapshot, query({ filter: 'STALE' }));
    expect(rowsOf(onlyStale.index, onlyStale.order).map((r) => r.entry)).toEqual(expected);
  });

  it('is computed once per snapshot', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    expect(conntrackIndex(snapshot)).toBe(conntrackIndex(snapshot));
    expect(conntrackView(snapshot, query()).order).toBe(conntrackView(snapshot, query()).order);
  });
});

/** `entry` with accounting counters: `[packets, bytes]` per direction (null: none). */
function withCounters(entry: ConntrackEntry, orig: [bigint, bigint] | null, reply: [bigint, bigint] | null): ConntrackEntry {
  return {
    ...entry,
    orig: orig ? { ...entry.orig, packets: orig[0], bytes: orig[1] } : entry.orig,
    reply: reply ? { ...entry.reply, packets: reply[0], bytes: reply[1] } : entry.reply,
  };
}

describe('sorting', () => {
  const index = buildConntrackIndex(
    [
      ...CASES,
      makeEntry({ timeout: undefined, client: ['10.244.0.9', 1] }),
      makeEntry({ timeout: 5, state: 'TIME_WAIT', client: ['10.244.0.9', 2] }),
      makeEntry({ timeout: 5, state: 'TIME_WAIT', client: ['10.244.0.9', 3] }),
      withCounters(makeEntry({ client: ['10.244.0.9', 4] }), [3n, 500n], [2n, 9000n]),
      withCounters(makeEntry({ client: ['10.244.0.9', 5] }), [40n, 4000n], [38n, 100n]),
      withCounters(makeEntry({ client: ['10.244.0.9', 6] }), [1n, 60n], null),
    ],
    [DNS, WEB],
    NODE_IPS,
  );
  // Flows without accounting (nf_conntrack_acct=0) have no count: they sort after every count.
  const total = (r: ConntrackRowView, f: 'packets' | 'bytes') =>
    r.entry.orig[f] === undefined && r.entry.reply[f] === undefined ? Number.POSITIVE_INFINITY : Number((r.entry.orig[f] ?? 0n) + (r.entry.reply[f] ?? 0n));
  const value: Record<ConntrackSortColumn, (r: ConntrackRowView) => string | number> = {
    service: (r) => r.service ?? '\uffff',
    vip: (r) => `${addressSortKey(r.entry.orig.dst)} ${String(r.entry.orig.dport ?? 0).padStart(5, '0')}`,
    endpoint: (r) => `${addressSortKey(r.entry.reply.src)} ${String(r.entry.reply.sport ?? 0).padStart(5, '0')}`,
    protocol: (r) => r.entry.proto,
    state: (r) => r.entry.state ?? '',
    timeout: (r) => r.entry.timeout ?? Number.POSITIVE_INFINITY,
    packets: (r) => total(r, 'packets'),
    bytes: (r) => total(r, 'bytes'),
  };
  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

  it.each(CONNTRACK_SORT_COLUMNS.flatMap((c) => [[c, false], [c, true]] as const))('by %s (descending: %s), ties in input order', (column, descending) => {
    const rows = rowsOf(index, sortedOrder(index, { column, descending }));
    expect(rows).toHaveLength(index.entries.length);
    for (let k = 1; k < rows.length; k++) {
      const [a, b] = [rows[k - 1]!, rows[k]!];
      const c = cmp(value[column](a), value[column](b));
      expect(descending ? c >= 0 : c <= 0, `${column} rows ${k - 1},${k}`).toBe(true);
      if (c === 0) expect(a.index).toBeLessThan(b.index);
    }
  });

  it('by packets, descending: both directions summed, the busiest flow first', () => {
    const rows = rowsOf(index, sortedOrder(index, { column: 'packets', descending: true })).filter((r) => Number.isFinite(total(r, 'packets')));
    expect(rows.map((r) => r.entry.orig.sport)).toEqual([5, 4, 6]);
    const byBytes = rowsOf(index, sortedOrder(index, { column: 'bytes', descending: false })).filter((r) => Number.isFinite(total(r, 'bytes')));
    expect(byBytes.map((r) => r.entry.orig.sport)).toEqual([6, 5, 4]);
  });

  it('puts entries without a timeout last, ascending', () => {
    const rows = rowsOf(index, sortedOrder(index, { column: 'timeout', descending: false }));
    expect(rows.at(-1)?.entry.timeout).toBeUndefined();
    expect(rows.slice(0, 2).map((r) => r.entry.orig.sport)).toEqual([2, 3]);
  });

  it('cycles the columns with s and reverses with S', () => {
    let sort = DEFAULT_CONNTRACK_SORT;
    const seen: string[] = [];
    for (let k = 0; k < CONNTRACK_SORT_COLUMNS.length; k++) {
      seen.push(sort.column);
      sort = nextConntrackSort(reverseConntrackSort(sort));
      expect(sort.descending).toBe(false);
    }
    expect(seen).toEqual([...CONNTRACK_SORT_COLUMNS]);
    expect(sort).toEqual(DEFAULT_CONNTRACK_SORT);
  });
});

describe('filtering', () => {
  const index = () => buildConntrackIndex(CASES, [DNS, WEB], NODE_IPS);

  it('keeps the selected Service: its VIP, its NodePort and its straight-to-endpoint entries', () => {
    const ix = index();
    const rows = rowsOf(ix, conntrackOrder(ix, query({ service: 'default/web' })));
    expect(rows.map((r) => r.via).sort()).toEqual(['endpoint', 'nodePort', 'nodePort', 'vip', 'vip', 'vip']);
    expect(rows.every((r) => r.service === 'default/web')).toBe(true);
    expect(conntrackOrder(ix, query({ service: 'default/nosuch' }))).toHaveLength(0);
  });

  it('matches every word, case-insensitively, against the NAT text, state, flags, Service and status', () => {
    const ix = index();
    const texts = (filter: string) => rowsOf(ix, conntrackOrder(ix, query({ filter }))).map((r) => r.nat.text);
    expect(texts('10.244.0.3:53')).toEqual(['10.244.0.9:51286 → 10.96.0.10:53 ⇒ 10.244.0.3:53']);
    // The / language is a regular expression: literal brackets are escaped.
    expect(texts('\\[unreplied\\]')).toEqual(['10.244.0.9:51286 → 10.96.12.34:80 ⇒ 10.96.12.34:80']);
    expect(texts('KUBE-DNS stale')).toEqual(['10.244.0.9:51286 → 10.96.0.10:53 ⇒ 10.244.0.3:53']);
    expect(texts('established snat')).toEqual([
      '10.244.0.9:51286 → 192.168.49.2:30080 ⇒ 10.244.0.31:8080 (SNAT as 192.168.49.2:61000)',
    ]);
    expect(texts('no-service icmp')).toEqual(['10.244.0.9 → 10.96.12.34 ⇒ 10.244.0.31']);
    expect(texts('nothing-like-this')).toEqual([]);
  });

  it('tests each word field by field exactly as a search of the whole row text would', () => {
    const ix = buildConntrackIndex(
      [...CASES, makeEntry({ mark: 16384, zone: 7, flags: ['ASSURED', 'OFFLOAD'] }), udp({ client: ['fd00::9', 4000], vip: ['fd00:10:96::a', 53], endpoint: ['fd00:244::3', 53], seenAs: ['fd00::1', 4001] })],
      [DNS, WEB],
      NODE_IPS,
    );
    const words = [
      'tcp', 'udp', 'icmp', 'time_wait', 'established', 'estab', ':', '34:8', '.0.3:5', '0.9:51286', '9:5128', '53', '8080', ':8080',
      '10.96.12.34:80', '12.34:80 ', ']:53', '[fd00', 'fd00::', 'fd00::9]:4000', ':4001', 'snat', '(snat', 'as', 'ip:port)', '61000)',
      '→', '⇒', 'mark=', 'mark=16384', 'zone=7', 'zone=0', '[assured]', 'offload]', '[unreplied', 'default/', 'kube-system/kube-dns',
      'stale', 'ok', 'no-service', 'service', 'web', 'x', '10.244', '244.0.2', '0:0', '::', '.', '1',
    ];
    let matched = 0;
    for (const w of words.map((x) => x.trim())) {
      const test = conntrackWordTest(ix, w);
      for (let i = 0; i < ix.entries.length; i++) {
        const expected = conntrackSearchText(ix, i).includes(w);
        expect(test(i), `${JSON.stringify(w)} in ${conntrackSearchText(ix, i)}`).toBe(expected);
        if (expected) matched++;
      }
    }
    expect(matched).toBeGreaterThan(words.length * 2);
  });

  it('refines the previous result as the filter grows, with the same rows as a fresh scan', () => {
    const ix = index();
    const typed = ['1', '10', '10.', '10.2', '10.24', '10.244.0.3', '10.244.0.3 u', '10.244.0.3 udp'].map((f) => [...conntrackOrder(ix, query({ filter: f }))]);
    const fresh = ['1', '10', '10.', '10.2', '10.24', '10.244.0.3', '10.244.0.3 u', '10.244.0.3 udp'].map((f) => {
      const other = index();
      return [...conntrackOrder(other, query({ filter: f }))];
    });
    expect(typed).toEqual(fresh);
    // and backspace (a shorter filter) scans again
    expect([...conntrackOrder(ix, query({ filter: '10' }))]).toEqual(fresh[1]);
  });
});

describe('timeouts count down between refreshes', () => {
  const live = (snapshot: NodeSnapshot): NodeSnapshot => ({ ...snapshot, meta: { ...snapshot.meta, source: { ...snapshot.meta.source, live: true } } });

  it('shows max(0, timeout − elapsed) on a live source, and the captured value in a replay', async () => {
    const replay = await snapshotOf('lab-iptables');
    const readAt = Date.parse(replay.conntrack!.probe!.startedAt);
    const liveView = conntrackView(live(replay), query({ sort: { column: 'timeout', descending: true } }));
    expect(liveView.readAt).toBe(readAt);
    const elapsed = conntrackElapsedSeconds(liveView, readAt + 30_500);
    expect(elapsed).toBe(30.5);
    const i = liveView.order[0]!;
    const timeout = liveView.index.entries[i]!.timeout!;
    expect(conntrackRow(liveView.index, i, elapsed).timeoutLeft).toBe(Math.floor(timeout - 30.5));
    expect(conntrackRow(liveView.index, i, timeout + 5).timeoutLeft).toBe(0);
    expect(conntrackElapsedSeconds(liveView, readAt - 1000)).toBe(0);
    const replayView = conntrackView(replay, query());
    expect(conntrackElapsedSeconds(replayView, readAt + 30_500)).toBe(0);
  });
});

describe('without a table', () => {
  it('says loading without a snapshot, and why there is no table when conntrack was not read', async () => {
    expect(conntrackView(null, query()).availability).toEqual({ kind: 'loading' });
    const snapshot = await snapshotOf('lab-iptables');
    const missing: NodeSnapshot = { ...snapshot, conntrack: { value: null, diagnostics: [], probe: snapshot.conntrack!.probe, error: 'conntrack is not installed on the node' } };
    const view = conntrackView(missing, query());
    expect(view.availability).toEqual({ kind: 'none', reason: 'conntrack is not installed on the node' });
    expect([view.order.length, view.summary.count, view.summary.max]).toEqual([0, snapshot.conntrackCount, snapshot.conntrackMax]);
    expect(conntrackView({ ...snapshot, conntrack: null }, query()).availability).toEqual({ kind: 'none', reason: null });
  });

  it('classifies nothing as a Service flow without API objects', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const view = conntrackView({ ...snapshot, api: null }, query());
    expect(view.index.servicesKnown).toBe(false);
    expect(new Set(rowsOf(view.index, view.order).map((r) => r.status))).toEqual(new Set(['no-service']));
  });
});

describe('a million entries', () => {
  it('classifies, sorts and filters a million of them, and the first rows shown point at the stale endpoint', () => {
    const n = 1_000_000;
    const tuple = (src: string, dst: string, sport: number, dport: number) => ({ src, dst, sport, dport });
    const endpoints = ['10.244.0.23', '10.244.0.31', '10.244.1.15', '10.244.0.77'];
    const entries: ConntrackEntry[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const client = `10.244.${(i >> 16) & 255}.${(i >> 8) & 255}`;
      const sport = 1024 + (i % 60000);
      const ep = endpoints[i % 4]!;
      entries[i] = {
        line: i + 1, raw: '', family: 'ipv4', proto: 'tcp', protoNum: 6, timeout: i % 120, state: 'TIME_WAIT',
        orig: tuple(client, '10.96.12.34', sport, 80), reply: tuple(ep, client, 8080, sport), flags: ['ASSURED'],
      };
    }
    const web = makeService({ endpoints: endpoints.slice(0, 3).map((ip) => ({ ip, port: 8080, protocol: 'TCP' as const })) });
    const index = buildConntrackIndex(entries, [web], []);
    expect(index.staleCount).toBe(n / 4);
    const order = sortedOrder(index, { column: 'endpoint', descending: true });
    expect(index.entries[order[0]!]!.reply.src).toBe('10.244.1.15');
    const stale = conntrackOrder(index, query({ sort: { column: 'endpoint', descending: true }, filter: 'stale' }));
    expect(stale).toHaveLength(n / 4);
    const rows = [...stale.subarray(0, 40)].map((i) => conntrackRow(index, i, 3));
    expect(rows.every((r) => r.pointsAt?.ip === '10.244.0.77')).toBe(true);
    // Speed is npm run bench's to measure (big-nodes section), not a timed test's.
  }, 120_000);
});

describe('show conntrack', () => {
  it('prints the stable JSON document, limited to a Service, with the stale entry and where it points', async () => {
    const snapshot = await snapshotWithMovedDnsEndpoint('lab-iptables');
    const doc = JSON.parse(showConntrack(snapshot, 'json', { service: 'kube-system/kube-dns' })) as {
      service: string;
      summary: Record<string, number | null>;
      entries: { line: number; proto: string; status: string; staleReason: string | null; pointsAt: unknown; service: unknown; orig: { packets: unknown; sport: number }; nat: { answeredBy: unknown }; raw: string }[];
      node: string;
    };
    const entries = snapshot.conntrack!.value!.entries;
    const dns = entries.filter((e) => e.orig.dst === '10.96.0.10');
    const moved = entries.filter((e) => e.reply.src === MOVED_DNS_ENDPOINT.from);
    expect(doc.node).toBe('lab-node');
    expect(doc.service).toBe('kube-system/kube-dns');
    expect(doc.summary).toEqual({
      shown: dns.length, total: entries.length, nfConntrackCount: snapshot.conntrackCount, nfConntrackMax: snapshot.conntrackMax,
      percent: (snapshot.conntrackCount! / snapshot.conntrackMax!) * 100, stale: moved.length, staleShown: moved.length, staleChecked: true,
    });
    expect(doc.entries.map((e) => e.line)).toEqual(dns.map((e) => e.line));
    expect(doc.entries.every((e) => e.proto === 'udp' && typeof e.orig.packets === 'string')).toBe(true);
    const stale = doc.entries.filter((e) => e.status === 'stale');
    expect(stale.map((e) => [e.orig.sport, e.staleReason, e.pointsAt, e.service])).toEqual(
      moved.map((e) => [e.orig.sport, 'endpoint-gone', { ip: MOVED_DNS_ENDPOINT.from, port: 53 }, { namespace: 'kube-system', name: 'kube-dns', via: 'vip' }]),
    );
    expect(stale.map((e) => e.raw)).toEqual(moved.map((e) => e.raw));
  });

  it('prints one line per entry as text, with the stale verdict under the stale ones', async () => {
    const snapshot = await snapshotWithMovedDnsEndpoint('lab-nftables');
    const text = showConntrack(snapshot, 'text');
    const entries = snapshot.conntrack!.value!.entries;
    expect(text).toContain(`${entries.length}/${entries.length} entries · nf_conntrack ${snapshot.conntrackCount}/${snapshot.conntrackMax}`);
    // The use in the pane's spelling: one decimal, `<0.1%` for a small table.
    expect(text).toMatch(new RegExp(`nf_conntrack ${snapshot.conntrackCount}/${snapshot.conntrackMax} \\((<0\\.1|\\d+\\.\\d)%\\) · `));
    const lines = text.split('\n');
    const nat = (e: ConntrackEntry) => conntrackRow(buildConntrackIndex([e], [], []), 0).nat.text;
    for (const e of entries) expect(lines.some((l) => l.includes(nat(e)))).toBe(true);
    const warnings = lines.filter((l) => l.startsWith('  ! '));
    expect(warnings).toEqual(entries.filter((e) => e.reply.src === MOVED_DNS_ENDPOINT.from).map(() => `  ! stale: points at ${MOVED_DNS_ENDPOINT.from}:53, not an endpoint of kube-system/kube-dns`));
    expect(warnings.length).toBeGreaterThan(0);
    const at = lines.indexOf(warnings[0]!);
    expect(lines[at - 1]).toMatch(/^udp - \d+ kube-system\/kube-dns 10\.244\.0\.9:\d+ → 10\.96\.0\.10:53 ⇒ 10\.244\.0\.3:53 mark=0$/);
  });

  it('refuses what it cannot show, saying what to do', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    expect(() => showConntrack(snapshot, 'json', { service: 'default/nosuch' })).toThrow(UserError);
    expect(() => showConntrack(snapshot, 'json', { service: 'web' })).toThrow(UserError);
    expect(() => showConntrack({ ...snapshot, api: null }, 'text', { service: 'default/web' })).toThrow(UserError);
    expect(() => showConntrack({ ...snapshot, conntrack: null }, 'text')).toThrow(UserError);
    expect(showConntrack({ ...snapshot, api: null }, 'text')).toContain('! no API objects');
  });
});

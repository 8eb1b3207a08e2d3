import React from 'react';
import { describe, expect, it } from 'vitest';
import {
  buildConntrackIndex,
  conntrackRow,
  conntrackView,
  DEFAULT_CONNTRACK_SORT,
  type ConntrackIndex,
  type ConntrackQuery,
  type ConntrackView,
} from '../../src/analysis/conntrack-view.js';
import type { ConntrackEntry } from '../../src/model/conntrack.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { formatConntrackEntry } from '../../src/parsers/conntrack.js';
import type { Lang } from '../../src/text/i18n.js';
import { ConntrackPane } from '../../src/ui/panes/ConntrackPane.js';
import { cellWidth } from '../../src/text/cells.js';
import { MOVED_DNS_ENDPOINT, snapshotWithMovedDnsEndpoint } from '../helpers/conntrack-fixtures.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';
import { makeEntry } from '../unit/conntrack-builders.js';

const HEIGHT = 22;

function query(over: Partial<ConntrackQuery> = {}): ConntrackQuery {
  return { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null, ...over };
}

function pane(data: ConntrackView, width: number, over: { cursor?: number; elapsed?: number; lang?: Lang; height?: number } = {}) {
  return (
    <ConntrackPane data={data} elapsedSeconds={over.elapsed ?? 0} cursor={over.cursor ?? 0} width={width} height={over.height ?? HEIGHT} focused lang={over.lang ?? 'en'} />
  );
}

function frameOf(data: ConntrackView, width: number, over: Parameters<typeof pane>[2] = {}): string {
  const r = renderAt(pane(data, width, over), width);
  const frame = r.frame();
  r.unmount();
  return frame;
}

function expectWithin(frame: string, width: number): void {
  for (const line of frame.split('\n')) expect(cellWidth(line), line).toBeLessThanOrEqual(width);
}

describe('Conntrack pane on a Cilium node with socket LB', () => {
  it("gives flows made straight to a Service's endpoint (no NAT in conntrack) to that Service, and says why", async () => {
    const snapshot = await snapshotOf('lab-cilium');
    const data = conntrackView(snapshot, query({ service: 'default/web' }));
    expect(data.order.length).toBeGreaterThan(0);
    const first = conntrackRow(data.index, data.order[0]!);
    expect([first.service, first.via, first.status, first.nat.dnat]).toEqual(['default/web', 'endpoint', 'ok', false]);
    const frame = frameOf(data, 120);
    expect(frame).toContain(`default/web: straight to its endpoint ${first.nat.destination.ip}:${first.nat.destination.port}, no NAT (Cilium socket LB, or the Pod dialled)`);
  });
});

describe.each(FRAME_WIDTHS)('Conntrack pane at %i columns', (width) => {
  it.each(['lab-iptables', 'lab-nftables'])('shows every entry of %s with its NAT view, the summary and the selected raw line', async (name) => {
    const snapshot = await snapshotOf(name);
    const data = conntrackView(snapshot, query());
    const frame = frameOf(data, width);
    const entries = snapshot.conntrack!.value!.entries;
    expect(frame.split('\n')[0]).toContain(`${entries.length}/${entries.length} entries · sort service↑ · nf_conntrack ${snapshot.conntrackCount}/${snapshot.conntrackMax} (<0.1%) · 0 stale`);
    const first = conntrackRow(data.index, data.order[0]!);
    // Every table line shows its entry's VIP and endpoint whole, its Service (the sorted column),
    // and the whole NAT view unless an SNAT note makes it too long (outside client → NodePort).
    const lines = frame.split('\n');
    const table = lines.slice(2, lines.findIndex((l, k) => k >= 2 && !l.includes('⇒')));
    expect(table.length).toBeGreaterThan(Math.min(entries.length, 8));
    table.forEach((line, k) => {
      const r = conntrackRow(data.index, data.order[k]!);
      expect(line).toContain(`${r.nat.destination.ip}:${r.nat.destination.port} ⇒ ${r.nat.answeredBy.ip}:${r.nat.answeredBy.port}`);
      if (!r.nat.snat) expect(line).toContain(r.nat.text);
      expect(line).toContain(r.service!.length <= 11 ? r.service! : r.service!.slice(-6));
      expect(line).toContain(` ${r.entry.timeout} `);
    });
    expect(frame).toContain(first.nat.snat && width < 100 ? `SNAT as ${first.nat.clientAsSeen.ip}:${first.nat.clientAsSeen.port} · tcp` : first.nat.text);
    expect(frame).toContain(`${first.service} via ${first.via === 'nodePort' ? 'NodePort' : 'VIP'}: answered by a current endpoint`);
    expect(frame).toContain(first.entry.raw.slice(0, width));
    expect(frame).not.toMatch(/stale:/);
    expectWithin(frame, width);
    expect(frame).toMatchSnapshot();
  });

  it('marks the entry that points at a moved kube-dns endpoint as stale and says where it points', async () => {
    const snapshot = await snapshotWithMovedDnsEndpoint('lab-iptables');
    const data = conntrackView(snapshot, query({ sort: { column: 'endpoint', descending: true } }));
    const rows = [...data.order].map((i) => conntrackRow(data.index, i));
    const at = rows.findIndex((r) => r.status === 'stale');
    expect(rows[at]?.pointsAt).toEqual({ ip: MOVED_DNS_ENDPOINT.from, port: 53 });
    const frame = frameOf(data, width, { cursor: at });
    expect(frame).toContain(`stale: points at ${MOVED_DNS_ENDPOINT.from}:53, not an endpoint of kube-system/kube-dns`);
    expect(frame.split('\n')[0]).toContain(`${rows.filter((r) => r.status === 'stale').length} stale`);
    const staleLine = frame.split('\n').find((l) => l.includes(`⇒ ${MOVED_DNS_ENDPOINT.from}:53`) && !l.includes('stale:'));
    expect(staleLine).toMatch(width < 100 ? /^! udp/ : /^stale\s+udp/);
    expectWithin(frame, width);
    expect(frame).toMatchSnapshot();
  });

  it('limits the rows to the selected Service and says so', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const data = conntrackView(snapshot, query({ service: 'kube-system/kube-dns' }));
    const frame = frameOf(data, width);
    expect(frame.split('\n')[0]).toMatch(/^Service kube-system\/kube-dns · \d+\/16 entries/);
    expect(frame).not.toContain('10.96.12.34:80');
    expect(frame).toContain('→ 10.96.0.10:53 ⇒');
    const none = frameOf(conntrackView(snapshot, query({ service: 'default/empty' })), width);
    expect(none).toContain('no conntrack entries for default/empty');
    const unknown = frameOf(conntrackView(snapshot, query({ service: 'default/gone' })), width);
    expect(unknown).toContain('default/gone is not among the API objects');
  });
});

describe('Conntrack pane behaviour', () => {
  it('counts timeouts down as time passes since the table was read', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const data = conntrackView(snapshot, query({ sort: { column: 'timeout', descending: true } }));
    const top = data.index.entries[data.order[0]!]!.timeout!;
    const r = renderAt(pane(data, 80), 80);
    expect(r.frame()).toContain(`timeout ${top}s`);
    expect(r.rerender(pane(data, 80, { elapsed: 7.2 }))).toContain(`timeout ${top - 8}s`);
    expect(r.rerender(pane(data, 80, { elapsed: top + 60 }))).toMatch(/TIME_WAIT\s+0 /);
    r.unmount();
  });

  it('keeps the cursor row in view and shows its raw line', async () => {
    const snapshot = await snapshotOf('lab-nftables');
    const data = conntrackView(snapshot, query());
    const last = data.order.length - 1;
    const row = conntrackRow(data.index, data.order[last]!);
    const frame = frameOf(data, 120, { cursor: last, height: 14 });
    expect(frame).toContain(row.nat.text);
    expect(frame).toContain(row.entry.raw.slice(0, 120));
    expect(frame).toContain(`line ${row.entry.line}`);
    expect(frame.split('\n').length).toBeLessThanOrEqual(14);
  });

  it('renders in Japanese', async () => {
    const snapshot = await snapshotWithMovedDnsEndpoint('lab-nftables');
    const data = conntrackView(snapshot, query({ filter: 'stale' }));
    const frame = frameOf(data, 120, { lang: 'ja' });
    expect(frame).toContain(`古いエントリ: 宛先 ${MOVED_DNS_ENDPOINT.from}:53 は kube-system/kube-dns のエンドポイントではありません`);
    expect(frame).toContain('プロト');
    expectWithin(frame, 120);
  });

  it('says why there is no table', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const failed: NodeSnapshot = { ...snapshot, conntrack: { value: null, diagnostics: [], probe: null, error: 'exit code 1: Operation not permitted' } };
    expect(frameOf(conntrackView(failed, query()), 80)).toContain('failed: exit code 1: Operation not permitted');
    expect(frameOf(conntrackView({ ...snapshot, conntrack: null }, query()), 80)).toContain('conntrack was not captured on this node');
    expect(frameOf(conntrackView(null, query()), 80)).toContain('loading…');
    expect(frameOf(conntrackView({ ...snapshot, api: null }, query()), 80)).toContain('no API objects: entries are not matched to Services');
  });

  it('renders a million entries reading a screenful of rows, not the table', () => {
    const n = 1_000_000;
    const base = makeEntry();
    const entries: ConntrackEntry[] = new Array(n);
    for (let i = 0; i < n; i++) entries[i] = { ...base, line: i + 1, orig: { ...base.orig, sport: 1024 + (i % 60000) } };
    entries[n - 1] = { ...base, line: n, raw: formatConntrackEntry(base, 'conntrack') };
    const built = buildConntrackIndex(entries, [], [], true);
    // Work is counted, not timed: every read of a row (an entry or one of its fields), and
    // any read of the whole entries array. An O(n) render path reads a million rows.
    let rowReads = 0;
    let entriesRead = false;
    const rows = new Proxy(built.rows, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          rowReads++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const index: ConntrackIndex = Object.defineProperties({ ...built, rows } as ConntrackIndex, {
      entries: { get: () => ((entriesRead = true), entries) },
    });
    const all = new Uint32Array(n).map((_, i) => i);
    const data: ConntrackView = {
      availability: { kind: 'table' }, source: 'netfilter', index, order: all, query: query(), scope: null,
      summary: { shown: n, total: n, count: n, max: 1_048_576, percent: (n / 1_048_576) * 100, stale: 0, staleShown: 0, staleChecked: true },
      readAt: null, live: false, error: null, diagnostics: [],
    };
    const frame = frameOf(data, 120, { cursor: n - 1 });
    expect(frame.split('\n')[0]).toContain('1000000/1000000 entries · sort service↑ · nf_conntrack 1000000/1048576 (95.4%)');
    expect(frame).toContain(`line ${n}`);
    expect(frame).toContain(base.orig.src);
    // The rows on screen (and the selected one's detail) were read: some, a few dozen at most.
    expect(rowReads).toBeGreaterThan(0);
    expect(rowReads).toBeLessThan(1000);
    expect(entriesRead).toBe(false);
  }, 60_000);
});

describe.each(FRAME_WIDTHS)('Conntrack pane keeps the column it is sorted by at %i columns', (width) => {
  const header = (frame: string) => frame.split('\n')[1]!;

  it.each(['en', 'ja'] as const)('shows the Service column under the default `sort service↑`, and the packets under a packet sort (%s)', async (lang) => {
    const snapshot = await snapshotOf('lab-cilium');
    const service = lang === 'en' ? 'SERVICE' : 'サービス';
    const byService = frameOf(conntrackView(snapshot, query()), width, { lang });
    expect(byService.split('\n')[0]).toContain(lang === 'en' ? 'sort service↑' : '並び順 service↑');
    expect(header(byService)).toContain(service);
    // The client, VIP and endpoint stay whole beside it; at 80 columns the state gives up its
    // column (the selected entry's line below says it).
    expect(byService).toMatch(/ 114 default\/web +10\.244\.0\.9(:\d+)? → 10\.244\.0\.23:8080 ⇒ 10\.244\.0\.23:8080/);
    expect(byService).toContain('tcp TIME_WAIT · ');
    expect(header(byService).includes(lang === 'en' ? 'STATE' : '状態')).toBe(width >= 100);
    expectWithin(byService, width);
    expect(byService).toMatchSnapshot();
    const byPackets = frameOf(conntrackView(snapshot, query({ sort: { column: 'packets', descending: true } })), width, { lang });
    expect(header(byPackets)).toContain(lang === 'en' ? 'PKTS' : 'パケット');
    expect(byPackets).toMatch(/10\.244\.0\.23:8080 +10$/m);
    expectWithin(byPackets, width);
    // Sorted by a column the narrow layout has anyway, it adds neither.
    const byState = header(frameOf(conntrackView(snapshot, query({ sort: { column: 'state', descending: false } })), width, { lang }));
    if (width < 100) expect(byState).not.toContain(service);
  });
});

/**
 * `conntrack -E` event streams: recognised by their tags (in the table probe's output) and
 * by the probe that produced them (`conntrack-events`), shown as events of flows, never
 * merged into the table; a bundle may hold both.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { conntrackEventFlows } from '../../src/analysis/conntrack-events.js';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { showConntrack } from '../../src/report/conntrack.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';

function run(id: string, stdout: string, status: ProbeRun['status'] = 'ok'): ProbeRun {
  return { id, argv: [id], status, result: { argv: [id], stdout, stderr: '', exitCode: status === 'ok' ? 0 : null, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 5000 } };
}
const snapshotWith = (runs: ProbeRun[]) => buildSnapshot({ runs, source: { kind: 'replay', label: 't', live: false }, capturedAt: '2026-01-01T00:00:00.000Z' });

// One TCP connection's life as `conntrack -E -o timestamp` prints it (conntrack-tools 1.4.7:
// the tag right-aligned to 9 columns, the timestamp first), plus the summary on stderr.
const tuple = 'src=10.244.1.5 dst=10.96.0.10 sport=41234 dport=53';
const reply = 'src=10.244.2.7 dst=10.244.1.5 sport=53 dport=41234';
const oneFlow = [
  `[1767225600.100000]\t    [NEW] tcp      6 120 SYN_SENT ${tuple} [UNREPLIED] ${reply}`,
  `[1767225600.100400]\t [UPDATE] tcp      6 60 SYN_RECV ${tuple} ${reply}`,
  `[1767225600.100900]\t[DESTROY] tcp      6 ${tuple} ${reply} [ASSURED]`,
  'conntrack v1.4.7 (conntrack-tools): 3 flow events have been shown.',
  '',
].join('\n');

const tableLine = 'tcp      6 86399 ESTABLISHED src=10.244.1.9 dst=10.96.12.34 sport=50000 dport=80 src=10.244.2.3 dst=10.244.1.9 sport=8080 dport=50000 [ASSURED] mark=0 secctx=system_u:object_r:unlabeled_t:s0 zone=3 use=1';

describe('conntrack -E events', () => {
  it('one flow with NEW/UPDATE/DESTROY is one flow with three events, not three live flows', () => {
    const r = parseConntrack(oneFlow, 'conntrack');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.entries).toEqual([]);
    const flows = conntrackEventFlows(r.value.events!);
    expect(flows).toHaveLength(1);
    expect(flows[0]!.events.map((e) => [e.type, e.time])).toEqual([
      ['NEW', '1767225600.100000'],
      ['UPDATE', '1767225600.100400'],
      ['DESTROY', '1767225600.100900'],
    ]);
    expect(flows[0]!.ended).toBe(true);
    expect(r.value.reportedEvents).toBe(3);
  });

  it('puts events in time order, and a NEW after a DESTROY of the same tuple starts a second flow', () => {
    const lines = oneFlow.split('\n').slice(0, 3);
    const again = `[1767225601.000000]\t    [NEW] tcp      6 120 SYN_SENT ${tuple} [UNREPLIED] ${reply}`;
    const r = parseConntrack([lines[2], again, lines[0], lines[1]].join('\n'), 'conntrack');
    const flows = conntrackEventFlows(r.value.events!);
    expect(flows.map((f) => [f.flow, f.events.map((e) => e.type).join(','), f.ended])).toEqual([
      [1, 'NEW,UPDATE,DESTROY', true],
      [2, 'NEW', false],
    ]);
  });

  it('a bundle with both the table and the events probe keeps them apart; show conntrack prints the flow and its events', () => {
    const snapshot = snapshotWith([run('conntrack', `${tableLine}\n`), run('conntrack-events', oneFlow, 'timeout')]);
    const ct = snapshot.conntrack!;
    expect(ct.value!.entries).toHaveLength(1);
    expect(ct.value!.events).toHaveLength(3);
    expect(ct.error).toBeNull(); // the events probe ends by its timeout: that is not a failure
    const doc = JSON.parse(showConntrack(snapshot, 'json')) as {
      summary: { total: number | null };
      entries: { secctx: string | null; zone: number | null; labels: string[] | null }[];
      events: { flow: number; type: string; time: string; entry: { state: string | null } }[];
      eventFlows: { flow: number; ended: boolean; events: number }[];
      reportedEvents: number | null;
    };
    expect(doc.summary.total).toBe(1);
    // every parsed field reaches -o json
    expect(doc.entries[0]).toMatchObject({ secctx: 'system_u:object_r:unlabeled_t:s0', zone: 3, labels: null });
    expect(doc.events.map((e) => [e.flow, e.type, e.entry.state])).toEqual([
      [1, 'NEW', 'SYN_SENT'],
      [1, 'UPDATE', 'SYN_RECV'],
      [1, 'DESTROY', null],
    ]);
    expect(doc.eventFlows).toEqual([expect.objectContaining({ flow: 1, ended: true, events: 3 })]);
    expect(doc.reportedEvents).toBe(3);
    const text = showConntrack(snapshot, 'text');
    expect(text).toContain('1/1 entries');
    expect(text).toContain('events (conntrack -E): 3 events of 1 flows (conntrack reported 3) — not part of the table');
    expect(text).toContain('flow 1 tcp 10.244.1.5:41234 → 10.96.0.10:53 (destroyed)');
    expect(text).toContain('  1767225600.100400 UPDATE SYN_RECV 60');
  });

  it('events captured as the table probe: the table is not read (unknown, never 0 entries)', () => {
    const snapshot = snapshotWith([run('conntrack', oneFlow)]);
    const doc = JSON.parse(showConntrack(snapshot, 'json')) as { summary: { total: number | null; shown: number }; entries: unknown[]; eventFlows: unknown[] };
    expect(doc.summary.total).toBeNull();
    expect(doc.entries).toEqual([]);
    expect(doc.eventFlows).toHaveLength(1);
    expect(showConntrack(snapshot, 'text')).toContain('table: not read (the capture holds conntrack -E events only; conntrack -L would read it)');
  });

  it('a table line in the events probe is reported, not added to the table', () => {
    const snapshot = snapshotWith([run('conntrack-events', `${oneFlow}${tableLine}\n`, 'timeout')]);
    const ct = snapshot.conntrack!;
    expect(ct.value!.entries).toEqual([]);
    expect(ct.diagnostics.map((d) => d.code)).toContain('not-an-event');
    expect(ct.error).toMatch(/conntrack table not read/);
  });

  const corpus = path.resolve(__dirname, '../../../shared/corpus/conntrack/conntrack-E-events-syn-recv.txt');
  const corpusReason = existsSync(corpus) ? '' : `no ${corpus}: the shared corpus is not on this machine`;
  if (corpusReason) console.warn(`skipped: ${corpusReason}`);
  it.skipIf(corpusReason !== '')('the real conntrack -E capture (conntrack-tools 1.4.4): one flow, three events, still live', () => {
    const r = parseConntrack(readFileSync(corpus, 'utf8'), 'corpus');
    expect(r.value.entries).toEqual([]);
    const flows = conntrackEventFlows(r.value.events!);
    expect(flows).toHaveLength(1);
    expect(flows[0]!.events.map((e) => e.type)).toEqual(['NEW', 'UPDATE', 'UPDATE']);
    expect(flows[0]!.ended).toBe(false);
  });
});

describe('the Conntrack pane summary with events', () => {
  it('counts events and flows apart from the table, and says the table was not read when only events were', async () => {
    const { conntrackView, DEFAULT_CONNTRACK_SORT } = await import('../../src/analysis/conntrack-view.js');
    const defaultConntrackQuery = () => ({ sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    const { conntrackSummaryLine } = await import('../../src/ui/panes/ConntrackPane.js');
    const both = conntrackView(snapshotWith([run('conntrack', `${tableLine}\n`), run('conntrack-events', oneFlow, 'timeout')]), defaultConntrackQuery());
    expect(conntrackSummaryLine(both, 'en')).toContain('1/1 entries · sort service↑ · 3 events of 1 flows (conntrack -E; show conntrack lists them)');
    const only = conntrackView(snapshotWith([run('conntrack', oneFlow)]), defaultConntrackQuery());
    expect(conntrackSummaryLine(only, 'en')).toContain('table not read (events only) · sort service↑ · 3 events of 1 flows');
    expect(conntrackSummaryLine(only, 'en')).not.toContain('0/0');
  });
});

/**
 * A bundle that holds both `conntrack -L` (probes/conntrack.stdout) and a `conntrack -E`
 * capture (probes/conntrack-events.stdout): a replay reads both, through the real bundled
 * binary (`show conntrack`) and through the TUI's session (the Conntrack pane's summary).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conntrackView, DEFAULT_CONNTRACK_SORT } from '../../src/analysis/conntrack-view.js';
import { packageRoot } from '../../src/paths.js';
import { loadSnapshot, onDemandProbeIds, Session } from '../../src/collect/session.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { conntrackSummaryLine } from '../../src/ui/panes/ConntrackPane.js';

const bin = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const tuple = 'src=10.244.1.5 dst=10.96.0.10 sport=41234 dport=53';
const reply = 'src=10.244.2.7 dst=10.244.1.5 sport=53 dport=41234';
// conntrack-tools 1.4.7 `conntrack -E -o timestamp`: tags right-aligned, the summary last.
const events = [
  `[1767225600.100000]\t    [NEW] tcp      6 120 SYN_SENT ${tuple} [UNREPLIED] ${reply}`,
  `[1767225600.100400]\t [UPDATE] tcp      6 60 SYN_RECV ${tuple} ${reply}`,
  `[1767225600.100900]\t[DESTROY] tcp      6 ${tuple} ${reply} [ASSURED]`,
  'conntrack v1.4.7 (conntrack-tools): 3 flow events have been shown.',
  '',
].join('\n');
const table = 'tcp      6 86399 ESTABLISHED src=10.244.1.9 dst=10.96.12.34 sport=50000 dport=80 src=10.244.2.3 dst=10.244.1.9 sport=8080 dport=50000 [ASSURED] mark=0 use=1\n';

function run(id: string, stdout: string, status: ProbeRun['status'] = 'ok'): ProbeRun {
  const argv = probe(id).argv;
  return { id, argv, status, result: { argv, stdout, stderr: '', exitCode: status === 'ok' ? 0 : null, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 5000 } };
}

let dir = '';
let tableOnly = '';
beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run build\``);
  const base = { capturedAt: '2026-01-01T00:00:00.000Z', nodescopeVersion: 'test', node: 'node-a', source: { kind: 'local' as const, label: 'local' }, toolVersions: {} };
  dir = mkdtempSync(path.join(os.tmpdir(), 'ns-ct-events-'));
  writeBundle(dir, { ...base, runs: [run('conntrack', table), run('conntrack-events', events, 'timeout')] });
  tableOnly = mkdtempSync(path.join(os.tmpdir(), 'ns-ct-table-'));
  writeBundle(tableOnly, { ...base, runs: [run('conntrack', table)] });
});
afterAll(() => {
  for (const d of [dir, tableOnly]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('conntrack events in a bundle, on replay', () => {
  it('show conntrack -o json --replay DIR (the bundled binary): one flow in the table, the three events apart', () => {
    const r = spawnSync(process.execPath, [bin, 'show', 'conntrack', '-o', 'json', '--replay', dir], { encoding: 'utf8', input: '' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const doc = JSON.parse(r.stdout) as { summary: { total: number | null }; entries: unknown[]; events: { flow: number; type: string }[]; eventFlows: { flow: number; ended: boolean; events: number }[] };
    expect(doc.summary.total).toBe(1);
    expect(doc.entries).toHaveLength(1);
    expect(doc.events.map((e) => [e.flow, e.type])).toEqual([
      [1, 'NEW'],
      [1, 'UPDATE'],
      [1, 'DESTROY'],
    ]);
    expect(doc.eventFlows).toEqual([expect.objectContaining({ flow: 1, ended: true, events: 3 })]);
    const text = spawnSync(process.execPath, [bin, 'show', 'conntrack', '--replay', dir], { encoding: 'utf8', input: '' }).stdout;
    expect(text).toContain('events (conntrack -E): 3 events of 1 flows');
  });

  it('the TUI session (staged load) reads the events part too: the Conntrack pane summary counts them', async () => {
    const session = new Session({ transport: new ReplayTransport(dir), live: false });
    await session.start();
    const snapshot = session.getState().snapshot!;
    expect(snapshot.conntrack!.value!.entries).toHaveLength(1);
    expect(snapshot.conntrack!.value!.events).toHaveLength(3);
    const view = conntrackView(snapshot, { sort: DEFAULT_CONNTRACK_SORT, filter: '', service: null });
    expect(conntrackSummaryLine(view, 'en')).toContain('1/1 entries · sort service↑ · 3 events of 1 flows');
    await session.stop();
  });

  it('a bundle without the events probe reads no events and asks for no on-demand probe (no "not in this capture" run)', async () => {
    const transport = new ReplayTransport(tableOnly);
    expect(onDemandProbeIds({ transport })).toEqual([]);
    const { snapshot, runs } = await loadSnapshot({ transport, live: false });
    expect(runs.map((r) => r.id)).not.toContain('conntrack-events');
    expect(snapshot.conntrack!.value!.events).toBeUndefined();
    expect(onDemandProbeIds({ transport: new ReplayTransport(dir) })).toEqual(['conntrack-events']);
  });
});

/**
 * The projector dashboard (`nodescope dash`, blessed-contrib).
 *
 * - Its numbers, pure: per-endpoint totals equal the KUBE-SEP DNAT counters (iptables) or
 *   the conntrack entries each endpoint answered (nftables); rates come from successive
 *   samples; a counter that goes backwards restarts instead of going negative.
 * - The real binary in tmux on a capture: a replay says it has one snapshot and shows totals.
 * - The real binary in tmux on the node lab (live, iptables mode): while the lab sends
 *   HTTP to web's ClusterIP in a loop, two screen captures a few seconds apart show the
 *   endpoint totals growing, with non-zero rates.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countByReplySource } from '../../src/analysis/conntrack-nat.js';
import { dashSample, DashHistory, HISTORY_POINTS, type DashSample } from '../../src/dash/series.js';
import { packageRoot } from '../../src/paths.js';
import { labAvailable } from '../helpers/lab.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { newTmuxSession } from '../helpers/tmux.js';
import { labDown, labUp, sendHttp } from './lab.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const PREFIX = 'nsdash-';
const tmux = (...args: string[]) => spawnSync('tmux', args, { encoding: 'utf8' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sessions: string[] = [];

function tmuxAvailable(): boolean {
  const ok = spawnSync('tmux', ['-V']).status === 0;
  if (!ok && process.env.NODESCOPE_REQUIRE_LAB === '1') throw new Error('tmux is required for the dashboard test');
  if (!ok) console.warn('skipping the dashboard tmux tests: tmux is not installed');
  if (ok && !existsSync(binary)) throw new Error(`${binary} is missing: run \`npm run build\` (npm test does)`);
  return ok;
}

/** Starts `nodescope dash ARGS` in a new tmux session (then the shell words `after`); returns a screen reader. */
function startDash(name: string, args: string, after = ''): () => string {
  const session = `${name}-${process.pid}`;
  sessions.push(session);
  const started = newTmuxSession(session, 120, 36, `LANG=C.UTF-8 node ${binary} dash ${args} --lang en${after}`);
  expect(started.status).toBe(0);
  return () => tmux('capture-pane', '-p', '-t', session).stdout;
}

async function waitFor(screen: () => string, test: (s: string) => boolean, what: string, ms = 20_000): Promise<string> {
  for (let waited = 0; waited < ms; waited += 100) {
    const s = screen();
    if (test(s)) return s;
    await sleep(100);
  }
  throw new Error(`screen never showed ${what}:\n${screen()}`);
}

/** The endpoint table rows of a screen: endpoint → {rate, total} (rate null when shown as `-`). */
function tableRows(screen: string): Map<string, { rate: number | null; total: number }> {
  const rows = new Map<string, { rate: number | null; total: number }>();
  for (const m of screen.matchAll(/│(\d+\.\d+\.\d+\.\d+:\d+)\s+(-|\d+\.\d)\s+(\d+)│/g)) rows.set(m[1]!, { rate: m[2] === '-' ? null : Number(m[2]), total: Number(m[3]) });
  return rows;
}

afterAll(async () => {
  for (const s of sessions) tmux('kill-session', '-t', s);
  if (labOk) await labDown({ prefix: PREFIX });
});

/** A sample of web with endpoint totals and flows changed. */
function sample(at: number, totals: Record<string, number>, flows: Record<string, string[]> = {}, kind: DashSample['kind'] = 'dnat-packets'): DashSample {
  return {
    at,
    mode: kind === 'dnat-packets' ? 'iptables' : 'nftables',
    kind,
    serviceFound: true,
    endpoints: Object.entries(totals).map(([endpoint, total]) => ({ endpoint, total, flows: flows[endpoint] ?? [] })),
    conntrackCount: null,
    conntrackMax: null,
    lbMaps: [],
  };
}

describe('dashboard numbers', () => {
  it('iptables capture: per-endpoint totals are the DNAT counters of web\'s KUBE-SEP chains', async () => {
    const s = dashSample(await snapshotOf('lab-iptables'), 'default/web', 0);
    expect(s.kind).toBe('dnat-packets');
    const dnat = new Map<string, number>();
    for (const m of s.endpoints) expect(m.endpoint).toMatch(/^10\.244\.\d+\.\d+:8080$/);
    // the capture's own iptables-save text, read with a plain expression
    const text = (await import('node:fs')).readFileSync(path.join(fixtureDir('lab-iptables'), 'probes', 'iptables-save.stdout'), 'utf8');
    for (const m of text.matchAll(/^\[(\d+):\d+\] -A KUBE-SEP-\S+ .*"default\/web:http".* -j DNAT --to-destination (\S+)$/gm)) dnat.set(m[2]!, Number(m[1]));
    expect(new Map(s.endpoints.map((e) => [e.endpoint, e.total]))).toEqual(dnat);
    expect(s.conntrackMax).toBeGreaterThan(0);
  });

  it('nftables capture: per-endpoint totals are the conntrack entries each endpoint answered', async () => {
    const snap = await snapshotOf('lab-nftables');
    const s = dashSample(snap, 'default/web', 0);
    expect(s.kind).toBe('conntrack-flows');
    const replies = countByReplySource(snap.conntrack!.value!.entries);
    for (const e of s.endpoints) expect(e.total, e.endpoint).toBe(replies.get(`TCP ${e.endpoint.replace(':', ' ')}`) ?? 0);
    expect(s.endpoints.reduce((n, e) => n + e.total, 0)).toBeGreaterThan(0);
  });

  it('Cilium capture: no per-endpoint counter, but the LB map fill against 65,536 entries', async () => {
    const s = dashSample(await snapshotOf('lab-cilium'), 'default/web', 0);
    expect(s.kind).toBe('none');
    expect(s.lbMaps[0]).toMatchObject({ map: 'cilium_lb4_services_v2', max: 65_536 });
    expect(s.lbMaps[0]!.entries).toBeGreaterThan(0);
  });

  it('rates are differences per second; a counter that went backwards restarts at 0', () => {
    const h = DashHistory.empty().add(sample(0, { a: 10 })).add(sample(2000, { a: 16 })).add(sample(3000, { a: 2 }));
    expect(h.endpointSeries()).toEqual([{ endpoint: 'a', rates: [3, 0], total: 2 }]);
    expect(h.hasRates()).toBe(true);
  });

  it('conntrack rates count the flows that appeared, not the entries that stayed', () => {
    const h = DashHistory.empty()
      .add(sample(0, { a: 2 }, { a: ['f1', 'f2'] }, 'conntrack-flows'))
      .add(sample(1000, { a: 3 }, { a: ['f2', 'f3', 'f4'] }, 'conntrack-flows'));
    expect(h.endpointSeries()[0]!.rates).toEqual([2]);
  });

  it('one sample has no rates (a replay), and history keeps at most the chart width of points', () => {
    expect(DashHistory.empty().add(sample(0, { a: 1 })).hasRates()).toBe(false);
    let h = DashHistory.empty();
    for (let i = 0; i < HISTORY_POINTS + 10; i++) h = h.add(sample(i * 1000, { a: i }));
    expect(h.endpointSeries()[0]!.rates).toHaveLength(HISTORY_POINTS);
    expect(h.samples).toHaveLength(HISTORY_POINTS);
  });
});

const haveTmux = tmuxAvailable();
const labOk = haveTmux && labAvailable(['iptables-save', 'conntrack', 'curl']);

describe.runIf(haveTmux)('nodescope dash in tmux on a capture', () => {
  it('says a replay has one snapshot and shows the totals, not rates', async () => {
    const screen = startDash('nodescope-dash-replay', `--replay ${fixtureDir('lab-iptables')} --service default/web`);
    const s = await waitFor(screen, (x) => x.includes('replay: one snapshot') && tableRows(x).size === 3, 'the replay notice and three endpoints');
    const rows = tableRows(s);
    const expected = dashSample(await snapshotOf('lab-iptables'), 'default/web', 0).endpoints;
    for (const e of expected) expect(rows.get(e.endpoint)).toEqual({ rate: null, total: e.total });
    // The source's kind once; the use as the Conntrack pane rounds it; no LB gauge off Cilium.
    // The folder is cut in its middle when the line is short of room (a long checkout path): its end names the capture.
    const folder = fixtureDir('lab-iptables');
    const shownFolder = new RegExp(`replay (\\S+) · mode iptables`).exec(s)?.[1] ?? '';
    expect(shownFolder.endsWith('fixtures/lab-iptables')).toBe(true);
    expect(shownFolder === folder || shownFolder.includes('…')).toBe(true);
    expect(s).toContain('keys: q quit · ? help');
    expect(s).not.toContain('replay replay:');
    expect(s).toMatch(/conntrack table: \d+ of \d+ \((<0\.1|\d+\.\d)%\)/);
    expect(s).not.toMatch(/LB map/);
  });

  it('says a Service the capture does not have is not there, with the closest names, and opens no screen', async () => {
    const screen = startDash('nodescope-dash-nope', `--replay ${fixtureDir('lab-iptables')} --service default/nope`, '; echo EXIT=$?; sleep 60');
    const s = await waitFor(screen, (x) => x.includes('EXIT='), 'the command ending');
    expect(s).toContain('nodescope: no Service default/nope in the API objects');
    expect(s).toMatch(/try: one of .*default\/web/);
    expect(s).toContain('EXIT=1');
    expect(s).not.toContain('nodescope dash ·');
  });

  it('on a Cilium capture shows the LB map fill with its percentage', async () => {
    const screen = startDash('nodescope-dash-cilium', `--replay ${fixtureDir('lab-cilium')} --service default/web`);
    const s = await waitFor(screen, (x) => x.includes('LB map cilium_lb4_services_v2'), 'the LB map gauge');
    expect(s).toMatch(/LB map cilium_lb4_services_v2: \d+ of 65536 \((<0\.1|\d+\.\d)%\)/);
  });
});

describe.runIf(labOk)('nodescope dash in tmux on the live node lab', () => {
  it('shows web\'s endpoint rates moving while the lab sends HTTP to its ClusterIP', { timeout: 120_000 }, async () => {
    const lab = await labUp('iptables', { prefix: PREFIX });
    const screen = startDash('nodescope-dash-live', `--netns ${lab.names.node} --api-file ${lab.apiObjectsPath} --service default/web --interval 1`);
    await waitFor(screen, (x) => x.includes('mode iptables') && tableRows(x).size === 3, 'three endpoints of web');
    let sending = true;
    const traffic = (async () => {
      let sent = 0;
      while (sending) {
        const tally = await sendHttp(lab.podNs('client'), 'http://10.96.12.34/', 6);
        sent += 6 - tally.failures;
      }
      return sent;
    })();
    const sumOf = (rows: ReturnType<typeof tableRows>) => [...rows.values()].reduce((n, r) => n + r.total, 0);
    const first = await waitFor(screen, (x) => sumOf(tableRows(x)) >= 6 && [...tableRows(x).values()].some((r) => (r.rate ?? 0) > 0), 'traffic counted with a rate');
    await sleep(3000);
    // A frame whose sample fell between two batches of requests shows 0.0 although the totals
    // grew (seen under CI load): wait for one that shows both.
    const second = await waitFor(
      screen,
      (x) => sumOf(tableRows(x)) > sumOf(tableRows(first)) && [...tableRows(x).values()].some((r) => (r.rate ?? 0) > 0),
      'the totals growing, with a rate',
    );
    sending = false;
    const sent = await traffic;
    const a = tableRows(first);
    const b = tableRows(second);
    expect([...b.keys()].sort()).toEqual(['10.244.0.23:8080', '10.244.0.31:8080', '10.244.1.15:8080']);
    for (const [endpoint, row] of b) expect(row.total, endpoint).toBeGreaterThanOrEqual(a.get(endpoint)!.total);
    expect(sumOf(b)).toBeLessThanOrEqual(sent);
    expect(second).toContain('packets/s per endpoint of default/web');
    expect(second).toMatch(/conntrack table: \d+ of \d+/);
  });
});

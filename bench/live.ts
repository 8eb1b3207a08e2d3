/**
 * `node dist/bench/live.js --root DIR [--runs N] [--modes iptables,nftables,cilium] [--whole] [--refresh-only] [--no-frames] [--no-replay] [--cli dist/bin/nodescope.js] [--before OLD_CLI]` (as root, under
 * `flock /tmp/nodescope-lab.lock`): issue 23's live rows. Loads a generated capture's rules
 * (`DIR/iptables/probes/iptables-save.stdout` with `iptables-restore -c`, `DIR/nftables/probes/
 * nft-text.stdout` with `nft -f`; Cilium's LB map dumps into BPF maps pinned under a bpffs of
 * its own, bench/lib/cilium-maps.ts) into a network namespace of its own and measures, side by
 * side in one run, the node's own dump alone against nodescope on the same namespace:
 * `show rules -o json`, `show services -o json`, the TUI's first data frame (tmux), refreshes
 * in-process (Session; the node CPU their probes used, from /proc/self/stat) of the open chain
 * (KUBE-SERVICES, then a per-Service chain; nftables `services`) or the LB pane's maps,
 * then the replay rows: `show services` against `JSON.parse` of api.json, and `trace`.
 * Prints markdown; removes its namespaces on every exit path. Medians of `--runs` (default 2).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { packageRoot } from '../src/paths.js';
import { Session, type ChainFocus } from '../src/collect/session.js';
import { LB_MAPS_FOCUS } from '../src/collect/map-refresh.js';
import { lookupPlan } from '../src/collect/lb-lookup.js';
import { buildLbView } from '../src/analysis/lb-view.js';
import { nextRefreshDelayMs } from '../src/collect/refresh-cost.js';
import type { NodeSnapshot } from '../src/model/snapshot.js';
import { LocalTransport } from '../src/sources/local.js';
import { USER_HZ, waitedChildrenTicks } from '../src/sources/child-cpu.js';
import { CILIUM_PINS, loadCiliumMaps, unloadCiliumMaps } from './lib/cilium-maps.js';
import { loadAverage, machineLine } from './lib/machine.js';
import { median } from './lib/measure.js';
import { TmuxProgram } from './lib/tmux.js';

const { values } = parseArgs({ options: { root: { type: 'string' }, runs: { type: 'string' }, cli: { type: 'string' }, whole: { type: 'boolean' }, 'refresh-only': { type: 'boolean' }, 'no-frames': { type: 'boolean' }, 'no-replay': { type: 'boolean' }, modes: { type: 'string' }, before: { type: 'string' } } });
const root = values.root ?? '';
const runs = Number(values.runs ?? '2');
const cli = path.resolve(values.cli ?? path.join(packageRoot(), 'dist/bin/nodescope.js'));
const log = (t: string) => process.stderr.write(`live bench: ${t}\n`);
const ms = (n: number) => (Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US'));

/** Wall and CPU (the child and what it waited for) of one command, ms; `input`: its stdin. */
function timed(argv: readonly string[], input?: string): { ms: number; cpuMs: number; ok: boolean; err: string } {
  const t0 = waitedChildrenTicks() ?? 0;
  const w0 = performance.now();
  const r = spawnSync(argv[0]!, argv.slice(1), { stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'], ...(input === undefined ? {} : { input }), maxBuffer: 1 << 30, env: { ...process.env, LC_ALL: 'C' } });
  const wall = performance.now() - w0;
  const cpu = (((waitedChildrenTicks() ?? 0) - t0) * 1000) / USER_HZ;
  return { ms: wall, cpuMs: cpu, ok: r.status === 0, err: r.stderr?.toString().slice(-300) ?? '' };
}

function must(argv: readonly string[]): void {
  const r = spawnSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr?.toString()}`);
}

/** Median wall / CPU of `runs` runs of `argv`. */
function measure(label: string, argv: readonly string[]): { ms: number; cpuMs: number; note: string } {
  const got = [];
  for (let i = 0; i < runs; i++) {
    log(`${label} run ${i + 1}`);
    const r = timed(argv);
    if (!r.ok) return { ms: Number.NaN, cpuMs: Number.NaN, note: `failed: ${r.err.replace(/\s+/g, ' ').slice(0, 100)}` };
    got.push(r);
  }
  return { ms: median(got.map((g) => g.ms)), cpuMs: median(got.map((g) => g.cpuMs)), note: '' };
}

/**
 * Start → first frame showing Services, → frame naming the mode (the early `cilium?` from the
 * pinned maps counts), → frame with the mode's full evidence (`mode: X — …`: the dumps parsed), in tmux.
 */
async function firstFrames(ns: string, api: string, mode: string, extra: readonly string[], program = cli): Promise<{ services: number; moded: number; evidence: number }> {
  const app = TmuxProgram.start(`nodescope-live-bench-${process.pid}`, `${process.execPath} ${program} --netns ${ns} --api-file ${api} --lang en ${extra.join(' ')}`, 120, 40);
  try {
    const services = await app.waitFor((s) => s.includes('kube-dns'), 300_000);
    const moded = await app.waitFor((s) => new RegExp(`mode: ${mode}\\b`).test(s), 300_000);
    const evidence = await app.waitFor((s) => s.includes(`mode: ${mode} — `), 300_000);
    app.keys('q');
    return { services: services.ms, moded: moded.ms, evidence: evidence.ms };
  } finally {
    app.kill();
  }
}

/**
 * `--before CLI`: the floor, `show rules -o json` and the frame naming the mode of this tree's
 * cli and of CLI (an older build), alternated in each of `runs` rounds; rows of medians with
 * each ratio to the same run's floor (no show services, no refreshes).
 */
async function beforeAfter(mode: string, ns: string, api: string, extra: readonly string[], own: readonly string[], label: string, before: string): Promise<string[]> {
  const got: Record<string, { ms: number[]; cpuMs: number[] }> = {};
  const add = (key: string, wall: number, cpu: number) => {
    const g = (got[key] ??= { ms: [], cpuMs: [] });
    g.ms.push(wall);
    g.cpuMs.push(cpu);
  };
  const clis = [['after', cli], ['before', before]] as const;
  for (let i = 0; i < runs; i++) {
    log(`${mode} round ${i + 1}`);
    const floor = timed(['ip', 'netns', 'exec', ns, ...own]);
    add('floor', floor.ms, floor.cpuMs);
    for (const [which, c] of i % 2 ? [...clis].reverse() : clis) {
      const r = timed([process.execPath, c, 'show', 'rules', '-o', 'json', '--netns', ns, '--api-file', api, ...extra]);
      add(`rules ${which}`, r.ok ? r.ms : Number.NaN, r.ok ? r.cpuMs : Number.NaN);
      const f = await firstFrames(ns, api, mode, extra, c).catch(() => ({ services: Number.NaN, moded: Number.NaN, evidence: Number.NaN }));
      add(`services ${which}`, f.services, Number.NaN);
      add(`moded ${which}`, f.moded, Number.NaN);
      add(`evidence ${which}`, f.evidence, Number.NaN);
    }
  }
  const med = (key: string, f: 'ms' | 'cpuMs') => median(got[key]![f]);
  const base = med('floor', 'ms');
  const baseCpu = med('floor', 'cpuMs');
  const ratio = (x: number, b: number) => (Number.isNaN(x) || !(b > 0) ? '–' : `${(x / b).toFixed(2)}×`);
  const row = (what: string, key: string) => `| ${mode} | ${what} | ${ms(med(key, 'ms'))} | ${ms(med(key, 'cpuMs'))} | ${ratio(med(key, 'ms'), base)} | CPU ${ratio(med(key, 'cpuMs'), baseCpu)} |`;
  return [
    `| ${mode} | ${label} | ${ms(base)} | ${ms(baseCpu)} | 1.00× | |`,
    ...(['after', 'before'] as const).flatMap((w) => [row(`\`show rules -o json\` (${w})`, `rules ${w}`), row(`TUI start → Services frame (${w})`, `services ${w}`), row(`TUI start → frame naming the mode (${w})`, `moded ${w}`), row(`TUI start → frame with the mode's evidence (${w})`, `evidence ${w}`)]),
  ];
}

/**
 * One focus's refreshes: medians of wall, node CPU (the probes', from /proc/self/stat) and
 * nodescope's own CPU (process.cpuUsage: the parse and comparison), what kind each was, and
 * the floor — the refresh's read alone, run just before each refresh in the same round.
 */
interface RefreshFigures {
  readonly label: string;
  readonly ms: number;
  readonly cpuMs: number;
  readonly ownCpuMs: number;
  readonly kinds: string;
  readonly floor: { readonly label: string; readonly ms: number; readonly cpuMs: number } | null;
}

/** A focus to refresh, or a function picking it from the loaded snapshot (a KUBE-SVC chain, the LB frontends on screen). */
type FocusPick = ChainFocus | null | ((s: NodeSnapshot) => ChainFocus | null);

/** Rows of a 40-line terminal's LB pane at the top of the table (the App's superset: the cursor's row and a body below it). */
const LB_SCREEN_ROWS = 41;

/** The LB pane's focus with the frontends a 40-line terminal shows at the top of the table (src/ui/App.tsx focusKeyOf). */
function lbOnScreen(s: NodeSnapshot): ChainFocus {
  return { ...LB_MAPS_FOCUS, frontends: buildLbView(s, '').frontends.slice(0, LB_SCREEN_ROWS).map((f) => f.key) };
}

/**
 * The read a refresh of `focus` makes, alone (the tool's own floor): `iptables -t T -S CHAIN -v`;
 * the LB frontends' lookups in one `bpftool -j batch file -`; without frontends one dump of the
 * IPv4 services map. Null when there is none.
 */
function floorOf(ns: string, focus: ChainFocus | null, snapshot: NodeSnapshot, params: Record<string, string>): { label: string; argv: string[]; input?: string } | null {
  if (focus?.ruleset === 'iptables') return { label: `\`iptables -t ${focus.table} -S ${focus.chain} -v\` alone`, argv: ['ip', 'netns', 'exec', ns, 'iptables', '-t', focus.table, '-S', focus.chain, '-v'] };
  if (focus?.ruleset !== LB_MAPS_FOCUS.ruleset || !params.bpfRoot) return null;
  const pins = { v4: `${params.bpfRoot}/${CILIUM_PINS['bpf-lb4-services']}`, v6: `${params.bpfRoot}/${CILIUM_PINS['bpf-lb6-services']}` };
  const plan = focus.frontends && snapshot.lb?.value ? lookupPlan(snapshot.lb.value, focus.frontends, pins) : null;
  if (plan) return { label: `\`bpftool -j batch file -\` of the ${plan.lines.length} lookups alone`, argv: ['ip', 'netns', 'exec', ns, 'bpftool', '-j', 'batch', 'file', '-'], input: plan.lines.map((l) => `${l}\n`).join('') };
  return { label: '`bpftool -j map dump pinned …/cilium_lb4_services_v2` alone', argv: ['ip', 'netns', 'exec', ns, 'bpftool', '-j', 'map', 'dump', 'pinned', pins.v4] };
}

/**
 * Refreshes in-process on one session: 5 per focus, in order (`null`: no focus, as the
 * Services pane), each just after its floor ({@link floorOf}) in the same round.
 */
async function refreshes(ns: string, api: string, focuses: readonly FocusPick[], params: Record<string, string>): Promise<RefreshFigures[]> {
  const session = new Session({ transport: new LocalTransport({ netns: ns }), live: true, apiText: readFileSync(api, 'utf8'), intervalMs: 3_600_000, params });
  await session.start();
  // What the start read of the dumps (a timed-out dump leaves no chain to refresh alone).
  const read = (session.getState().snapshot?.probes ?? []).filter((p) => /save$|^nft-json|^nft-tables$|^bpf-lb/.test(p.id)).map((p) => `${p.id} ${p.status} ${ms(p.durationMs)} ms`);
  log(`session start read: ${read.join(', ')}`);
  const out: RefreshFigures[] = [];
  for (const pick of focuses) {
    const focus = typeof pick === 'function' ? pick(session.getState().snapshot!) : pick;
    session.focus(focus);
    const floor = floorOf(ns, focus, session.getState().snapshot!, params);
    const walls: number[] = [];
    const cpus: number[] = [];
    const own: number[] = [];
    const floors: { ms: number; cpuMs: number }[] = [];
    const kinds: string[] = [];
    for (let i = 0; i < 5; i++) {
      if (floor) floors.push(timed(floor.argv, floor.input));
      const t0 = waitedChildrenTicks() ?? 0;
      const c0 = process.cpuUsage();
      const w0 = performance.now();
      session.refreshNow();
      await new Promise<void>((resolve) => {
        const off = session.subscribe(() => {
          if (!session.getState().refreshing) {
            off();
            resolve();
          }
        });
      });
      walls.push(performance.now() - w0);
      const c = process.cpuUsage(c0);
      own.push((c.user + c.system) / 1000);
      cpus.push((((waitedChildrenTicks() ?? 0) - t0) * 1000) / USER_HZ);
      kinds.push(session.lastRefreshKind() ?? '?');
    }
    const label = focus?.frontends ? `LB pane, ${focus.frontends.length} frontends on screen (lookups)` : focus ? `${focus.table} ${focus.chain}` : 'no focus';
    out.push({ label, ms: median(walls), cpuMs: median(cpus), ownCpuMs: median(own), kinds: kinds.join(','), floor: floor ? { label: floor.label, ms: median(floors.map((f) => f.ms)), cpuMs: median(floors.map((f) => f.cpuMs)) } : null });
  }
  await session.stop();
  return out;
}

/** The first KUBE-SVC chain KUBE-SERVICES jumps to (a per-Service chain, 1 rule per endpoint + 1). */
function perServiceChain(s: NodeSnapshot): ChainFocus | null {
  const rule = s.iptables?.value?.tables.find((t) => t.name === 'nat')?.chains.find((c) => c.name === 'KUBE-SERVICES')?.rules.find((r) => / -j KUBE-SVC-/.test(r.raw));
  const chain = rule ? / -j (KUBE-SVC-\S+)/.exec(rule.raw)?.[1] : undefined;
  return chain ? { ruleset: 'iptables', table: 'nat', chain } : null;
}

/** Table rows of one focus's refreshes (the floor's row first), with the wait the cost rule gives at the 2 s interval. */
function refreshRow(mode: string, r: RefreshFigures): string[] {
  const wait = nextRefreshDelayMs(2000, r.ms, r.cpuMs);
  const floor = r.floor ? [`| ${mode} | ${r.floor.label}, median of 5 (same rounds) | ${ms(r.floor.ms)} | ${ms(r.floor.cpuMs)} node | 1.00× | |`] : [];
  const ratio = r.floor && r.floor.ms > 0 ? `${(r.ms / r.floor.ms).toFixed(2)}×` : '';
  return [
    ...floor,
    `| ${mode} | refresh, ${r.label}, median of 5 | ${ms(r.ms)} | ${ms(r.cpuMs)} node + ${ms(r.ownCpuMs)} nodescope | ${ratio} | kinds ${r.kinds}; at the 2 s interval ${((r.cpuMs / 2000) * 100).toFixed(1)} % of a core unstretched; the cost rule waits ${(wait / 1000).toFixed(1)} s: ${((r.cpuMs / wait) * 100).toFixed(1)} % |`,
  ];
}

/** A Service's ClusterIP:port/proto from api.json, for `trace --to`. */
function someClusterIp(api: string): string {
  const list = JSON.parse(readFileSync(api, 'utf8')) as { items: { kind: string; spec?: { clusterIP?: string; ports?: { port: number; protocol?: string }[] } }[] };
  const svc = list.items.find((o) => o.kind === 'Service' && o.spec?.clusterIP && o.spec.clusterIP !== 'None' && o.spec.ports?.length)!;
  return `${svc.spec!.clusterIP}:${svc.spec!.ports![0]!.port}/${(svc.spec!.ports![0]!.protocol ?? 'TCP').toLowerCase()}`;
}

async function main(): Promise<void> {
  const rows: string[] = [];
  const load = loadAverage();
  const started = new Date().toISOString();
  const namespaces: string[] = [];
  const mounts: string[] = [];
  try {
    const modes = (values.modes ?? 'iptables,nftables').split(',') as ('iptables' | 'nftables' | 'cilium')[];
    for (const mode of modes) {
      const ns = `nsbl-${mode}-${process.pid}`;
      const bundle = path.join(root, mode);
      const api = path.join(bundle, 'api.json');
      must(['ip', 'netns', 'add', ns]);
      namespaces.push(ns);
      log(`loading ${mode} rules into ${ns}`);
      let own: string[];
      let label: string;
      const params: Record<string, string> = {};
      if (mode === 'cilium') {
        // `ip netns exec` remounts /sys: the pins live on a bpffs of ours under /run, which the namespace sees.
        const mount = `/run/nodescope-live-bench-${process.pid}/bpffs`;
        mounts.push(mount);
        const w0 = performance.now();
        const maps = loadCiliumMaps(path.join(bundle, 'probes'), mount);
        log(`cilium maps loaded in ${ms(performance.now() - w0)} ms: ${maps.maps.map((m) => `${path.basename(m.pin)} ${m.entries}`).join(', ')}`);
        params.bpfRoot = maps.root;
        // One dump after the other, as nodescope runs heavy probes.
        own = ['sh', '-c', Object.values(CILIUM_PINS).map((n) => `bpftool -j map dump pinned ${maps.root}/${n} >/dev/null`).join(' && ')];
        label = 'the six `bpftool -j map dump pinned` of the LB maps, one after the other';
      } else {
        const loadRules = mode === 'iptables' ? timed(['ip', 'netns', 'exec', ns, 'iptables-restore', '-c', path.join(bundle, 'probes', 'iptables-save.stdout')]) : timed(['ip', 'netns', 'exec', ns, 'nft', '-f', path.join(bundle, 'probes', 'nft-text.stdout')]);
        if (!loadRules.ok) throw new Error(`loading ${mode}: ${loadRules.err}`);
        own = mode === 'iptables' ? ['iptables-save', '-c'] : ['nft', '-j', 'list', 'table', 'ip', 'kube-proxy'];
        label = `\`${own.join(' ')}\` alone`;
      }
      const extra = params.bpfRoot ? ['--bpf-root', params.bpfRoot] : [];
      const focuses: FocusPick[] = mode === 'iptables' ? [{ ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' }, perServiceChain] : mode === 'nftables' ? [{ ruleset: 'nft', table: 'ip kube-proxy', chain: 'services' }] : [lbOnScreen, LB_MAPS_FOCUS, null];
      const refreshRows = async () => {
        log(`${mode} refreshes`);
        return (await refreshes(ns, api, focuses, params)).flatMap((r) => refreshRow(mode, r));
      };
      if (values['refresh-only']) {
        rows.push(...(await refreshRows()));
        must(['ip', 'netns', 'del', ns]);
        namespaces.pop();
        continue;
      }
      if (values.before) {
        rows.push(...(await beforeAfter(mode, ns, api, extra, own, label, path.resolve(values.before))));
        must(['ip', 'netns', 'del', ns]);
        namespaces.pop();
        continue;
      }
      const base = measure(`${mode} ${label}`, ['ip', 'netns', 'exec', ns, ...own]);
      // `nft -j list ruleset` of the same iptables-nft rules (what nodescope ran before the plan): `--whole`.
      const whole = mode === 'iptables' && values.whole ? measure('nft -j list ruleset', ['ip', 'netns', 'exec', ns, 'nft', '-j', 'list', 'ruleset']) : null;
      const rules = measure(`${mode} show rules`, [process.execPath, cli, 'show', 'rules', '-o', 'json', '--netns', ns, '--api-file', api, ...extra]);
      const services = measure(`${mode} show services`, [process.execPath, cli, 'show', 'services', '-o', 'json', '--netns', ns, '--api-file', api, ...extra]);
      log(`${mode} first frames`);
      const frames = values['no-frames'] ? { services: Number.NaN, moded: Number.NaN, evidence: Number.NaN } : await firstFrames(ns, api, mode, extra).catch((e: Error) => {
        log(`${mode} first frames failed: ${e.message}`);
        return { services: Number.NaN, moded: Number.NaN, evidence: Number.NaN };
      });
      const ratio = (x: number) => (Number.isNaN(x) || !(base.ms > 0) ? '–' : `${(x / base.ms).toFixed(2)}×`);
      rows.push(
        `| ${mode} | ${label} | ${ms(base.ms)} | ${ms(base.cpuMs)} | 1.00× | ${base.note} |`,
        ...(whole ? [`| ${mode} | \`nft -j list ruleset\` alone (what nodescope no longer runs here) | ${ms(whole.ms)} | ${ms(whole.cpuMs)} | ${ratio(whole.ms)} | ${whole.note} |`] : []),
        `| ${mode} | \`show rules -o json\` | ${ms(rules.ms)} | ${ms(rules.cpuMs)} | ${ratio(rules.ms)} | ${rules.note} |`,
        `| ${mode} | \`show services -o json\` | ${ms(services.ms)} | ${ms(services.cpuMs)} | ${ratio(services.ms)} | ${services.note} |`,
        `| ${mode} | TUI start → Services frame (tmux) | ${ms(frames.services)} | | ${ratio(frames.services)} | |`,
        `| ${mode} | TUI start → frame naming the mode (rules read) | ${ms(frames.moded)} | | ${ratio(frames.moded)} | |`,
        `| ${mode} | TUI start → frame with the mode's evidence (dumps parsed) | ${ms(frames.evidence)} | | ${ratio(frames.evidence)} | |`,
        ...(await refreshRows()),
      );
      log(`rows so far:\n${rows.join('\n')}`);
      must(['ip', 'netns', 'del', ns]);
      namespaces.pop();
    }
    // Replays of the same captures.
    for (const mode of values['refresh-only'] || values['no-replay'] ? [] : (['iptables', 'nftables'] as const).filter((m) => (values.modes ?? 'iptables,nftables').split(',').includes(m))) {
      const bundle = path.join(root, mode);
      const api = path.join(bundle, 'api.json');
      const parse = measure(`${mode} JSON.parse api.json`, [process.execPath, '-e', `JSON.parse(require('fs').readFileSync(${JSON.stringify(api)}, 'utf8'))`]);
      const services = measure(`${mode} replay show services`, [process.execPath, cli, 'show', 'services', '-o', 'json', '--replay', bundle]);
      const trace = measure(`${mode} replay trace`, [process.execPath, cli, 'trace', '--replay', bundle, '--from', '10.128.0.200', '--to', someClusterIp(api), '-o', 'json']);
      const node = measure('node -e 0', [process.execPath, '-e', '0']);
      rows.push(
        `| replay ${mode} | \`node -e 'JSON.parse(api.json)'\` | ${ms(parse.ms)} | ${ms(parse.cpuMs)} | 1.00× | process start ${ms(node.ms)} ms included |`,
        `| replay ${mode} | \`show services -o json\` | ${ms(services.ms)} | ${ms(services.cpuMs)} | ${(services.ms / parse.ms).toFixed(2)}× | ${services.note} |`,
        `| replay ${mode} | \`trace --to ClusterIP\` | ${ms(trace.ms)} | ${ms(trace.cpuMs)} | | ${trace.note} |`,
      );
    }
  } finally {
    for (const ns of namespaces) spawnSync('ip', ['netns', 'del', ns]);
    for (const m of mounts) {
      unloadCiliumMaps(m);
      rmSync(path.dirname(m), { recursive: true, force: true });
    }
  }
  process.stdout.write(
    [
      `Machine: ${machineLine()}; shared by 6 engineers at the time. Run ${started}, load average ${load} at start; \`${runs}\` runs per row (median).`,
      `Captures: \`npm run gen -- --services 10000 --endpoints 5 --seed bench\` loaded into a network namespace (iptables-restore -c / nft -f).`,
      '',
      '| lab | what | wall ms | CPU ms | vs the node\'s own dump | note |',
      '|---|---|--:|--:|--:|---|',
      ...rows,
      '',
    ].join('\n'),
  );
}

main().catch((e: Error) => {
  process.stderr.write(`live bench: ${e.stack ?? e.message}\n`);
  process.exit(1);
});

/**
 * One benchmark measurement in a fresh process (started by `bench/run.ts` through
 * `measureInChild`); prints one JSON {@link Measurement} line on stdout.
 *
 * Tasks (`ROOT` holds the generated bundles `iptables/`, `nftables/`, `cilium/`):
 * - `parse FORMAT ROOT`: read the format's file(s), then time nodescope's parser once, and
 *   measure the memory its model retains once the text is dropped (needs `--expose-gc`);
 * - `floor FORMAT ROOT`: the same text only split into lines (`text.split('\n')`);
 * - `jsonparse FORMAT ROOT`: the same text through `JSON.parse` (the floor of a JSON format);
 * - `charpass FORMAT ROOT`: one JavaScript pass reading every character (`charCodeAt`), the
 *   least any parser written in JavaScript does with the text;
 * - `walk MODE ROOT`: load the bundle, then time one step-mode walk (first, and median of 20)
 *   of a TCP SYN from a pod of the node to the Service whose KUBE-SERVICES rule is last;
 * - `refresh ROOT full|changed`: load the iptables bundle, change its counters and flows, then
 *   time the snapshot rebuild the session does today (`full`) or the parse of the changed
 *   probes alone (`changed`, what a cache by probe id and text would leave);
 * - `views ROOT`: load the iptables bundle, time the render-path work of one keypress in
 *   the Rules pane on nat KUBE-SERVICES and in the Services pane;
 * Module loading is timed by `bench/import-worker.ts` (a process that imports nothing else).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSnapshot } from '../src/collect/build-snapshot.js';
import { iptablesRates } from '../src/analysis/rates.js';
import { decodeCiliumLbMaps } from '../src/parsers/bpftool-lb-decode.js';
import { parseConntrack } from '../src/parsers/conntrack.js';
import { parseIptablesSave } from '../src/parsers/iptables-save.js';
import { parseK8sObjects } from '../src/parsers/k8s-objects.js';
import { parseNftJson } from '../src/parsers/nft-json.js';
import { parseNftText } from '../src/parsers/nft-text.js';
import { loadSnapshot } from '../src/collect/session.js';
import type { ProbeRun } from '../src/sources/probe-runner.js';
import { ReplayTransport } from '../src/sources/replay.js';
import { CILIUM_PINS } from './lib/cilium-maps.js';
import { peakRssMb, timed, median, type Measurement } from './lib/measure.js';

/** A format the bench parses, where its text lives in a bundle root, and nodescope's parser for it. */
interface FormatSpec {
  readonly files: readonly string[];
  readonly parse: (texts: readonly string[]) => { diagnostics: readonly unknown[] };
}


/** The formats of the parse table. */
export const FORMATS: Readonly<Record<string, FormatSpec>> = {
  'iptables-save': { files: ['iptables/probes/iptables-save.stdout'], parse: ([t]) => parseIptablesSave(t!, 'iptables-save', { family: 'ipv4' }) },
  'nft-json': { files: ['nftables/probes/nft-json.stdout'], parse: ([t]) => parseNftJson(t!, 'nft-json') },
  'nft-text': { files: ['nftables/probes/nft-text.stdout'], parse: ([t]) => parseNftText(t!, 'nft-text') },
  conntrack: { files: ['iptables/probes/conntrack.stdout'], parse: ([t]) => parseConntrack(t!, 'conntrack') },
  cilium: {
    files: Object.keys(CILIUM_PINS).map((id) => `cilium/probes/${id}.stdout`),
    parse: (texts) => decodeCiliumLbMaps(Object.values(CILIUM_PINS).map((name, i) => ({ name, text: texts[i]!, origin: name }))),
  },
  api: { files: ['iptables/api.json'], parse: ([t]) => parseK8sObjects(t!, 'api.json') },
};

function readTexts(root: string, spec: FormatSpec): string[] {
  return spec.files.map((f) => readFileSync(path.join(root, f), 'utf8'));
}

/** Sum of every UTF-16 code unit of `text` (mod 2^32): a pass that reads each character once. */
function charSum(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h + text.charCodeAt(i)) | 0;
  return h;
}

function report(m: Omit<Measurement, 'rssMb'>): void {
  process.stdout.write(`${JSON.stringify({ ...m, rssMb: peakRssMb() })}\n`);
}

function sizeOf(texts: readonly string[]): { lines: number; bytesMb: number } {
  let lines = 0;
  let bytes = 0;
  for (const t of texts) {
    bytes += Buffer.byteLength(t);
    for (let i = t.indexOf('\n'); i !== -1; i = t.indexOf('\n', i + 1)) lines++;
  }
  return { lines, bytesMb: bytes / 1e6 };
}

/** Live heap plus external memory after two full collections, MB (2^20 bytes); NaN without `--expose-gc`. */
function liveMb(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return Number.NaN;
  gc();
  gc();
  const m = process.memoryUsage();
  return (m.heapUsed + m.external) / 2 ** 20;
}

function parseTask(kind: string, format: string, root: string): void {
  const spec = FORMATS[format];
  if (!spec) throw new Error(`unknown format ${format}`);
  const baseMb = liveMb();
  let texts: string[] | null = readTexts(root, spec);
  const size = sizeOf(texts);
  if (kind === 'floor') {
    const all = texts;
    const t = timed(() => all.map((x) => x.split('\n').length));
    return report({ ms: t.ms, cpuMs: t.cpuMs, ...size });
  }
  if (kind === 'charpass') {
    const all = texts;
    const t = timed(() => all.map(charSum));
    return report({ ms: t.ms, cpuMs: t.cpuMs, ...size });
  }
  if (kind === 'jsonparse') {
    const all = texts;
    const t = timed(() => all.map((x) => JSON.parse(x) as unknown));
    return report({ ms: t.ms, cpuMs: t.cpuMs, ...size });
  }
  const read = texts;
  const t = timed(() => spec.parse(read));
  // What the model keeps once the text is dropped (as the session drops it): a slice of the
  // text in the model keeps all of it alive, and shows here.
  texts = null;
  read.length = 0;
  const retainedMb = liveMb() - baseMb;
  report({ ms: t.ms, cpuMs: t.cpuMs, ...size, diagnostics: t.value.diagnostics.length, extra: { retainedMb } });
}

async function snapshotOf(dir: string) {
  const transport = new ReplayTransport(dir);
  const apiText = transport.apiText();
  const loaded = await loadSnapshot({ transport, live: false, ...(apiText !== undefined ? { apiText, apiOrigin: 'api.json' } : {}) });
  return { ...loaded, apiText };
}

async function walkTask(mode: string, root: string): Promise<void> {
  const { walkPacket } = await import('../src/trace/engine.js');
  const { traceInputFromSnapshot } = await import('../src/trace/input.js');
  const { parsePacketArgs } = await import('../src/trace/packet.js');
  const { snapshot } = await snapshotOf(path.join(root, mode));
  const services = snapshot.api?.value?.services ?? [];
  // Worst case for a linear KUBE-SERVICES: the Service whose rule comes last (kube-proxy orders by name).
  const target = [...services].filter((s) => s.clusterIPs[0] && s.clusterIPs[0] !== 'None' && s.ports[0]?.protocol === 'TCP').sort((a, b) => (`${a.meta.namespace}/${a.meta.name}` < `${b.meta.namespace}/${b.meta.name}` ? 1 : -1))[0];
  if (!target) throw new Error('no TCP Service in the capture');
  const spec = parsePacketArgs({ from: '10.128.0.200:43210', to: `${target.clusterIPs[0]}:${target.ports[0]!.port}/tcp` });
  const build = timed(() => traceInputFromSnapshot(snapshot, mode === 'nftables' ? (snapshot.nft?.value ?? undefined) : undefined));
  const first = timed(() => walkPacket(build.value, spec));
  const again: number[] = [];
  for (let i = 0; i < 20; i++) again.push(timed(() => walkPacket(build.value, spec)).ms);
  report({
    ms: first.ms,
    cpuMs: first.cpuMs,
    extra: { inputMs: Math.round(build.ms * 10) / 10, medianMs: Math.round(median(again) * 100) / 100, verdict: `${first.value.verdict.kind} ${first.value.verdict.endpoint ?? ''}`.trim(), steps: first.value.steps.length },
  });
}

/** The same capture a moment later: every counter moved, 1 % of the flows gone. */
function changed(run: ProbeRun): ProbeRun {
  let stdout = run.result.stdout;
  if (run.id === 'iptables-save') stdout = stdout.replace(/^\[(\d+):(\d+)\]/gm, (_m, p: string, b: string) => `[${Number(p) + 3}:${Number(b) + 180}]`);
  else if (run.id === 'conntrack') stdout = stdout.slice(stdout.indexOf('\n', Math.floor(stdout.length / 100)) + 1);
  else if (run.id === 'conntrack-count') stdout = `${Number(stdout) - 1}\n`;
  else return run;
  return { ...run, result: { ...run.result, stdout } };
}

async function refreshTask(root: string, kind: string): Promise<void> {
  const { snapshot, runs, apiText } = await snapshotOf(path.join(root, 'iptables'));
  const fresh = runs.map(changed);
  const input = { source: snapshot.meta.source, capturedAt: snapshot.meta.capturedAt, ...(apiText !== undefined ? { apiText, apiOrigin: 'api.json' } : {}) };
  const t =
    kind === 'full'
      ? // Today: Session.refreshNow rebuilds the whole snapshot from every run (API objects included).
        timed(() => {
          const next = buildSnapshot({ ...input, runs: fresh });
          iptablesRates(snapshot.iptables!.value!, next.iptables!.value!, 2);
        })
      : // With a cache by probe id + text: only the probes whose text changed are parsed again.
        timed(() => {
          const ipt = parseIptablesSave(fresh.find((r) => r.id === 'iptables-save')!.result.stdout, 'iptables-save', { family: 'ipv4' });
          parseConntrack(fresh.find((r) => r.id === 'conntrack')!.result.stdout, 'conntrack');
          iptablesRates(snapshot.iptables!.value!, ipt.value, 2);
        });
  report({ ms: t.ms, cpuMs: t.cpuMs });
}

async function viewsTask(root: string): Promise<void> {
  const { rulesView, servicesView } = await import('../src/ui/views.js');
  const { initialUiState, uiReducer } = await import('../src/ui/state.js');
  const { snapshot } = await snapshotOf(path.join(root, 'iptables'));
  const session = { snapshot, rates: new Map(), loading: false, refreshing: false, error: null, dataAt: 0 } as const;
  let ui = uiReducer(initialUiState, { type: 'openRules', location: { kind: 'chain', ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' } });
  const open = timed(() => rulesView(snapshot, session, ui, '', 'en'));
  const count = open.value.kind === 'chain' ? open.value.rows.length : 0;
  const keys: number[] = [];
  for (let i = 0; i < 20; i++) {
    ui = uiReducer(ui, { type: 'move', delta: 1, count });
    keys.push(timed(() => rulesView(snapshot, session, ui, '', 'en')).ms);
  }
  const services = timed(() => servicesView(snapshot, ''));
  report({
    ms: median(keys),
    cpuMs: open.cpuMs,
    extra: { openMs: Math.round(open.ms), rows: count, servicesViewMs: Math.round(services.ms), serviceRows: services.value.rows?.length ?? 0 },
  });
}

/** `diagnose` of one mode's bundle: the snapshot loaded (not timed), then diagnoseSnapshot timed. */
async function diagnoseTask(mode: string, root: string): Promise<void> {
  const { diagnoseSnapshot } = await import('../src/analysis/diagnose/index.js');
  const { snapshot } = await snapshotOf(path.join(root, mode));
  const t = timed(() => diagnoseSnapshot(snapshot));
  const c = t.value.header.counts;
  report({ ms: t.ms, cpuMs: t.cpuMs, extra: { services: t.value.services.length, verdicts: `ok ${c.ok}, degraded ${c.degraded}, broken ${c.broken}, unknown ${c.unknown}` } });
}

/** `fleet DIR`: `fleet diagnose` of a generated fleet bundle (one node's snapshot at a time). */
async function fleetTask(dir: string): Promise<void> {
  const [{ diagnoseFleet }, { fleetDiagnoseNode }] = await Promise.all([import('../src/fleet/diagnose.js'), import('../src/fleet/node-diagnosis.js')]);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let misses = 0;
  const d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode, onNode: (_n, _i, _t, reused) => void (misses += reused ? 0 : 1) });
  const cpu = process.cpuUsage(c0);
  const bad = d.nodes.filter((n) => n.status !== 'ok').map((n) => `${n.name} ${n.status}`).join(', ');
  report({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, extra: { nodes: d.nodes.length, rows: d.services.length, bad, misses } });
}

/** `fleetfloor DIR N`: `JSON.parse` of the fleet's api.json N times (the same-run floor of `fleet`: ms per parse). */
function fleetFloorTask(dir: string, n: number): void {
  const text = readFileSync(path.join(dir, 'api.json'), 'utf8');
  const t = timed(() => {
    for (let i = 0; i < n; i++) JSON.parse(text);
  });
  report({ ms: t.ms / n, cpuMs: t.cpuMs / n, extra: { parses: n, apiMb: Math.round(text.length / 1e5) / 10 } });
}

async function main(): Promise<void> {
  const [task, a, b] = process.argv.slice(2);
  if (task === 'parse' || task === 'floor' || task === 'jsonparse' || task === 'charpass') parseTask(task, a!, b!);
  else if (task === 'walk') await walkTask(a!, b!);
  else if (task === 'refresh') await refreshTask(a!, b ?? 'full');
  else if (task === 'views') await viewsTask(a!);
  else if (task === 'diagnose') await diagnoseTask(a!, b!);
  else if (task === 'fleet') await fleetTask(a!);
  else if (task === 'fleetfloor') fleetFloorTask(a!, Number(b ?? '20'));
  else throw new Error(`unknown task ${task}`);
}

await main();

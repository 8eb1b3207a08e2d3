/**
 * `nodescope capture`: runs every node probe of a source once and writes a
 * bundle (src/sources/bundle.ts) with the API objects. Secrets never enter it:
 * only probe outputs, the API objects text, and the source's kind and label.
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildSnapshotLoading } from './load-snapshot.js';
import { packageVersion } from '../paths.js';
import { writeBundle, type BundleManifest } from '../sources/bundle.js';
import { closeSource, type OpenedSource } from '../sources/open.js';
import { ReplayTransport } from '../sources/replay.js';
import { runProbes, type ProbeRun } from '../sources/probe-runner.js';
import { catalog } from '../sources/catalog.js';
import { firstStageIds, partStageIds, planOf, runPlanned } from './planned-runs.js';
import { shownSkips } from './probe-plan.js';
import { dnsTransportFor } from '../dns/open.js';
import { recordServiceDns } from '../dns/record.js';
import { readClusterDomain } from '../dns/cluster-domain.js';
import { said, UserError } from '../errors.js';
import { parseK8sObjects } from '../parsers/k8s-objects.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../sources/k8s-debug-pod.js';

/**
 * Options of {@link captureBundle}. `dns` (default true): also ask the cluster DNS
 * every Service's questions and keep the exact answers in `extra/dns.json`
 * (`dnsTimeoutMs`, default 1,000 ms per try, one try: a capture must not hang on
 * a dead DNS). `progress` receives one line per stage as it starts and ends (the CLI
 * writes them to stderr, like the source's own progress), so a capture of several
 * seconds is never silent; `now` (milliseconds since the epoch, default `Date.now`) also
 * times the stages.
 */
export interface CaptureOptions {
  readonly params?: Readonly<Record<string, string | undefined>>;
  readonly note?: string;
  readonly now?: () => number;
  readonly progress?: (message: string) => void;
  readonly dns?: boolean;
  readonly dnsServer?: string;
  readonly dnsTimeoutMs?: number;
  /** `--cluster-domain`: the domain of the DNS questions (default: what the node shows, see readClusterDomain). */
  readonly clusterDomain?: string;
  /** `--probe`: heavy probes to read even when the probe plan would skip them. */
  readonly probes?: readonly string[];
  /** A file holding exactly the API objects text, hard-linked as the bundle's api.json (a fleet's one copy; see WriteBundleInput). */
  readonly apiLink?: string;
  /** The node's name when the caller knows it (a fleet's Kubernetes Node name); else read from the node (uname, API addresses). */
  readonly node?: string;
}

/**
 * For a capture read from a replay bundle: that it is a copy, of which bundle (node, time,
 * folder), with the bundle's own note kept, so a re-capture never loses how the data was made.
 */
function copyNote(source: OpenedSource): string | null {
  if (!(source.transport instanceof ReplayTransport)) return null;
  const m = source.transport.bundle.manifest;
  return `copy of the capture of ${m.node} taken ${m.capturedAt} (replay of ${source.transport.bundle.dir})${m.note ? `; its note: ${m.note}` : ''}`;
}

/** The manifest's `note` field from its parts (empty parts left out), or nothing. */
function noteOf(parts: readonly (string | null | undefined)[]): { note?: string } {
  const kept = parts.filter((p): p is string => typeof p === 'string' && p !== '');
  return kept.length ? { note: kept.join('; ') } : {};
}

/**
 * Records DNS answers for every Service of the API objects, through the source's own
 * way of reaching the cluster DNS. Returns no extras, with a reason, when it cannot
 * (no API objects, no kube-dns Service, no way to reach it).
 */
async function recordDns(source: OpenedSource, options: CaptureOptions): Promise<{ extras: Record<string, string>; skipped: string | null }> {
  if (options.dns === false) return { extras: {}, skipped: 'disabled' };
  if (source.apiText === undefined) return { extras: {}, skipped: 'no API objects' };
  const api = parseK8sObjects(source.apiText, source.apiOrigin ?? 'api').value;
  let dns: ReturnType<typeof dnsTransportFor>;
  try {
    dns = dnsTransportFor(source.transport);
  } catch (e) {
    // A source with no way to the cluster DNS (kubectl-debug today) still captures the rest.
    if (e instanceof UserError) return { extras: {}, skipped: e.message };
    throw e;
  }
  try {
    // The questions a pod would ask: in the cluster's domain (cluster2.local …), not a fixed cluster.local.
    const domain = await readClusterDomain({ ...(options.clusterDomain !== undefined ? { flag: options.clusterDomain } : {}), transport: source.transport });
    const { extras } = await recordServiceDns({ api, dns, expect: { zone: domain.name }, ...(options.dnsServer ? { server: options.dnsServer } : {}), query: { timeoutMs: options.dnsTimeoutMs ?? 1000, tries: 1 } });
    return { extras, skipped: null };
  } catch (e) {
    if (e instanceof UserError) return { extras: {}, skipped: e.message };
    throw e;
  } finally {
    await dns.close();
  }
}

/** The entries a bundle writes in its directory (src/sources/bundle.ts). */
const BUNDLE_ENTRIES = ['manifest.json', 'api.json', 'probes', 'extra'] as const;

/**
 * Makes `dir` ready for a new bundle, before anything is captured: a missing or empty
 * directory is fine; a non-empty one is refused (`UserError`) unless `force`, which
 * removes the bundle's own entries (manifest.json, api.json, probes/, extra/) so no
 * stale file of an earlier capture survives; other files stay. A path that is not a
 * directory is a `UserError`.
 */
export function prepareCaptureDir(dir: string, force: boolean): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new UserError(said('ue.dir.notDir', { dir }), said('ue.dir.nameEmpty'));
  const entries = readdirSync(dir);
  if (entries.length === 0) return;
  if (!force) {
    const what = entries.includes('manifest.json') ? said('ue.dir.holdsCapture') : said('ue.dir.notEmpty', { list: `${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}` });
    throw new UserError(said('ue.dir.holds', { dir, what }), said('ue.dir.forceBundle'));
  }
  for (const name of BUNDLE_ENTRIES) rmSync(path.join(dir, name), { recursive: true, force: true });
}

/** Seconds with one decimal, for progress lines. */
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** "24 ok, 2 missing (ipvsadm, ipset)": what a stage of probes came back with, failures named. */
export function probeTally(runs: readonly ProbeRun[]): string {
  const byStatus = new Map<string, string[]>();
  for (const r of runs) byStatus.set(r.status, [...(byStatus.get(r.status) ?? []), r.id]);
  return [...byStatus].map(([status, ids]) => (status === 'ok' ? `${ids.length} ok` : `${ids.length} ${status} (${ids.join(', ')})`)).join(', ');
}

/**
 * The live API objects without nodescope's own debug pods (label
 * `app.kubernetes.io/managed-by=nodescope`): they are the tool, not the cluster's
 * dataplane, and their annotations name the operator (`user@host`) and the run id, which
 * a bundle handed to someone else must not carry. The text is re-printed as ClusterApi
 * prints it (4-space JSON) only when something was dropped.
 */
export function withoutNodescopePods(apiText: string): string {
  let list: { items?: { kind?: string; metadata?: { labels?: Record<string, string> } }[] };
  try {
    list = JSON.parse(apiText) as typeof list;
  } catch {
    return apiText;
  }
  const items = list.items ?? [];
  const kept = items.filter((o) => !(o.kind === 'Pod' && o.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_VALUE));
  return kept.length === items.length ? apiText : `${JSON.stringify({ ...list, items: kept }, null, 4)}\n`;
}

/** Runs one stage of probes, saying what it starts and what came back. */
async function probeStage(what: string, run: () => Promise<ProbeRun[]>, options: CaptureOptions): Promise<ProbeRun[]> {
  const now = options.now ?? Date.now;
  const say = options.progress ?? (() => undefined);
  const start = now();
  say(`running the ${what} probes…`);
  const runs = await run();
  say(`${what} probes: ${probeTally(runs)} in ${seconds(now() - start)}`);
  return runs;
}

/** Captures `source` into `dir`; returns the manifest. Throws the filesystem's errors. */
export async function captureBundle(source: OpenedSource, dir: string, options: CaptureOptions = {}): Promise<BundleManifest> {
  const now = options.now ?? Date.now;
  const say = options.progress ?? (() => undefined);
  const capturedAt = new Date(now()).toISOString();
  const params = options.params ? { params: options.params } : {};
  // The light probes first; the plan from them says which heavy dumps the node's mode needs.
  const firstRuns = await probeStage('node', () => runProbes(source.transport, { ...params, ids: firstStageIds() }), options);
  let plan = planOf(source.transport, firstRuns, options.probes);
  for (const s of shownSkips(plan.skipped)) say(`skipped ${s.id}: ${s.reason}`);
  const dumps = await probeStage('dump', async () => {
    const planned = await runPlanned(source.transport, plan, partStageIds(), params);
    plan = planned.plan;
    return planned.runs;
  }, options);
  const order = new Map(catalog().probes.map((p, i) => [p.id, i]));
  const runs = [...firstRuns, ...dumps].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  const agent = source.ciliumAgent;
  if (agent) runs.push(...(await probeStage('cilium-agent', () => runProbes(agent, { ...params, where: 'cilium-agent' }), options)));
  // A live feed's objects as of the end of the probes (the watch may have moved on since open).
  const apiText = source.api ? withoutNodescopePods(source.api.text()) : source.apiText;
  const dnsStart = now();
  if (options.dns !== false && apiText !== undefined) say('asking the cluster DNS the questions of every Service…');
  const dns = await recordDns({ ...source, apiText }, options);
  if (dns.skipped === null) say(`DNS answers recorded in ${seconds(now() - dnsStart)}`);
  else if (dns.skipped !== 'disabled') say(`DNS answers not recorded: ${dns.skipped}`);
  await closeSource(source);
  const snapshot = await buildSnapshotLoading({ ...(options.node !== undefined ? { node: options.node } : {}), runs, skipped: plan.skipped, source: { kind: source.transport.kind, label: source.transport.label, live: source.live }, capturedAt, ...(apiText !== undefined ? { apiText } : {}) });
  return writeBundle(dir, {
    capturedAt,
    nodescopeVersion: packageVersion(),
    node: snapshot.meta.node,
    source: { kind: source.transport.kind, label: source.transport.label },
    toolVersions: snapshot.meta.toolVersions,
    runs,
    ...(plan.skipped.length ? { skipped: plan.skipped } : {}),
    ...(apiText !== undefined ? { apiText } : {}),
    ...(options.apiLink !== undefined ? { apiLink: options.apiLink } : {}),
    ...(Object.keys(dns.extras).length ? { extras: dns.extras } : {}),
    ...noteOf([options.note, copyNote(source), dns.skipped && dns.skipped !== 'disabled' ? `DNS answers not recorded: ${dns.skipped}` : null]),
  });
}

/**
 * The node lab: a Kubernetes node's Service dataplane on this machine's real kernel.
 *
 * `labUp(mode)` builds network namespaces for a node (kube-proxy's), a second node, an
 * outside host and the scenario's pods, loads the rules kube-proxy would write
 * (iptables or nftables mode) into the node namespace, starts real servers (HTTP in web
 * pods, dnsmasq in coredns pods) and writes the matching API objects. In `cilium` mode the
 * node holds Cilium's chains and pinned LB maps instead of kube-proxy's rules, with the
 * Cilium scenario (cilium-scenario.ts). `labDown` removes all of it. Root only. Entry point for tests and for the CLI (`test/lab/cli.ts`).
 */
import path from 'node:path';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { LabError } from './lab-error.js';
import { writeApiObjects } from './api-objects.js';
import { haveTool } from './exec.js';
import { DEFAULT_PREFIX, labNames, type LabNames, type LabOptions } from './names.js';
import { alive, stopAllProcesses } from './processes.js';
import { removeCiliumMaps } from './cilium-mode.js';
import { LAB_CILIUM_SCENARIO } from './cilium-scenario.js';
import { loadProxyRules } from './rules.js';
import { LAB_SCENARIO } from './scenario.js';
import { removeLabScriptsIfUnused, startDnsServer, startWebServer } from './servers.js';
import { readState, removeStateDir, updateState, type LabMode, type LabProcess } from './state.js';
import { createTopology, destroyTopology, existingNamespaces } from './topology.js';
import { dnsQuery } from './traffic.js';

export { DEFAULT_PREFIX, labNames, type LabNames, type LabOptions } from './names.js';
export { nsExec, nsExecOk, run } from './exec.js';
export { httpGet, httpProbe, sendHttp, dnsQuery, type DnsReply, type HttpProbe, type HttpTally } from './traffic.js';
export { labSpawn, stopProcess } from './processes.js';
export { clearProxyRules, labRulesText, loadProxyRules } from './rules.js';
export { buildApiObjects, writeApiObjects } from './api-objects.js';
export { LAB_SCENARIO } from './scenario.js';
export { LAB_CILIUM_SCENARIO } from './cilium-scenario.js';
export { labBpfRoot } from './cilium-mode.js';
export type { LabDnsExtras } from './servers.js';
export type { LabMode, LabProcess, LabState, ProxyMode } from './state.js';

/** A running lab instance. */
export interface LabHandle {
  readonly names: LabNames;
  readonly scenario: LabScenario;
  readonly mode: LabMode;
  readonly stateDir: string;
  /** The `kubectl get services,endpointslices,pods,nodes -A -o json` List of the scenario. */
  readonly apiObjectsPath: string;
  /** The rules text loaded into the node namespace. */
  readonly rulesFile: string;
  /** Cilium mode: the directory of the pinned LB maps (pass it as `--bpf-root`); else null. */
  readonly bpfRoot: string | null;
  /** Namespace of the pod with `key` (`client`, `web-1`, …); throws LabError for an unknown key. */
  podNs(key: string): string;
}

/** Throws {@link LabError} unless running as root on Linux. */
export function requireRoot(): void {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    throw new LabError('the node lab needs root on Linux (network namespaces, netfilter)', 'run it as root, e.g. with sudo');
  }
}

/** Tools the lab needs for `mode` that are missing from PATH (empty when all are there). */
export async function labPrerequisites(mode: LabMode = 'iptables'): Promise<string[]> {
  const extra = mode === 'iptables' ? ['iptables-restore'] : mode === 'cilium' ? ['iptables-restore', 'bpftool', 'mount', 'umount'] : [];
  const tools = ['ip', 'sysctl', 'curl', 'dnsmasq', 'nft', 'conntrack', ...extra];
  const missing: string[] = [];
  for (const t of tools) if (!(await haveTool(t))) missing.push(t);
  return missing;
}

function handle(names: LabNames, scenario: LabScenario, mode: LabMode, rulesFile: string, apiObjectsPath: string): LabHandle {
  return {
    names,
    scenario,
    mode,
    stateDir: names.stateDir,
    apiObjectsPath,
    rulesFile,
    bpfRoot: readState(names.stateDir)?.bpfRoot ?? null,
    podNs(key: string): string {
      const ns = names.pods[key];
      if (ns === undefined) throw new LabError(`no pod ${JSON.stringify(key)} in the lab`, `pods: ${Object.keys(names.pods).join(', ')}`);
      return ns;
    },
  };
}

/** The scenario an instance runs: the given one, else Cilium mode's or the kube-proxy lab's. */
function scenarioFor(mode: LabMode, options: LabOptions): LabScenario {
  return options.scenario ?? (mode === 'cilium' ? LAB_CILIUM_SCENARIO : LAB_SCENARIO);
}

/**
 * Builds the lab in `mode` and returns its handle. Tears down leftovers of the same
 * prefix first, so calling it twice is safe. On failure it removes what it built and
 * rethrows. Throws {@link LabError} when not root or a tool is missing, and
 * {@link TransportError} when a command fails.
 */
export async function labUp(mode: LabMode = 'iptables', options: LabOptions = {}): Promise<LabHandle> {
  requireRoot();
  const missing = await labPrerequisites(mode);
  if (missing.length > 0) throw new LabError(`the node lab needs: ${missing.join(', ')}`, 'install them (see .ci/run)');
  const scenario = scenarioFor(mode, options);
  const names = labNames(options.prefix ?? DEFAULT_PREFIX, scenario);
  await labDown(options);
  try {
    updateState(names.stateDir, names.prefix, (s) => ({ ...s, namespaces: names.all }));
    await createTopology(names, scenario);
    const rulesFile = await loadProxyRules(names, scenario, mode);
    for (const pod of scenario.pods) {
      if (pod.role === 'web') await startWebServer(names, pod);
      if (pod.role === 'dns') {
        await startDnsServer(names, pod, scenario, async (ns, ip) => {
          try {
            return (await dnsQuery(ns, `kube-dns.kube-system.svc.${scenario.clusterDomain}`, ip, { timeoutMs: 500 })).answers.length > 0;
          } catch {
            return false;
          }
        }, options.dns);
      }
    }
    const apiObjectsPath = writeApiObjects(path.join(names.stateDir, 'api-objects.json'), scenario);
    updateState(names.stateDir, names.prefix, (s) => ({ ...s, apiObjects: apiObjectsPath }));
    return handle(names, scenario, mode, rulesFile, apiObjectsPath);
  } catch (e) {
    await labDown(options);
    throw e;
  }
}

/** What `labDown` removed. */
export interface LabDownResult {
  readonly namespaces: readonly string[];
  /** Pids still running inside the namespaces that had to be killed at the end. */
  readonly strayPids: readonly number[];
}

/**
 * Stops every process the instance started, deletes its namespaces and its state
 * directory, and the shared helper scripts (`/run/nodescope-lab/bin`) when it was the
 * last instance. Safe to call when nothing is up. Throws {@link LabError} when not root.
 */
export async function labDown(options: LabOptions = {}): Promise<LabDownResult> {
  requireRoot();
  const defaults = labNames(options.prefix ?? DEFAULT_PREFIX, options.scenario ?? LAB_SCENARIO);
  // An instance of another scenario (Cilium mode adds a pod) recorded its namespaces.
  const recorded = readState(defaults.stateDir)?.namespaces ?? [];
  const names: LabNames = { ...defaults, all: [...new Set([...defaults.all, ...recorded])] };
  const before = await existingNamespaces();
  await stopAllProcesses(names);
  const strayPids = await destroyTopology(names);
  removeCiliumMaps(names);
  removeStateDir(names.stateDir);
  removeLabScriptsIfUnused();
  return { namespaces: names.all.filter((ns) => before.has(ns)), strayPids };
}

/** The state of one instance as `status` shows it. */
export interface LabStatus {
  readonly prefix: string;
  readonly stateDir: string;
  readonly mode: LabMode | null;
  /** Namespaces of the instance that exist now. */
  readonly namespaces: readonly string[];
  /** Namespaces of the instance that do not exist. */
  readonly missingNamespaces: readonly string[];
  readonly processes: readonly (LabProcess & { readonly alive: boolean })[];
  readonly apiObjects: string | null;
  readonly rulesFile: string | null;
}

/** Reports what of the instance exists (works without any state, e.g. after a crash). */
export async function labStatus(options: LabOptions = {}): Promise<LabStatus> {
  const names = labNames(options.prefix ?? DEFAULT_PREFIX, options.scenario ?? LAB_SCENARIO);
  const existing = await existingNamespaces();
  const state = readState(names.stateDir);
  return {
    prefix: names.prefix,
    stateDir: names.stateDir,
    mode: state?.mode ?? null,
    namespaces: names.all.filter((ns) => existing.has(ns)),
    missingNamespaces: names.all.filter((ns) => !existing.has(ns)),
    processes: (state?.processes ?? []).map((p) => ({ ...p, alive: alive(p.pid) })),
    apiObjects: state?.apiObjects ?? null,
    rulesFile: state?.rulesFile ?? null,
  };
}

/**
 * Switches a running instance to `mode` (flushes the node's ruleset and conntrack, loads
 * the other mode's rules); servers and namespaces stay. Returns the new handle.
 */
export async function labSwitchMode(mode: LabMode, options: LabOptions = {}): Promise<LabHandle> {
  requireRoot();
  const scenario = options.scenario ?? LAB_SCENARIO;
  const names = labNames(options.prefix ?? DEFAULT_PREFIX, scenario);
  const state = readState(names.stateDir);
  if (state === null) throw new LabError(`no lab with prefix ${names.prefix} is up`, `run: npm run lab -- up ${mode}`);
  if (mode === 'cilium' || state.mode === 'cilium') {
    throw new LabError('Cilium mode runs its own scenario (default/api, a terminating web endpoint)', `run: npm run lab -- up ${mode}`);
  }
  const rulesFile = await loadProxyRules(names, scenario, mode);
  return handle(names, scenario, mode, rulesFile, state.apiObjects ?? '');
}

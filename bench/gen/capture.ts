/**
 * Whole generated capture bundles: one scenario ({@link generateScenario}), one traffic
 * model, and per proxy mode the probe outputs a node in that mode prints, written with
 * `writeBundle` so `nodescope --replay DIR` opens them like any capture.
 *
 * Modes and the probes they hold (others are simply not in the bundle: replay reports them
 * as not captured):
 * - `iptables`: iptables-version, iptables-save (`-c`, kube-proxy iptables mode);
 * - `nftables`: nft-version, nft-json, nft-text (kube-proxy nftables mode);
 * - `cilium`: the six `bpf-lb*` map dumps (kube-proxy replacement, no KUBE-* rules);
 * - all: uname, ip-addr, ip-route, conntrack-version, conntrack (`-o extended`),
 *   conntrack-max, conntrack-count, resolv-conf, and the API objects (`api.json`: Services,
 *   EndpointSlices, Nodes as `kubectl get … -o json` prints them; no Pods, so a large
 *   cluster's List stays under V8's string limit — the slices carry no `targetRef`).
 */
import path from 'node:path';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { CILIUM_PINS } from '../lib/cilium-maps.js';
import { fillArgv, catalog, probe } from '../../src/sources/catalog.js';
import { writeBundle, type BundleManifest } from '../../src/sources/bundle.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { apiObjectsText } from '../../test/lab/api-objects.js';
import { generateCiliumDumps } from './cilium.js';
import { generateConntrack } from './conntrack.js';
import { generateIptablesSave } from './iptables-save.js';
import { ipAddrJson, ipRouteJson, RESOLV_CONF, TOOL_VERSIONS, unameText } from './node.js';
import { generateNftListing } from './nft-listing.js';
import { GEN_CREATED_AT, generateScenario } from './scenario.js';
import { generateTraffic, type PortTraffic } from './traffic.js';

/** A proxy mode a bundle can be generated for. */
export type GenMode = 'iptables' | 'nftables' | 'cilium';
/** All modes, in the order bundles are written. */
export const GEN_MODES: readonly GenMode[] = ['iptables', 'nftables', 'cilium'];

/** What to generate: `conntrack` flows per bundle (default 1,000). */
export interface GenOptions {
  readonly services: number;
  readonly endpoints: number;
  readonly seed: string;
  readonly modes: readonly GenMode[];
  readonly conntrack?: number;
  readonly nodes?: number;
}

/** ISO time of the capture: a fixed hour after the objects were created. */
export const GEN_CAPTURED_AT = new Date(Date.parse(GEN_CREATED_AT) + 3_600_000).toISOString();

/** The parts every mode shares, computed once. */
export interface GenWorld {
  readonly options: GenOptions;
  readonly scenario: LabScenario;
  readonly traffic: readonly PortTraffic[];
  readonly apiText: string;
}

/** Scenario, traffic and API objects of `options`. Deterministic. */
export function generateWorld(options: GenOptions): GenWorld {
  const scenario = generateScenario({ services: options.services, endpoints: options.endpoints, seed: options.seed, ...(options.nodes ? { nodes: options.nodes } : {}) });
  return { options, scenario, traffic: generateTraffic(scenario, options.seed), apiText: apiObjectsText(scenario) };
}

function run(id: string, stdout: string, offsetMs: number): ProbeRun {
  const argv = fillArgv(probe(id).argv, catalog().params, {});
  return {
    id,
    argv,
    status: 'ok',
    result: {
      argv,
      stdout,
      stderr: '',
      exitCode: 0,
      startedAt: new Date(Date.parse(GEN_CAPTURED_AT) + offsetMs).toISOString(),
      // A plausible read time: a few ms plus ~1 ms per 100 kB printed.
      durationMs: 4 + Math.round(stdout.length / 100_000),
    },
  };
}

/** The probe outputs of `mode` (id → stdout), in catalog order of the ids. */
export function modeOutputs(world: GenWorld, mode: GenMode): Map<string, string> {
  const { scenario, traffic, options } = world;
  const out = new Map<string, string>([['uname', unameText(scenario)]]);
  if (mode === 'iptables') {
    out.set('iptables-version', `${TOOL_VERSIONS.iptables}\n`);
    out.set('iptables-save', generateIptablesSave(scenario, traffic, { capturedAt: GEN_CAPTURED_AT }));
  } else if (mode === 'nftables') {
    const listing = generateNftListing(scenario);
    out.set('nft-version', `${TOOL_VERSIONS.nft}\n`);
    out.set('nft-json', listing.json);
    out.set('nft-text', listing.text);
  }
  out.set('ip-addr', ipAddrJson(scenario));
  out.set('ip-route', ipRouteJson(scenario));
  const count = options.conntrack ?? 1000;
  out.set('conntrack-version', `${TOOL_VERSIONS.conntrack}\n`);
  out.set('conntrack', generateConntrack(scenario, traffic, { count, seed: options.seed, nat: mode !== 'cilium' }));
  out.set('conntrack-max', `${Math.max(262144, 2 ** Math.ceil(Math.log2(Math.max(1, count))))}\n`);
  out.set('conntrack-count', `${count}\n`);
  out.set('resolv-conf', RESOLV_CONF);
  if (mode === 'cilium') {
    const dumps = generateCiliumDumps(scenario);
    for (const [id, map] of Object.entries(CILIUM_PINS)) out.set(id, dumps.get(map) ?? '[]\n');
  }
  const order = catalog().probes.map((p) => p.id);
  return new Map([...out].sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0])));
}

/** Writes the bundle of `mode` into `dir`; returns its manifest. Throws the filesystem's errors. */
export function writeModeBundle(world: GenWorld, mode: GenMode, dir: string): BundleManifest {
  const { options, scenario } = world;
  const runs = [...modeOutputs(world, mode)].map(([id, stdout], i) => run(id, stdout, i * 7));
  return writeBundle(dir, {
    capturedAt: GEN_CAPTURED_AT,
    nodescopeVersion: '0.1.0',
    node: scenario.nodeName,
    source: { kind: 'local', label: `generated:${mode}` },
    toolVersions: { ...TOOL_VERSIONS, kernel: '6.1.0-28-amd64' },
    runs,
    apiText: world.apiText,
    note:
      `Generated by nodescope bench/gen (not captured from a node): seed ${JSON.stringify(options.seed)}, ` +
      `${options.services} Services x ${options.endpoints} endpoints on ${scenario.nodes.length} nodes, ` +
      `kube-proxy mode ${mode}, ${options.conntrack ?? 1000} conntrack flows. API objects hold no Pods.`,
  });
}

/** Writes one bundle per mode under `dir/<mode>`; returns the bundle directories. */
export function writeGeneratedBundles(dir: string, options: GenOptions): string[] {
  const world = generateWorld(options);
  return options.modes.map((mode) => {
    const bundle = path.join(dir, mode);
    writeModeBundle(world, mode, bundle);
    return bundle;
  });
}

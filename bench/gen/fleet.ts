/**
 * A generated fleet bundle (`npm run gen -- --fleet N …`): N iptables-mode nodes of one
 * generated cluster, written as `fleet capture` writes them (fleet.json, api.json once,
 * nodes/<name>/ a normal bundle each). Every node but two holds the rules kube-proxy writes
 * for the API; `gen-node-stale` still programs an endpoint the API no longer has (on the
 * first Service), `gen-node-missing` lacks the second Service. The healthy nodes' probe
 * files are hard links to one copy (the rules of this generated cluster do not depend on
 * the node: no Local traffic policy), so 500 nodes cost the disk of a few.
 *
 * `own` (a share, 0–1) makes a more realistic fleet: every second NodePort Service (about 5 %
 * of them) gets `externalTrafficPolicy: Local` and its endpoints run on the last `own × nodes` nodes, so each
 * of those nodes holds rules of its own (its KUBE-SVL- chains list its own endpoints) that no
 * other node shares — the fleet diagnosis cannot reuse their rules diagnosis.
 */
import { linkSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FLEET_FORMAT_VERSION, writeFleetManifest } from '../../src/fleet/bundle.js';
import type { BundleManifest } from '../../src/sources/bundle.js';
import { apiObjectsText } from '../../test/lab/api-objects.js';
import { generateWorld, writeModeBundle, type GenWorld } from './capture.js';
import { generateTraffic } from './traffic.js';

/** Options of {@link writeGeneratedFleet}. */
export interface GenFleetOptions {
  readonly nodes: number;
  readonly services: number;
  readonly endpoints: number;
  readonly seed: string;
  /** Share of the nodes holding endpoints of Local-policy Services (rules of their own); default 0. */
  readonly own?: number;
}

/**
 * The API world of a fleet whose `ownNodes` hold the endpoints of every second NodePort
 * Service, made `externalTrafficPolicy: Local`; `localTo(node)`: the world whose rules are
 * kube-proxy's on that node (its endpoints named as the generated node the rules are written
 * for, so the generator counts them local).
 */
function ownWorld(world: GenWorld, ownNodes: readonly string[]): { api: GenWorld; localTo: (node: string) => GenWorld } {
  let nodePorts = 0;
  let k = 0;
  const services = world.scenario.services.map((s, i) => {
    if (i < 2 || s.type !== 'NodePort' || nodePorts++ % 2 !== 0 || s.endpoints.length === 0) return s;
    const base = k++ * s.endpoints.length;
    return { ...s, externalTrafficPolicy: 'Local' as const, endpoints: s.endpoints.map((e, j) => ({ ...e, nodeName: ownNodes[(base + j) % ownNodes.length]! })) };
  });
  const scenario = { ...world.scenario, services };
  const api: GenWorld = { ...world, scenario, apiText: apiObjectsText(scenario) };
  const here = world.scenario.nodeName;
  const localTo = (node: string): GenWorld => ({ ...api, scenario: { ...scenario, services: services.map((s) => (s.externalTrafficPolicy === 'Local' ? { ...s, endpoints: s.endpoints.map((e) => (e.nodeName === node ? { ...e, nodeName: here } : e)) } : s)) } });
  return { api, localTo };
}

/** The two nodes made wrong on purpose, and what is wrong with them. */
export const GEN_FLEET_FAULTS = { stale: 'gen-node-stale', missing: 'gen-node-missing' } as const;

/** The endpoint `gen-node-stale` still programs for the first Service. */
export const GEN_STALE_IP = '10.255.255.254';

/** A world whose API is the cluster's but whose rules were written from `services`. */
function variant(world: GenWorld, services: GenWorld['scenario']['services']): GenWorld {
  const scenario = { ...world.scenario, services };
  return { ...world, scenario, traffic: generateTraffic(scenario, world.options.seed) };
}

/** Copies bundle `from` to `to` with hard links for every probe file, naming its node `node`. */
function linkBundle(from: string, to: string, node: string, apiFile: string): void {
  mkdirSync(path.join(to, 'probes'), { recursive: true });
  for (const f of readdirSync(path.join(from, 'probes'))) linkSync(path.join(from, 'probes', f), path.join(to, 'probes', f));
  linkSync(apiFile, path.join(to, 'api.json'));
  const manifest = JSON.parse(readFileSync(path.join(from, 'manifest.json'), 'utf8')) as BundleManifest;
  writeFileSync(path.join(to, 'manifest.json'), JSON.stringify({ ...manifest, node }, null, 2) + '\n');
}

/** Writes the fleet into `dir` (new or empty); returns the node names. Throws the file system's errors; `RangeError` for fewer than 3 nodes or 2 Services. */
export function writeGeneratedFleet(dir: string, options: GenFleetOptions): string[] {
  if (options.nodes < 3) throw new RangeError('--fleet needs at least 3 nodes (two are made wrong on purpose)');
  if (options.services < 2) throw new RangeError('--fleet needs at least 2 Services');
  const generated = generateWorld({ services: options.services, endpoints: options.endpoints, seed: options.seed, modes: ['iptables'], conntrack: 100, nodes: Math.min(options.nodes, 8) });
  const names = Array.from({ length: options.nodes - 2 }, (_, i) => `gen-node-${String(i).padStart(4, '0')}`);
  const ownCount = Math.min(names.length - 1, Math.round((options.own ?? 0) * options.nodes));
  const own = names.slice(names.length - ownCount);
  const { api: world, localTo } = ownCount > 0 ? ownWorld(generated, own) : { api: generated, localTo: () => generated };
  mkdirSync(path.join(dir, 'nodes'), { recursive: true });
  const apiFile = path.join(dir, 'api.json');
  writeFileSync(apiFile, world.apiText);
  const [first, ...rest] = names.slice(0, names.length - ownCount);
  writeModeBundle(world, 'iptables', path.join(dir, 'nodes', first!));
  for (const name of rest) linkBundle(path.join(dir, 'nodes', first!), path.join(dir, 'nodes', name), name, apiFile);
  for (const name of own) {
    writeModeBundle(localTo(name), 'iptables', path.join(dir, 'nodes', name));
    const file = path.join(dir, 'nodes', name, 'manifest.json');
    writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as BundleManifest), node: name }, null, 2) + '\n');
  }
  const svcs = world.scenario.services;
  const stale = svcs.map((s, i) => (i === 0 ? { ...s, endpoints: [...s.endpoints, { ip: GEN_STALE_IP, nodeName: s.endpoints[0]?.nodeName ?? world.scenario.nodeName, ready: true, serving: true, terminating: false }] } : s));
  writeModeBundle(variant(world, stale), 'iptables', path.join(dir, 'nodes', GEN_FLEET_FAULTS.stale));
  writeModeBundle(variant(world, svcs.filter((_, i) => i !== 1)), 'iptables', path.join(dir, 'nodes', GEN_FLEET_FAULTS.missing));
  const all = [...names, GEN_FLEET_FAULTS.stale, GEN_FLEET_FAULTS.missing];
  for (const name of [first!, GEN_FLEET_FAULTS.stale, GEN_FLEET_FAULTS.missing]) {
    const file = path.join(dir, 'nodes', name, 'manifest.json');
    writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as BundleManifest), node: name }, null, 2) + '\n');
  }
  writeFleetManifest(dir, { formatVersion: FLEET_FORMAT_VERSION, capturedAt: new Date(Date.parse(JSON.parse(readFileSync(path.join(dir, 'nodes', first!, 'manifest.json'), 'utf8')).capturedAt)).toISOString(), via: 'node-debug-pod', nodes: all.map((name) => ({ name, dir: `nodes/${name}`, status: 'ok' as const })) });
  return all;
}

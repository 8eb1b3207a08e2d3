/**
 * A generated fleet bundle (`npm run gen -- --fleet N …`): N iptables-mode nodes of one
 * generated cluster, written as `fleet capture` writes them (fleet.json, api.json once,
 * nodes/<name>/ a normal bundle each). Every node but two holds the rules kube-proxy writes
 * for the API; `gen-node-stale` still programs an endpoint the API no longer has (on the
 * first Service), `gen-node-missing` lacks the second Service. The healthy nodes' probe
 * files are hard links to one copy (the rules of this generated cluster do not depend on
 * the node: no Local traffic policy), so 500 nodes cost the disk of a few.
 */
import { linkSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { FLEET_FORMAT_VERSION, writeFleetManifest } from '../../src/fleet/bundle.js';
import type { BundleManifest } from '../../src/sources/bundle.js';
import { generateWorld, writeModeBundle, type GenWorld } from './capture.js';
import { generateTraffic } from './traffic.js';

/** Options of {@link writeGeneratedFleet}. */
export interface GenFleetOptions {
  readonly nodes: number;
  readonly services: number;
  readonly endpoints: number;
  readonly seed: string;
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
  const world = generateWorld({ services: options.services, endpoints: options.endpoints, seed: options.seed, modes: ['iptables'], conntrack: 100, nodes: Math.min(options.nodes, 8) });
  mkdirSync(path.join(dir, 'nodes'), { recursive: true });
  const apiFile = path.join(dir, 'api.json');
  writeFileSync(apiFile, world.apiText);
  const names = Array.from({ length: options.nodes - 2 }, (_, i) => `gen-node-${String(i).padStart(4, '0')}`);
  const [first, ...rest] = names;
  writeModeBundle(world, 'iptables', path.join(dir, 'nodes', first!));
  for (const name of rest) linkBundle(path.join(dir, 'nodes', first!), path.join(dir, 'nodes', name), name, apiFile);
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

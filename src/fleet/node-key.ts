/**
 * The key of a node's rules diagnosis (`diagnoseRules`, src/analysis/diagnose/diagnose.ts):
 * two nodes with the same key get the same rules diagnosis, so a fleet diagnoses it once.
 * The key is a digest of everything that diagnosis reads:
 * - the node's rules parts (every probe of a snapshot part but conntrack), their status and
 *   stderr, with the traffic counters left out (rules-digest.ts), the nftables table names
 *   and the interface names (the proxy mode's evidence), and the probes the plan skipped;
 * - what it reads of the API objects as seen from the node ({@link nodeFactsOf}): the node's
 *   zone, its endpoints of the Services whose expectation depends on where an endpoint runs
 *   (a Local traffic policy, a traffic distribution, topology hints), the node's name itself
 *   when a Service is routed by node name (PreferSameNode, `hints.forNodes`), and its IPs
 *   when the node has Cilium LB maps (Cilium's NodePort frontends name them).
 * The conntrack layer is not in the key: it is per node (`finishDiagnosis`).
 */
import type { ApiObjects } from '../model/k8s.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { nodeAddressesOf } from '../analysis/compare-modes-input.js';
import { buildServiceView } from '../analysis/service-view.js';
import type { ServiceRow } from '../analysis/service-types.js';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { partProbes } from '../collect/parts.js';
import path from 'node:path';
import type { BundleManifest } from '../sources/bundle.js';
import { catalog } from '../sources/catalog.js';
import { counterFreeDigest, digest } from './rules-digest.js';

/** Parts whose probes are not in the key: the conntrack layer is diagnosed per node. */
const PER_NODE_PARTS: ReadonlySet<string> = new Set(['conntrack', 'ciliumConntrack']);

/** Traffic distributions routed by zone (the node's zone is in the key), per KEP-4444/KEP-3015. */
const BY_ZONE: ReadonlySet<string> = new Set(['PreferClose', 'PreferSameZone']);

/** Whether where an endpoint runs changes what a node should program for `row`. */
function locality(row: ServiceRow): boolean {
  return row.externalTrafficPolicy === 'Local' || row.internalTrafficPolicy === 'Local' || row.trafficDistribution !== undefined || row.endpoints.some((e) => e.hintsForZones.length > 0 || e.hintsForNodes.length > 0);
}

/**
 * What a node's rules diagnosis reads of `api` as seen from node `name` (see the module
 * comment), as a string to digest; the API objects are indexed once. Pure.
 */
export function nodeFactsOf(api: ApiObjects): (name: string) => string {
  const rows = buildServiceView(api).rows;
  const byName = rows.some((r) => (r.trafficDistribution !== undefined && !BY_ZONE.has(r.trafficDistribution)) || r.endpoints.some((e) => e.hintsForNodes.length > 0));
  const local = new Map<string, string[]>();
  for (const row of rows) {
    if (!locality(row)) continue;
    for (const e of row.endpoints) {
      if (e.nodeName === undefined) continue;
      const list = local.get(e.nodeName) ?? [];
      list.push(`${row.namespace}/${row.name} ${e.sliceName} ${e.address}`);
      local.set(e.nodeName, list);
    }
  }
  const zones = new Map(api.nodes.map((n) => [n.meta.name, n.zone ?? '']));
  return (name) => JSON.stringify([zones.has(name) ? zones.get(name) : null, byName ? name : null, (local.get(name) ?? []).sort()]);
}

/** Digests of probe files already read, by their raw digest (many nodes hold the same bytes). */
export type DigestMemo = Map<string, string>;

/** One buffer the probe files are read into in turn (megabytes per node, hundreds of nodes). */
let scratch = Buffer.alloc(0);

/** The bytes of `file` in {@link scratch} (valid until the next call); null when there is no such file. */
function readInto(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    let size = fstatSync(fd).size;
    if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, scratch.length * 2));
    let at = 0;
    for (let n = 1; n > 0 && at < size; at += n) n = readSync(fd, scratch, at, size - at, at);
    size = at;
    return scratch.subarray(0, size);
  } finally {
    closeSync(fd);
  }
}

/** The counter-free digest of a bundle file (`''` for none); `memo` saves the normalizing of bytes seen before. */
function fileDigest(dir: string, file: string, format: string | undefined, memo: DigestMemo): string {
  // readBundle checked every manifest file to stay inside the bundle (bundleFilePath).
  const bytes = readInto(path.join(dir, file));
  if (bytes === null) return '';
  const raw = counterFreeDigest(bytes, undefined);
  let d = memo.get(`${format ?? ''} ${raw}`);
  if (d === undefined) memo.set(`${format ?? ''} ${raw}`, (d = format === undefined ? raw : counterFreeDigest(bytes, format)));
  return d;
}

/**
 * The key of the rules diagnosis of the bundle in `dir`, as read by `readBundle` (which checks
 * its files stay inside it; see the module comment).
 * `light`: the node's snapshot of its cheap probes (identity, addresses, nftables table
 * names); `facts`: {@link nodeFactsOf} of the fleet's API objects; `node`: the fleet's
 * name of the node (its expected backends are computed for it). Throws the file system's errors.
 */
export function rulesKey(dir: string, manifest: BundleManifest, light: NodeSnapshot, api: ApiObjects, facts: (name: string) => string, node: string, memo: DigestMemo): string {
  const parts = partProbes();
  const partOf = new Map<string, string>();
  for (const [part, ids] of Object.entries(parts)) for (const id of ids) partOf.set(id, part);
  const parserOf = new Map(catalog().probes.map((p) => [p.id, p.parser]));
  const probes: string[][] = [];
  for (const p of manifest.probes) {
    const part = partOf.get(p.id);
    if (part === undefined || PER_NODE_PARTS.has(part)) continue;
    probes.push([p.id, JSON.stringify(p.argv), p.status, String(p.exitCode), fileDigest(dir, p.stdoutFile, parserOf.get(p.id), memo), fileDigest(dir, p.stderrFile, undefined, memo)]);
  }
  const lbRead = manifest.probes.some((p) => partOf.get(p.id) === 'lb' && p.status === 'ok');
  return digest(
    JSON.stringify({
      probes,
      skipped: manifest.skipped ?? [],
      interfaces: (light.addrs?.value ?? []).map((i) => i.ifname),
      nftTables: light.nftTableNames ?? null,
      node: [facts(light.meta.node), light.meta.node === node ? null : facts(node)],
      ips: lbRead ? nodeAddressesOf(light, api).ips : null,
    }),
  );
}

/**
 * The fleet bundle: one capture bundle per node plus one copy of the API objects.
 *
 * ```
 * DIR/fleet.json          FleetManifest (below)
 * DIR/api.json            the API objects, once (as `kubectl get … -o json` prints them)
 * DIR/nodes/<name>/       a normal capture bundle (src/sources/bundle.ts), readable alone
 *                         with --replay; its api.json is a hard link to DIR/api.json
 *                         (the same bytes on disk once, and each node bundle complete)
 * ```
 * A fleet bundle from someone else is untrusted input like a node bundle: every `dir` of
 * fleet.json must be `nodes/<one safe name>` inside DIR (see {@link readFleetManifest}).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ParseError, said, UserError } from '../errors.js';

/** The fleet format version this code writes and reads. */
export const FLEET_FORMAT_VERSION = 1;

/** How one node's capture ended: `ok` (its bundle is complete) or `failed` (`reason` says why). */
export type FleetNodeStatus = 'ok' | 'failed';

/** One node of fleet.json. `dir` is relative to the fleet directory (`nodes/<name>`). */
export interface FleetNodeEntry {
  readonly name: string;
  readonly dir: string;
  readonly status: FleetNodeStatus;
  readonly reason?: string;
  /** Milliseconds the node's capture took (open, probes, write), when it was timed. */
  readonly durationMs?: number;
}

/** `fleet.json`. `capturedAt`: ISO-8601 UTC start of the fleet capture; `cluster`: the kubeconfig context's server, when read through the API. */
export interface FleetManifest {
  readonly formatVersion: number;
  readonly capturedAt: string;
  readonly cluster?: string;
  /** How the nodes were read: `node-debug-pod` (one debug pod per node) or `ssh`. */
  readonly via?: 'node-debug-pod' | 'ssh';
  readonly nodes: readonly FleetNodeEntry[];
}

/** A node name as a directory name: Kubernetes node names are DNS-1123 subdomains; anything else (an SSH `user@host:port`) is made safe. */
export function nodeDirName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_');
  return safe === '' ? '_' : safe.slice(0, 200);
}

/** `nodes/<safe name>` for node `name`, relative to the fleet directory. */
export function nodeDirOf(name: string): string {
  return `nodes/${nodeDirName(name)}`;
}

/** Absolute path of `DIR/api.json`. */
export function fleetApiPath(dir: string): string {
  return path.join(dir, 'api.json');
}

/**
 * Writes `fleet.json` atomically (a temporary file renamed over it), so an interrupted
 * capture leaves the last complete list, never half a file. Nodes are sorted by name.
 */
export function writeFleetManifest(dir: string, manifest: FleetManifest): void {
  mkdirSync(dir, { recursive: true });
  const sorted: FleetManifest = { ...manifest, nodes: [...manifest.nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
  const tmp = path.join(dir, '.fleet.json.tmp');
  writeFileSync(tmp, JSON.stringify(sorted, null, 2) + '\n');
  renameSync(tmp, path.join(dir, 'fleet.json'));
}

/** Whether `dir` holds a fleet bundle (a fleet.json). */
export function isFleetDir(dir: string): boolean {
  return existsSync(path.join(dir, 'fleet.json'));
}

const DIR_PATTERN = /^nodes\/[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

/**
 * Reads and checks `DIR/fleet.json`. Throws `UserError` when there is none or a node's
 * `dir` is not `nodes/<safe name>` (a fleet.json naming folders outside itself), and
 * `ParseError` when it is not JSON or of an unknown format version.
 */
export function readFleetManifest(dir: string): FleetManifest {
  const file = path.join(dir, 'fleet.json');
  if (!existsSync(file) || !statSync(file).isFile()) throw new UserError(said('ue.fleet.notBundle', { dir }), said('ue.fleet.captureOne'));
  const text = readFileSync(file, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ParseError(`fleet.json is not JSON: ${(e as Error).message}`, file, 0, text.slice(0, 200));
  }
  const m = json as Partial<FleetManifest> | null;
  if (m === null || typeof m !== 'object' || m.formatVersion !== FLEET_FORMAT_VERSION || !Array.isArray(m.nodes)) {
    throw new ParseError(`unsupported fleet format version ${String(m?.formatVersion)} (this nodescope reads ${FLEET_FORMAT_VERSION})`, file, 0, '');
  }
  m.nodes.forEach((n, i) => {
    if (typeof n?.name !== 'string' || typeof n.dir !== 'string' || !DIR_PATTERN.test(n.dir)) {
      throw new UserError(said('ue.fleet.badDir', { i, dir: String(JSON.stringify(n?.dir)) }), said('ue.fleet.edited'));
    }
    if (n.status !== 'ok' && n.status !== 'failed') throw new ParseError(`fleet.json nodes[${i}].status ${JSON.stringify(n.status)} is neither "ok" nor "failed"`, file, 0, '');
  });
  return m as FleetManifest;
}

/**
 * `nodescope fleet capture`: one capture bundle per node into a fleet bundle
 * (src/fleet/bundle.ts), at most `parallel` nodes at a time. Each node is opened by the
 * caller's `openNode` (a node-debug pod through the API, or SSH) and captured with the
 * single-node capture (src/collect/capture.ts) — the same probe catalog, nothing else runs.
 * A node that fails or passes its timeout is recorded with the reason and its source is
 * closed (its pod deleted); the others go on. fleet.json is rewritten after every node, so
 * an interrupted capture leaves a readable bundle of the nodes finished.
 *
 * What a node's source creates is deleted by the source itself on close and on every exit
 * path (the debug pod's undo in src/cleanup.ts); this module only makes sure each opened
 * source is closed, also one whose open finishes after its node timed out.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureBundle } from '../collect/capture.js';
import { closeSource, type OpenedSource } from '../sources/open.js';
import { FLEET_FORMAT_VERSION, fleetApiPath, nodeDirOf, writeFleetManifest, type FleetManifest, type FleetNodeEntry } from './bundle.js';
import { durationText, progressLine } from './progress.js';

/** Options of {@link captureFleet}. Times in milliseconds. */
export interface FleetCaptureOptions {
  /** The fleet directory (new or empty; the caller checks). */
  readonly dir: string;
  /** Node names, in the order to start them. */
  readonly nodes: readonly string[];
  /** How many nodes at once (≥ 1). */
  readonly parallel: number;
  /** One node's open + capture may take at most this long; then it is recorded as failed. */
  readonly nodeTimeoutMs: number;
  /** Opens one node's source (creates its debug pod, connects over SSH). */
  readonly openNode: (name: string) => Promise<OpenedSource>;
  /** The API objects, written once to DIR/api.json and linked into every node bundle. */
  readonly apiText?: string;
  /** The cluster (kubeconfig server) for fleet.json. */
  readonly cluster?: string;
  readonly via: FleetManifest['via'];
  /** Probe parameters (`bpfRoot`). */
  readonly params?: Readonly<Record<string, string | undefined>>;
  /** Progress lines (the CLI writes them to stderr). */
  readonly progress?: (line: string) => void;
  /** How often the progress line repeats while nodes run (default 5,000 ms; 0: only on changes). */
  readonly tickMs?: number;
  readonly now?: () => number;
}

/** Rejects with a timeout after `ms` (the timer does not hold the process). */
class NodeTimeout extends Error {}
function deadline(ms: number): { promise: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NodeTimeout()), ms);
    timer.unref();
  });
  promise.catch(() => undefined);
  return { promise, clear: () => clearTimeout(timer) };
}

/** A reason in one line, for fleet.json and the progress line. */
function reasonOf(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.replace(/\s*\n\s*/g, ' ').trim() || 'failed without a message';
}

/**
 * Captures one node into `DIR/nodes/<name>`: open, capture, close. Never throws: a
 * failure is the entry's reason. On a timeout the source is closed now (an open still in
 * flight is closed when it settles).
 */
async function captureNode(name: string, options: FleetCaptureOptions): Promise<FleetNodeEntry> {
  const now = options.now ?? Date.now;
  const dir = nodeDirOf(name);
  const abs = path.join(options.dir, dir);
  const start = now();
  const limit = deadline(options.nodeTimeoutMs);
  let source: OpenedSource | undefined;
  let stage = 'opening the node';
  const opening = options.openNode(name);
  try {
    source = await Promise.race([opening, limit.promise]);
    stage = 'running the probes';
    const shared: OpenedSource = { ...source, apiText: options.apiText, apiOrigin: options.apiText !== undefined ? 'api.json' : undefined };
    // Without the live feed: the fleet's one copy of the API objects is the bundle's.
    delete (shared as { api?: unknown }).api;
    await Promise.race([
      captureBundle(shared, abs, {
        dns: false,
        node: name,
        ...(options.apiText !== undefined ? { apiLink: fleetApiPath(options.dir) } : {}),
        ...(options.params ? { params: options.params } : {}),
        note: `fleet capture (${options.via ?? 'api'})`,
      }),
      limit.promise,
    ]);
    return { name, dir, status: 'ok', durationMs: now() - start };
  } catch (e) {
    const reason = e instanceof NodeTimeout ? `timed out after ${durationText(options.nodeTimeoutMs)} while ${stage}` : reasonOf(e);
    if (source) await closeSource(source).catch(() => undefined);
    else void opening.then((s) => closeSource(s), () => undefined).catch(() => undefined);
    rmSync(abs, { recursive: true, force: true });
    return { name, dir, status: 'failed', reason, durationMs: now() - start };
  } finally {
    limit.clear();
    // The source's live API feed (if it opened one) is not used by the capture: close it.
    await source?.api?.close().catch(() => undefined);
  }
}

/**
 * Captures every node of `options.nodes` into the fleet directory, `parallel` at a time,
 * and returns the manifest written (also after failures: a failed node is an entry with
 * its reason). Throws only the file system's errors for the fleet directory itself.
 */
export async function captureFleet(options: FleetCaptureOptions): Promise<FleetManifest> {
  const now = options.now ?? Date.now;
  const say = options.progress ?? (() => undefined);
  const start = now();
  mkdirSync(path.join(options.dir, 'nodes'), { recursive: true });
  if (options.apiText !== undefined) writeFileSync(fleetApiPath(options.dir), options.apiText);
  const base = { formatVersion: FLEET_FORMAT_VERSION, capturedAt: new Date(start).toISOString(), ...(options.cluster ? { cluster: options.cluster } : {}), via: options.via };
  const entries: FleetNodeEntry[] = [];
  let running = 0;
  const tally = () => ({ total: options.nodes.length, done: entries.length, failed: entries.filter((e) => e.status === 'failed').length, running });
  writeFleetManifest(options.dir, { ...base, nodes: entries });
  const tick = (options.tickMs ?? 5000) > 0 ? setInterval(() => say(progressLine(tally(), now() - start)), options.tickMs ?? 5000) : undefined;
  tick?.unref();
  const queue = [...options.nodes];
  const worker = async (): Promise<void> => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      running++;
      const entry = await captureNode(name, options);
      running--;
      entries.push(entry);
      writeFleetManifest(options.dir, { ...base, nodes: entries });
      say(entry.status === 'ok' ? `fleet: ${name} captured in ${durationText(entry.durationMs ?? 0)}` : `fleet: ${name} failed: ${entry.reason}`);
      say(progressLine(tally(), now() - start));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.parallel, options.nodes.length)) }, worker));
  } finally {
    if (tick) clearInterval(tick);
  }
  const manifest = { ...base, nodes: entries };
  writeFleetManifest(options.dir, manifest);
  return manifest;
}

/** Snapshots of the project's own fixture bundles, read through the real replay pipeline. */
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { packageRoot } from '../../src/paths.js';
import { loadSnapshot, staticSession, type SessionLike } from '../../src/collect/session.js';
import { tourCaptures, type Tour } from '../../src/tour/model.js';
import { ReplayTransport } from '../../src/sources/replay.js';

/** The directory of fixture bundle `name` (e.g. `lab-iptables`). */
export function fixtureDir(name: string): string {
  return path.join(packageRoot(), 'fixtures', name);
}

/** Loads a bundle directory as the app would (`--replay DIR`). */
export async function snapshotOfDir(dir: string): Promise<NodeSnapshot> {
  const transport = new ReplayTransport(dir);
  const apiText = transport.apiText();
  const { snapshot } = await loadSnapshot({ transport, live: false, ...(apiText !== undefined ? { apiText } : {}) });
  return snapshot;
}

/** Loads fixture bundle `name`. */
export function snapshotOf(name: string): Promise<NodeSnapshot> {
  return snapshotOfDir(fixtureDir(name));
}

/** A writable copy of fixture bundle `name` in a temp directory, to damage on purpose. */
export function copyFixture(name: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `nodescope-${name}-`));
  cpSync(fixtureDir(name), dir, { recursive: true });
  return dir;
}

/** A static session per capture a tour uses, keyed by capture name (the tour's `sessions`). */
export async function tourSessions(tour: Tour): Promise<Map<string, SessionLike>> {
  const out = new Map<string, SessionLike>();
  for (const c of tourCaptures(tour)) out.set(c, staticSession(await snapshotOf(c)));
  return out;
}

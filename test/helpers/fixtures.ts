/** Snapshots of the project's own fixture bundles, read through the real replay pipeline. */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { afterAll } from 'vitest';
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

/**
 * A maker of temp directories named `nodescope-<prefix>-…`, removed when the calling test
 * file ends (registers an `afterAll`: call it at a test file's top level).
 */
export function tempDirs(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(path.join(tmpdir(), `nodescope-${prefix}-`));
    made.push(dir);
    return dir;
  };
}

/** A static session per capture a tour uses, keyed by capture name (the tour's `sessions`). */
export async function tourSessions(tour: Tour): Promise<Map<string, SessionLike>> {
  const out = new Map<string, SessionLike>();
  for (const c of tourCaptures(tour)) out.set(c, staticSession(await snapshotOf(c)));
  return out;
}

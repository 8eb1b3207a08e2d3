/**
 * `nodescope capture`: runs every node probe of a source once and writes a
 * bundle (src/sources/bundle.ts) with the API objects. Secrets never enter it:
 * only probe outputs, the API objects text, and the source's kind and label.
 */
import { buildSnapshot } from './analysis/build-snapshot.js';
import { packageVersion } from './paths.js';
import { writeBundle, type BundleManifest } from './sources/bundle.js';
import type { OpenedSource } from './sources/open.js';
import { runProbes } from './sources/probe-runner.js';

/** Options of {@link captureBundle}. */
export interface CaptureOptions {
  readonly params?: Readonly<Record<string, string | undefined>>;
  readonly note?: string;
  readonly now?: () => number;
}

/** Captures `source` into `dir`; returns the manifest. Throws the filesystem's errors. */
export async function captureBundle(source: OpenedSource, dir: string, options: CaptureOptions = {}): Promise<BundleManifest> {
  const capturedAt = new Date((options.now ?? Date.now)()).toISOString();
  const runs = await runProbes(source.transport, { ...(options.params ? { params: options.params } : {}) });
  await source.transport.close();
  const snapshot = buildSnapshot({ runs, source: { kind: source.transport.kind, label: source.transport.label, live: source.live }, capturedAt, ...(source.apiText !== undefined ? { apiText: source.apiText } : {}) });
  return writeBundle(dir, {
    capturedAt,
    nodescopeVersion: packageVersion(),
    node: snapshot.meta.node,
    source: { kind: source.transport.kind, label: source.transport.label },
    toolVersions: snapshot.meta.toolVersions,
    runs,
    ...(source.apiText !== undefined ? { apiText: source.apiText } : {}),
    ...(options.note ? { note: options.note } : {}),
  });
}

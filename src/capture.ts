/**
 * `nodescope capture`: runs every node probe of a source once and writes a
 * bundle (src/sources/bundle.ts) with the API objects. Secrets never enter it:
 * only probe outputs, the API objects text, and the source's kind and label.
 */
import { buildSnapshot } from './analysis/build-snapshot.js';
import { packageVersion } from './paths.js';
import { writeBundle, type BundleManifest } from './sources/bundle.js';
import { closeSource, type OpenedSource } from './sources/open.js';
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
  const params = options.params ? { params: options.params } : {};
  const runs = await runProbes(source.transport, params);
  if (source.ciliumAgent) runs.push(...(await runProbes(source.ciliumAgent, { ...params, where: 'cilium-agent' })));
  // A live feed's objects as of the end of the probes (the watch may have moved on since open).
  const apiText = source.api ? source.api.text() : source.apiText;
  await closeSource(source);
  const snapshot = buildSnapshot({ runs, source: { kind: source.transport.kind, label: source.transport.label, live: source.live }, capturedAt, ...(apiText !== undefined ? { apiText } : {}) });
  return writeBundle(dir, {
    capturedAt,
    nodescopeVersion: packageVersion(),
    node: snapshot.meta.node,
    source: { kind: source.transport.kind, label: source.transport.label },
    toolVersions: snapshot.meta.toolVersions,
    runs,
    ...(apiText !== undefined ? { apiText } : {}),
    ...(options.note ? { note: options.note } : {}),
  });
}

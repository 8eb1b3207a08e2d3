/**
 * The replay transport: a real {@link Transport} that answers each catalog argv
 * with what a capture bundle recorded for it. An argv the bundle never ran is
 * answered as "missing" (not captured), like a binary absent on a node — except that
 * the same catalog argv with another `{bpfRoot}` (a capture made with `--bpf-root DIR`)
 * is answered with that recording: where the node keeps its maps was fixed when it was
 * captured.
 */
import { bundleFilePath, readBundle, readBundleFile, readBundleFilePieces, type Bundle, type ManifestProbe } from './bundle.js';
import { catalog } from './catalog.js';
import { matchesTemplate, probeForArgv } from './ssh-command.js';
import type { PiecedExecResult, PieceReader } from './pieces.js';
import type { ExecOptions, ExecResult, Transport } from './transport.js';

/** Parameters that say where the node keeps things (not what to ask): a capture fixes them. */
const NODE_LAYOUT_PARAMS: ReadonlySet<string> = new Set(['bpfRoot']);

/** Replays a capture bundle (its directory or its manifest.json). Throws like {@link readBundle}. */
export class ReplayTransport implements Transport, PieceReader {
  readonly kind = 'replay' as const;
  readonly label: string;
  readonly bundle: Bundle;

  /** `dir`: the bundle's directory or manifest.json (read here), or a bundle already read. */
  constructor(dir: string | Bundle) {
    this.bundle = typeof dir === 'string' ? readBundle(dir) : dir;
    this.label = `replay:${this.bundle.dir}`;
  }

  async exec(argv: readonly string[], _options: ExecOptions): Promise<ExecResult> {
    return this.read(argv, false);
  }

  /** {@link exec}, with an `ok` run's stdout as pieces read from the bundle file ({@link PieceReader}). */
  async execInPieces(argv: readonly string[], _options: ExecOptions): Promise<PiecedExecResult> {
    return this.read(argv, true);
  }

  private read(argv: readonly string[], inPieces: boolean): PiecedExecResult {
    const key = JSON.stringify(argv);
    const entry = this.bundle.manifest.probes.find((p) => JSON.stringify(p.argv) === key) ?? this.sameTemplate(argv);
    if (!entry) {
      return { argv: [...argv], stdout: '', stderr: 'not in this capture\n', exitCode: null, missing: true, notCaptured: true, startedAt: this.bundle.manifest.capturedAt, durationMs: 0 };
    }
    // A caller that parses in pieces gets them from the file (a failed run's output is read
    // whole: its text decides whether there is anything to parse).
    const pieces = inPieces && entry.status === 'ok';
    const bundle = this.bundle;
    const field = `probes[${bundle.manifest.probes.indexOf(entry)}]`;
    return {
      argv: entry.executedArgv,
      stdout: pieces ? '' : (readBundleFile(bundle, entry.stdoutFile, `${field}.stdoutFile`) ?? ''),
      ...(pieces ? { stdoutPieces: () => readBundleFilePieces(bundle, entry.stdoutFile), stdoutPath: bundleFilePath(bundle.dir, entry.stdoutFile, `${field}.stdoutFile`) } : {}),
      stderr: readBundleFile(this.bundle, entry.stderrFile, `${field}.stderrFile`) ?? '',
      exitCode: entry.exitCode,
      startedAt: entry.startedAt,
      durationMs: entry.durationMs,
      ...(typeof entry.cpuMs === 'number' ? { cpuMs: entry.cpuMs } : {}),
      ...(entry.status === 'missing' ? { missing: true } : {}),
      ...(entry.status === 'timeout' ? { timedOut: true } : {}),
    };
  }

  /**
   * The recorded run of `argv`'s catalog template (same probe, same argv or alternative)
   * with other values of {@link NODE_LAYOUT_PARAMS} only — never a question's parameters.
   */
  private sameTemplate(argv: readonly string[]): ManifestProbe | undefined {
    const cat = catalog();
    const probe = probeForArgv(argv, cat);
    const template = probe && [probe.argv, ...probe.alternatives].find((t) => matchesTemplate(t, argv, cat));
    const params = [...(template ?? []).join(' ').matchAll(/\{([A-Za-z][A-Za-z0-9]*)\}/g)].map((m) => m[1]!);
    if (!probe || !template || params.length === 0 || !params.every((p) => NODE_LAYOUT_PARAMS.has(p))) return undefined;
    return this.bundle.manifest.probes.find((p) => p.id === probe.id && matchesTemplate(template, p.argv, cat));
  }

  /** The API objects text of the bundle, or undefined when it has none. */
  apiText(): string | undefined {
    return this.bundle.manifest.api ? readBundleFile(this.bundle, this.bundle.manifest.api.file, 'api.file') : undefined;
  }

  async close(): Promise<void> {}
}

// Compile-time proof that replay is a real implementation of the interface.
void (null as unknown as ReplayTransport satisfies Transport);

/**
 * The replay transport: a real {@link Transport} that answers each catalog argv
 * with what a capture bundle recorded for it. An argv the bundle never ran is
 * answered as "missing" (not captured), like a binary absent on a node.
 */
import { readBundle, readBundleFile, type Bundle } from './bundle.js';
import type { ExecOptions, ExecResult, Transport } from './transport.js';

/** Replays a capture bundle directory. Throws like {@link readBundle}. */
export class ReplayTransport implements Transport {
  readonly kind = 'replay' as const;
  readonly label: string;
  readonly bundle: Bundle;

  constructor(dir: string) {
    this.bundle = readBundle(dir);
    this.label = `replay:${dir}`;
  }

  async exec(argv: readonly string[], _options: ExecOptions): Promise<ExecResult> {
    const key = JSON.stringify(argv);
    const entry = this.bundle.manifest.probes.find((p) => JSON.stringify(p.argv) === key);
    if (!entry) {
      return { argv: [...argv], stdout: '', stderr: 'not in this capture\n', exitCode: null, missing: true, startedAt: this.bundle.manifest.capturedAt, durationMs: 0 };
    }
    return {
      argv: entry.executedArgv,
      stdout: readBundleFile(this.bundle, entry.stdoutFile) ?? '',
      stderr: readBundleFile(this.bundle, entry.stderrFile) ?? '',
      exitCode: entry.exitCode,
      startedAt: entry.startedAt,
      durationMs: entry.durationMs,
      ...(entry.status === 'missing' ? { missing: true } : {}),
      ...(entry.status === 'timeout' ? { timedOut: true } : {}),
    };
  }

  /** The API objects text of the bundle, or undefined when it has none. */
  apiText(): string | undefined {
    return this.bundle.manifest.api ? readBundleFile(this.bundle, this.bundle.manifest.api.file) : undefined;
  }

  async close(): Promise<void> {}
}

// Compile-time proof that replay is a real implementation of the interface.
void (null as unknown as ReplayTransport satisfies Transport);

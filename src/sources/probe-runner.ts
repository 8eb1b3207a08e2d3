/**
 * Runs catalog probes through a transport and keeps what each one printed,
 * exactly as printed. Alternatives are tried in order when a binary is missing.
 * A failing probe never stops the others.
 */
import { BugError } from '../errors.js';
import { catalog, fillArgv, type Catalog, type ProbeSpec } from './catalog.js';
import { readsInPieces, type PiecedExecResult } from './pieces.js';
import type { ExecResult, Transport } from './transport.js';

/** How a probe ended: `ok` (exit 0), `failed` (non-zero), `missing` (binary absent), `timeout`. */
export type ProbeStatus = 'ok' | 'failed' | 'missing' | 'timeout';

/**
 * One probe's outcome.
 * - `argv`: the catalog argv that produced `result` (alternatives resolved, placeholders
 *   filled) — the key a replay uses; `result.argv` is what was really executed
 *   (with transport prefixes such as `ip netns exec NAME`).
 */
export interface ProbeRun {
  readonly id: string;
  readonly argv: readonly string[];
  readonly status: ProbeStatus;
  readonly result: PiecedExecResult;
}

/** Classifies an exec result. */
export function statusOf(r: ExecResult): ProbeStatus {
  if (r.missing) return 'missing';
  if (r.timedOut) return 'timeout';
  return r.exitCode === 0 ? 'ok' : 'failed';
}

/**
 * Options of {@link runProbe}: `allowWrites` must be true to run a `readOnly: false`
 * probe (the live trace table, behind `--allow-trace`); `timeoutMs` replaces the
 * catalog's timeout (milliseconds; the trace monitor's bound is chosen by the user).
 */
export interface RunProbeOptions {
  readonly allowWrites?: boolean;
  readonly timeoutMs?: number;
  /** Ask for stdout in pieces when the transport can (`src/sources/pieces.ts`). */
  readonly stdoutAsPieces?: boolean;
  /** Stops the probe when aborted (see `ExecOptions.signal`). */
  readonly signal?: AbortSignal;
  /** The lines written to a `stdinLine` probe's stdin (each checked against the catalog's pattern). */
  readonly stdin?: readonly string[];
  /** Pipes read on a thread of their own where the transport can (`ExecOptions.readOffThread`). */
  readonly readOffThread?: boolean;
}

/**
 * Runs one probe: its argv, then each alternative while the binary is missing.
 * `params` fills `{placeholders}` (validated; throws `UserError` on a bad value).
 * Throws `BugError` for a probe that writes (`readOnly: false`) unless
 * `options.allowWrites` is true, and for stdin lines that a probe does not declare
 * (`stdinLine`), that do not match its pattern, or that the transport cannot feed
 * (`feedsStdin`); nothing is executed then.
 */
export async function runProbe(
  transport: Transport,
  spec: ProbeSpec,
  params: Readonly<Record<string, string | undefined>> = {},
  cat: Catalog = catalog(),
  options: RunProbeOptions = {},
): Promise<ProbeRun> {
  if (!spec.readOnly && options.allowWrites !== true) {
    throw new BugError(`probe ${spec.id} writes to the node and was run without allowWrites (only --allow-trace may)`);
  }
  const stdin = stdinText(transport, spec, options.stdin);
  const candidates = [spec.argv, ...spec.alternatives].map((a) => fillArgv(a, cat.params, params));
  let last: ProbeRun | undefined;
  let firstFailure: ProbeRun | undefined;
  for (const argv of candidates) {
    if (options.signal?.aborted) break;
    const execOptions = { timeoutMs: options.timeoutMs ?? spec.timeoutMs, ...(options.signal ? { signal: options.signal } : {}), ...(stdin !== undefined ? { stdin } : {}), ...(options.readOffThread ? { readOffThread: true } : {}) };
    const result = options.stdoutAsPieces && readsInPieces(transport) ? await transport.execInPieces(argv, execOptions) : await transport.exec(argv, execOptions);
    last = { id: spec.id, argv, status: statusOf(result), result };
    if (last.status === 'failed' && spec.alternativesOnFailure) {
      firstFailure ??= last;
      continue;
    }
    if (last.status !== 'missing') return last;
  }
  if (!last) {
    const argv = candidates[0]!;
    last = { id: spec.id, argv, status: 'failed', result: { argv, stdout: '', stderr: 'stopped before it started\n', exitCode: null, startedAt: new Date().toISOString(), durationMs: 0 } };
  }
  // Every pin name failed: the current name's failure says most (older names are fallbacks).
  return firstFailure ?? last;
}

/** The stdin text of one run: `lines` checked against the probe's declared `stdinLine` (see {@link runProbe}). */
function stdinText(transport: Transport, spec: ProbeSpec, lines: readonly string[] | undefined): string | undefined {
  if (lines === undefined && !spec.stdinLine) return undefined;
  if (!spec.stdinLine || lines === undefined) throw new BugError(`probe ${spec.id}: ${spec.stdinLine ? 'reads stdin and was given none' : 'declares no stdin'}`);
  if (!transport.feedsStdin) throw new BugError(`probe ${spec.id}: the ${transport.kind} transport cannot feed stdin`);
  const bad = lines.find((l) => !spec.stdinLine!.test(l));
  if (bad !== undefined) throw new BugError(`probe ${spec.id}: stdin line ${JSON.stringify(bad)} does not match ${spec.stdinLine.source}`);
  return lines.map((l) => `${l}\n`).join('');
}

/** Options of {@link runProbes}. `concurrency`: probes in flight at once (default 4). */
export interface RunProbesOptions {
  readonly ids?: readonly string[];
  readonly where?: 'node' | 'cilium-agent';
  readonly params?: Readonly<Record<string, string | undefined>>;
  readonly concurrency?: number;
  readonly catalog?: Catalog;
  /** Probes whose stdout the caller reads in pieces, when the transport can (`src/sources/pieces.ts`). */
  readonly stdoutAsPieces?: readonly string[];
  /**
   * The heavy probes' pipes read on a thread of their own where the transport can
   * (`ExecOptions.readOffThread`): the caller parses other things while they run.
   */
  readonly heavyOffThread?: boolean;
  /** Called with each run as it ends (before the others end), e.g. to parse it while the next dump runs. */
  readonly onRun?: (run: ProbeRun) => void;
  /** Called with each probe's spec just before it is started. */
  readonly onStart?: (spec: ProbeSpec) => void;
}

/**
 * Runs the selected probes (default: every probe for `where`, default `node`, except
 * the on-demand ones), returning one {@link ProbeRun} per probe in catalog order.
 * The `heavy` ones (whole rulesets, flow tables, LB maps) run one after the other, never
 * two at once (a node's CPU and memory: `nft -j list ruleset` of 230,000 rules is seconds of a
 * core and a gigabyte); the light ones run beside them, `concurrency` at a time.
 */
export async function runProbes(transport: Transport, options: RunProbesOptions = {}): Promise<ProbeRun[]> {
  const cat = options.catalog ?? catalog();
  const where = options.where ?? 'node';
  const specs = cat.probes.filter((p) => (options.ids ? options.ids.includes(p.id) : p.where === where && !p.onDemand));
  const runs: ProbeRun[] = new Array(specs.length);
  const one = async (i: number) => {
    const spec = specs[i]!;
    options.onStart?.(spec);
    const run = await runProbe(transport, spec, options.params, cat, { ...(options.stdoutAsPieces?.includes(spec.id) ? { stdoutAsPieces: true } : {}), ...(options.heavyOffThread && spec.heavy ? { readOffThread: true } : {}) });
    options.onRun?.(run);
    return run;
  };
  const heavy = specs.flatMap((s, i) => (s.heavy ? [i] : []));
  const light = specs.flatMap((s, i) => (s.heavy ? [] : [i]));
  let next = 0;
  const lightWorker = async () => {
    while (next < light.length) {
      const i = light[next++]!;
      runs[i] = await one(i);
    }
  };
  const heavyWorker = async () => {
    for (const i of heavy) runs[i] = await one(i);
  };
  const width = Math.max(1, (options.concurrency ?? 4) - (heavy.length ? 1 : 0));
  await Promise.all([heavyWorker(), ...Array.from({ length: Math.min(width, light.length) }, lightWorker)]);
  return runs;
}

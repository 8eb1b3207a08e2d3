/**
 * The transport contract: how nodescope runs one declared probe on a node.
 *
 * A transport returns the raw capture only, exactly as the node printed it
 * (CONVENTIONS.md §2). It never parses. Local exec, `ip netns exec`, SSH,
 * kubectl-debug and replay all implement the same {@link Transport}. Reading stdout in
 * pieces, which only a replay can, is apart from this contract (`src/sources/pieces.ts`).
 */

/** Which kind of transport produced a result. */
export type TransportKind = 'local' | 'netns' | 'ssh' | 'kubectl-debug' | 'replay';

/**
 * What one executed argv produced.
 *
 * - `stdout`/`stderr`: decoded as UTF-8, byte-for-byte otherwise.
 * - `exitCode`: the process exit code; `null` when it did not start (binary missing,
 *   `missing: true`) or was killed by the timeout (`timedOut: true`).
 * - `startedAt`: ISO-8601 UTC time the process started.
 * - `durationMs`: wall time in milliseconds.
 * - `cpuMs`: the node CPU time (user + system, milliseconds) the command and the children
 *   it waited for used, when the transport can measure it (local and netns:
 *   src/sources/child-cpu.ts); absent when it cannot (SSH, kubectl-debug; a replay gives the
 *   capture's figure).
 */
export interface ExecResult {
  readonly argv: readonly string[];
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly cpuMs?: number;
  readonly missing?: boolean;
  /** With `missing`: a replay's bundle holds no run of this argv (nothing is known about the node's binary). */
  readonly notCaptured?: boolean;
  readonly timedOut?: boolean;
}

/** Options for one exec: `timeoutMs` in milliseconds. */
export interface ExecOptions {
  readonly timeoutMs: number;
  /**
   * Aborting it stops the command now (the live trace's monitor on every exit path): the
   * local transport ends the child's whole process group (SIGTERM, then SIGKILL), SSH
   * signals and closes the channel, kubectl-debug closes the exec stream. The result is
   * then what the command printed so far, with `exitCode` null.
   */
  readonly signal?: AbortSignal;
  /**
   * Text written to the command's stdin, which is then closed (a probe that reads its
   * commands from stdin: `bpftool batch file -`). Only a transport with `feedsStdin` takes
   * it; the others must not be given one (the caller reads another way).
   */
  readonly stdin?: string;
  /**
   * A hint: the command's stdout is large and the caller may be busy while it runs — a
   * transport that can (local, netns) reads its pipes on a thread of its own
   * (src/sources/exec-off-thread.ts), so the command never waits for the reader. Nothing
   * is written to disk. The result is the same; others ignore it.
   */
  readonly readOffThread?: boolean;
}

/**
 * A way to run commands on one node. Implementations: {@link LocalTransport}
 * (`src/sources/local.ts`), replay (`src/sources/replay.ts`), SSH, kubectl-debug.
 *
 * `exec` never throws for a failing command: a non-zero exit or a missing binary is a
 * normal {@link ExecResult}. It throws `TransportError` only when the transport itself
 * is broken (connection lost, replay bundle unreadable).
 */
export interface Transport {
  readonly kind: TransportKind;
  /** Human label of the node: host name, `local`, `netns:NAME`, `replay:DIR`. */
  readonly label: string;
  /** The transport writes `ExecOptions.stdin` to the command (local, netns, SSH); absent: it cannot (kubectl-debug's v4 exec protocol has no end of stdin, replays). */
  readonly feedsStdin?: boolean;
  exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult>;
  /**
   * Starts now what the runs with `ExecOptions.readOffThread` will use (the local transports'
   * exec worker, src/sources/exec-off-thread.ts), so that its start is not on the first heavy
   * dump's path; absent or a no-op for a transport without one. Never throws.
   */
  prepareOffThread?(): void;
  close(): Promise<void>;
}

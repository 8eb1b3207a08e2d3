/**
 * Pod exec over WebSockets: the remotecommand sub-protocols
 * `v5.channel.k8s.io` and `v4.channel.k8s.io`
 * (`k8s.io/apimachinery/pkg/util/remotecommand`, `k8s.io/apiserver/pkg/util/wsstream`,
 * `k8s.io/client-go/tools/remotecommand/websocket.go`).
 *
 * Framing: every binary message starts with one channel byte — 0 stdin,
 * 1 stdout, 2 stderr, 3 error (the final `metav1.Status` as JSON), 4 resize
 * (`{"Width":W,"Height":H}`). v5 adds the CLOSE signal: a message `[255, ch]`
 * half-closes channel `ch` (the client sends `[255, 0]` when its stdin ends).
 * Right after the upgrade the server writes one empty message on the lowest
 * writable channel (stdout, else stderr, else error) to say it is ready; after
 * the process ends it writes the status on channel 3 and closes the socket with
 * 1000 (normal closure), which is how clients see EOF on every stream.
 *
 * The command runs for real with child_process, in `ip netns exec NETNS` when a
 * network namespace is configured. Because this machine's root already is the
 * "host" a node-debug pod mounts at /host, a leading `chroot /host` is dropped
 * (`chroot /host` alone starts `/bin/sh`). `tty=true` has no pseudo-terminal
 * here: stderr is then merged into stdout (as a tty does) and resize messages
 * are read and ignored.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { WebSocket } from 'ws';
import { execNonZero, execSuccess, internalError } from './status.js';

/** Channel numbers of the remotecommand protocols. */
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** Sub-protocols accepted, in server preference order. */
export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'] as const;

/** One exec request after validation. */
export interface ExecRequest {
  /** The command as the client sent it (`command=` query parameters, in order). */
  readonly argv: readonly string[];
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
  /** Network namespace to run in (`ip netns exec NAME`), if any. */
  readonly netns?: string;
  /** Pod name, exported as HOSTNAME like a container would see it. */
  readonly podName: string;
}

/** Drops a leading `chroot /host` (the host root is `/` here); `chroot /host` alone runs `/bin/sh`. */
export function mapHostChroot(argv: readonly string[]): string[] {
  if (argv[0] === 'chroot' && (argv[1] === '/host' || argv[1] === '/host/')) {
    const rest = argv.slice(2);
    return rest.length ? rest : ['/bin/sh'];
  }
  return [...argv];
}

const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Resolves `cmd` like execvp would: a path if it contains `/`, else the first executable in PATH. */
export function resolveExecutable(cmd: string, path = DEFAULT_PATH): string | undefined {
  const ok = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return ok(cmd) ? cmd : undefined;
  for (const dir of path.split(delimiter)) if (dir && ok(join(dir, cmd))) return join(dir, cmd);
  return undefined;
}

function frame(channel: number, data: Buffer | string): Buffer {
  const body = typeof data === 'string' ? Buffer.from(data) : data;
  return Buffer.concat([Buffer.from([channel]), body]);
}

/** Signal name → number, for the 128+N exit code of a killed process. */
const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };

/**
 * Runs one exec session on an upgraded socket and resolves with the exit code
 * (null when the process never started or the client went away first).
 */
export function runExecSession(ws: WebSocket, req: ExecRequest): Promise<number | null> {
  const v5 = ws.protocol === 'v5.channel.k8s.io';
  const send = (ch: number, data: Buffer | string) => {
    if (ws.readyState === ws.OPEN) ws.send(frame(ch, data));
  };
  const finish = (status: object) => {
    send(CHANNEL.error, JSON.stringify(status));
    if (ws.readyState === ws.OPEN) ws.close(1000);
  };
  send(req.stdout ? CHANNEL.stdout : req.stderr ? CHANNEL.stderr : CHANNEL.error, Buffer.alloc(0));

  const argv = mapHostChroot(req.argv);
  const exe = resolveExecutable(argv[0]!);
  if (!exe) {
    const why =
      `error executing command in container: failed to exec in container: failed to start exec: OCI runtime exec failed: ` +
      `exec failed: unable to start container process: exec: "${argv[0]}": executable file not found in $PATH: unknown`;
    const { kind: _k, apiVersion: _a, ...status } = internalError(why);
    finish(status);
    return Promise.resolve(null);
  }
  const full = req.netns ? ['ip', 'netns', 'exec', req.netns, ...argv] : argv;
  const child = spawn(full[0]!, full.slice(1), {
    cwd: '/',
    env: { PATH: process.env['PATH'] ?? DEFAULT_PATH, HOME: '/root', HOSTNAME: req.podName, ...(req.tty ? { TERM: 'xterm' } : {}) },
    stdio: [req.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let clientGone = false;
  child.stdout!.on('data', (d: Buffer) => req.stdout && send(CHANNEL.stdout, d));
  child.stderr!.on('data', (d: Buffer) => {
    if (req.tty && req.stdout) send(CHANNEL.stdout, d);
    else if (req.stderr) send(CHANNEL.stderr, d);
  });
  child.stdin?.on('error', () => undefined); // the process may exit before reading stdin
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary || data.length === 0) return;
    const ch = data[0];
    if (ch === CHANNEL.stdin) child.stdin?.write(data.subarray(1));
    else if (v5 && ch === CHANNEL.close && data[1] === CHANNEL.stdin) child.stdin?.end();
    // CHANNEL.resize: no pty here, sizes are ignored.
  });
  ws.on('close', () => {
    clientGone = true;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return new Promise((resolve) => {
    child.on('error', (e) => {
      finish(((): object => {
        const { kind: _k, apiVersion: _a, ...s } = internalError(`error executing command in container: ${e.message}`);
        return s;
      })());
      resolve(null);
    });
    child.on('close', (code, signal) => {
      const rc = code ?? 128 + (signal ? (SIGNALS[signal] ?? 9) : 9);
      if (!clientGone) finish(rc === 0 ? execSuccess() : execNonZero(req.argv, rc));
      resolve(clientGone ? null : rc);
    });
  });
}

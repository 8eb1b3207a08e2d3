/**
 * One command in a pod's container through the API's exec subresource, with
 * client-node's `Exec` over a WebSocket (`v5.channel.k8s.io`/`v4.channel.k8s.io`,
 * k8s.io/apimachinery/pkg/util/remotecommand). Exit codes come from the final Status on
 * channel 3 (`Success`, or `NonZeroExitCode` with the code as cause `ExitCode`). The
 * WebSocket is opened here (not by client-node's default handler) only to read the body
 * of a refused upgrade, so a 403 can name what RBAC is missing.
 */
import type { Writable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import WebSocket from 'ws';
import { statusFromBody } from './k8s-client.js';
import type { ExecResult } from './transport.js';

/** Sub-protocols offered for exec, in preference order. */
export const EXEC_PROTOCOLS: readonly string[] = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];

type Handler = ((stream: number, buff: Buffer) => boolean) | null;

/**
 * client-node's `WebSocketInterface` (what `Exec` and `PortForward` take), offering
 * `protocols` and answering a refused upgrade with a {@link K8sStatusError}.
 */
export class StatusAwareSockets {
  constructor(private readonly kc: KubeConfig, private readonly protocols: readonly string[] = EXEC_PROTOCOLS) {}

  async connect(path: string, textHandler: ((text: string) => boolean) | null, binaryHandler: Handler): Promise<WebSocket> {
    const server = this.kc.getCurrentCluster()?.server ?? '';
    const uri = server.replace(/^http/, 'ws').replace(/\/$/, '') + path;
    const opts: WebSocket.ClientOptions = {};
    await this.kc.applyToHTTPSOptions(opts);
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(uri, [...this.protocols], opts);
      let open = false;
      ws.on('unexpected-response', (req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          reject(statusFromBody(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
          req.destroy();
        });
      });
      ws.on('open', () => {
        open = true;
        resolve(ws);
      });
      ws.on('error', (e) => {
        if (!open) reject(e);
      });
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (!isBinary) {
          if (textHandler && !textHandler(data.toString('utf8'))) ws.close();
          return;
        }
        if (data.length === 0) return;
        if (binaryHandler && !binaryHandler(data[0]!, data.subarray(1))) ws.close();
      });
    });
  }
}

/** Where to exec: namespace, pod, container. */
export interface ExecTarget {
  readonly namespace: string;
  readonly pod: string;
  readonly container: string;
}

/** The exit code a final exec Status carries: 0 for Success, the `ExitCode` cause, else null. */
export function exitCodeOf(status: V1Status): number | null {
  if (status.status === 'Success') return 0;
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  const n = Number(cause?.message);
  return cause && Number.isInteger(n) ? n : null;
}

function sink(chunks: Buffer[]): Writable {
  const s = new PassThrough();
  s.on('data', (c: Buffer) => chunks.push(c));
  return s;
}

/**
 * Runs `argv` (already wrapped) in the container and collects its output. An exec that
 * the runtime cannot start because the executable is missing is `missing`; the timeout
 * closes the WebSocket (`timedOut`). Rejects with `K8sStatusError` for a refused upgrade
 * (403, 404 …) and with the socket error when the connection breaks before the final status.
 */
export async function execInPod(kc: KubeConfig, target: ExecTarget, argv: readonly string[], timeoutMs: number, now: () => number = Date.now, signal?: AbortSignal): Promise<ExecResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const started = now();
  let status: V1Status | undefined;
  const exec = new Exec(kc, new StatusAwareSockets(kc) as unknown as ConstructorParameters<typeof Exec>[1]);
  const ws = (await exec.exec(target.namespace, target.pod, target.container, [...argv], sink(out), sink(err), null, false, (s) => {
    status = s;
  })) as unknown as WebSocket;
  const timedOut = await new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      resolve(true);
    }, timeoutMs);
    // Stopped by the caller: closing the stream is all the exec API offers (the command's
    // own bound, e.g. `timeout`, ends it on the node).
    const stop = () => {
      clearTimeout(timer);
      ws.terminate();
      resolve(true);
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    ws.on('close', () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      if (status === undefined) reject(new Error(`exec in ${target.namespace}/${target.pod} ended without a status (connection lost)`));
      else resolve(false);
    });
  }).catch((e: Error) => {
    if (status !== undefined) return false;
    throw e;
  });
  const stderr = Buffer.concat(err).toString('utf8');
  const base = { argv: [...argv], stdout: Buffer.concat(out).toString('utf8'), startedAt: new Date(started).toISOString(), durationMs: now() - started };
  if (timedOut) return { ...base, stderr: `${stderr}killed after ${timeoutMs} ms\n`, exitCode: null, timedOut: true };
  const code = exitCodeOf(status!);
  // The runtime could not start the binary (OCI "executable file not found").
  const notFound = code === null && /executable file not found|no such file or directory/i.test(status!.message ?? '');
  const statusText = code === null && status!.message ? `${status!.message}\n` : '';
  return { ...base, stderr: stderr + statusText, exitCode: code, ...(notFound || code === 127 ? { missing: true } : {}) };
}

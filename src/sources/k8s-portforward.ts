/**
 * One TCP connection to a pod's port through the API's `pods/portforward` subresource,
 * as `kubectl port-forward` makes it, with client-node's `PortForward` over a WebSocket.
 *
 * Protocol (the kubelet's WebSocket port-forward,
 * k8s.io/kubelet/pkg/cri/streaming/portforward/websocket.go, sub-protocol
 * `v4.channel.k8s.io`): `GET /api/v1/namespaces/NS/pods/NAME/portforward?ports=P`
 * upgraded to a WebSocket; for the n-th port, channel 2n carries data both ways and
 * channel 2n+1 errors (server to client); every binary message starts with its channel
 * byte, and each channel's first message is the port as 2 bytes little-endian. Right after
 * the upgrade the kubelet dials `localhost:P` inside the pod's network namespace; a dial
 * failure arrives as text on the error channel, and the WebSocket closes when the TCP
 * connection ends. One WebSocket is one TCP connection.
 */
import { Duplex, PassThrough, Writable } from 'node:stream';
import { PortForward, type KubeConfig } from '@kubernetes/client-node';
import type WebSocket from 'ws';
import { StatusAwareSockets } from './k8s-exec.js';

/** The only sub-protocol the kubelet's WebSocket port-forward speaks in binary (besides the legacy unnamed one). */
export const PORT_FORWARD_PROTOCOLS: readonly string[] = ['v4.channel.k8s.io'];

/** Where to forward: a pod and one of its TCP ports. */
export interface PortForwardTarget {
  readonly namespace: string;
  readonly pod: string;
  readonly port: number;
}

/** The forward broke: the error channel's text (a dial failure inside the pod), or the connection was lost. */
export class PortForwardError extends Error {
  override readonly name = 'PortForwardError';
}

/** `ns/pod:port`, for messages. */
export function targetText(t: PortForwardTarget): string {
  return `${t.namespace}/${t.pod}:${t.port}`;
}

/**
 * A Duplex over one forwarded connection: writes go to the data channel, the data
 * channel's bytes are read; `destroy()` closes the WebSocket. When the WebSocket closes
 * after text on the error channel, the stream is destroyed with a {@link PortForwardError}
 * holding that text; after a clean close it ends.
 */
class ForwardedStream extends Duplex {
  private errorText = '';
  constructor(private readonly ws: WebSocket, private readonly input: PassThrough, private readonly output: PassThrough, target: PortForwardTarget) {
    super();
    output.on('data', (d: Buffer) => {
      if (!this.push(d)) output.pause();
    });
    ws.on('close', () => {
      const why = this.errorText.trim();
      if (why) this.destroy(new PortForwardError(`port-forward to ${targetText(target)}: ${why}`));
      else this.push(null);
    });
  }

  /** Text the server wrote on the error channel (port prefix already removed). */
  errorSink(): Writable {
    return new Writable({
      write: (chunk: Buffer, _enc, cb) => {
        this.errorText += chunk.toString('utf8');
        cb();
      },
    });
  }

  override _read(): void {
    // Data is pushed from the data channel; a full buffer paused it until now.
    this.output.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.input.write(chunk, cb);
  }

  override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(1000);
    cb(err);
  }
}

/**
 * Opens one forwarded TCP connection to `target`. Resolves once the WebSocket is open
 * (the dial inside the pod may still fail: the stream then errors with the kubelet's
 * text). Rejects with `K8sStatusError` for a refused upgrade (403 RBAC, 404 no pod, 400
 * pod not running) and with the socket's error when the API server cannot be reached.
 */
export async function openPortForward(kc: KubeConfig, target: PortForwardTarget): Promise<Duplex> {
  const input = new PassThrough();
  const output = new PassThrough();
  // The stream needs the socket and the socket needs the error sink: collect errors first.
  const early: Buffer[] = [];
  let sink: Writable | null = null;
  const err = new Writable({
    write: (chunk: Buffer, _enc, cb) => {
      if (sink) sink.write(chunk, cb);
      else {
        early.push(chunk);
        cb();
      }
    },
  });
  const pf = new PortForward(kc, true, new StatusAwareSockets(kc, PORT_FORWARD_PROTOCOLS) as unknown as ConstructorParameters<typeof PortForward>[2]);
  const ws = (await pf.portForward(target.namespace, target.pod, [target.port], output, err, input)) as unknown as WebSocket;
  const stream = new ForwardedStream(ws, input, output, target);
  sink = stream.errorSink();
  for (const c of early) sink.write(c);
  return stream;
}

/**
 * Pod port-forward over SPDY/3.1 streams, the protocol `portforward.k8s.io` that
 * `kubectl port-forward` speaks (client-go tools/portforward; served by the kubelet's
 * k8s.io/kubelet/pkg/cri/streaming/portforward/httpstream.go). kubectl reaches it either
 * by `POST …/portforward` with `Upgrade: SPDY/3.1` and `X-Stream-Protocol-Version:
 * portforward.k8s.io`, or (kubectl ≥ 1.30, tried first) by a WebSocket with the
 * sub-protocol `SPDY/3.1+portforward.k8s.io` whose binary messages carry the SPDY bytes.
 *
 * For each local connection the client opens two streams with the headers `streamType`
 * (`error`, then `data`), `port` and `requestID`; once both streams of a request ID are
 * there, the port is dialled in the pod (dial.ts) and the data stream is copied both
 * ways. A failed dial writes `error forwarding port P to pod NAME, uid UID: REASON` on
 * the error stream. When the connection ends, both streams are half-closed (FIN), as the
 * kubelet's `defer Close()` does.
 */
import type { Duplex } from 'node:stream';
import type { PodDialer } from './dial.js';
import { forwardError, type PortForwardRequest } from './portforward.js';
import type { SpdySession, SpdyStream } from './spdy.js';

/** The stream protocol kubectl asks for in `X-Stream-Protocol-Version`. */
export const PORT_FORWARD_STREAM_PROTOCOL = 'portforward.k8s.io';
/** The WebSocket sub-protocol of SPDY tunnelled in a WebSocket (client-go `WebsocketsSPDYTunnelingPortForwardV1`). */
export const SPDY_TUNNEL_PROTOCOL = 'SPDY/3.1+portforward.k8s.io';

interface Pair {
  data?: SpdyStream;
  error?: SpdyStream;
}

/** Serves port-forward requests on a SPDY session until it ends. */
export function serveSpdyPortForward(session: SpdySession, req: Omit<PortForwardRequest, 'ports'> & { dial: PodDialer | undefined }): void {
  const pairs = new Map<string, Pair>();
  session.on('stream', (s: SpdyStream) => {
    const type = s.header('streamtype');
    if (type !== 'data' && type !== 'error') {
      s.end();
      return;
    }
    const id = s.header('requestid') ?? '';
    const pair = pairs.get(id) ?? {};
    pair[type] = s;
    pairs.set(id, pair);
    if (pair.data && pair.error) {
      pairs.delete(id);
      forward(pair.data, pair.error, { ...req, ports: [] });
    }
  });
}

function forward(data: SpdyStream, error: SpdyStream, req: PortForwardRequest): void {
  const finish = () => {
    data.end();
    error.end();
  };
  const portText = data.header('port') ?? '';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535) {
    error.write(Buffer.from(`error forwarding port ${portText} to pod ${req.pod.name}, uid ${req.pod.uid}: invalid port`));
    finish();
    return;
  }
  const held: Buffer[] = [];
  let conn: Duplex | null = null;
  let gone = false;
  const onData = (d: Buffer) => (conn ? conn.write(d) : held.push(d));
  data.on('data', onData);
  data.on('end', () => conn?.end());
  data.on('reset', () => {
    gone = true;
    conn?.destroy();
  });
  const dial = req.dial ? req.dial(req.pod, port) : Promise.reject(new Error('the recorded API server has no way into pods (no portForward dialer)'));
  dial.then(
    (c) => {
      if (gone) {
        c.destroy();
        return;
      }
      conn = c;
      for (const b of held) c.write(b);
      c.on('data', (d: Buffer) => data.write(d));
      c.on('error', () => undefined);
      c.on('end', finish);
      c.on('close', finish);
    },
    (e: Error) => {
      error.write(Buffer.from(forwardError(req, port, e.message)));
      finish();
    },
  );
}

/**
 * Pod port-forward over WebSockets, the kubelet's protocol
 * (k8s.io/kubelet/pkg/cri/streaming/portforward/websocket.go, `wsstream` channels):
 * sub-protocol `v4.channel.k8s.io` (binary frames). The `ports` query parameter lists
 * the ports (repeated or comma-separated); the n-th port gets channel 2n (data, both
 * ways) and 2n+1 (error, server to client). Every binary message starts with its
 * channel byte; the first message on each channel is the port, 2 bytes little-endian.
 * Right after the upgrade each port is dialled in the pod (see dial.ts); data the client
 * sent meanwhile is held. A failed dial writes `error forwarding port P to pod NAME, uid
 * UID: REASON` on the error channel. The WebSocket closes (1000) when every port's
 * connection has ended, and a client that closes ends the connections.
 */
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { PodDialer } from './dial.js';

/** Sub-protocols accepted for port-forward (the kubelet's binary one). */
export const PORT_FORWARD_PROTOCOLS = ['v4.channel.k8s.io'] as const;

/** Reads the `ports` query values (`53`, `53,8080`, repeated); throws with the apiserver-like reason for a bad one. */
export function parsePorts(values: readonly string[]): number[] {
  const ports: number[] = [];
  for (const v of values.flatMap((x) => x.split(','))) {
    const s = v.trim();
    if (!/^\d+$/.test(s) || Number(s) < 1 || Number(s) > 65535) throw new Error(`invalid port "${s}": must be between 1 and 65535`);
    ports.push(Number(s));
  }
  return ports;
}

/** The 2-byte little-endian port every channel starts with. */
export function portPrefix(port: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(port, 0);
  return b;
}

/** One port-forward request after validation. */
export interface PortForwardRequest {
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly ports: readonly number[];
  readonly dial: PodDialer | undefined;
}

/** The kubelet's error text for a port that could not be forwarded. */
export function forwardError(req: PortForwardRequest, port: number, why: string): string {
  return `error forwarding port ${port} to pod ${req.pod.name}, uid ${req.pod.uid}: ${why}`;
}

/** Runs one WebSocket port-forward session; resolves when the socket is closed. */
export function runPortForwardSession(ws: WebSocket, req: PortForwardRequest): Promise<void> {
  const send = (ch: number, data: Buffer) => {
    if (ws.readyState === ws.OPEN) ws.send(Buffer.concat([Buffer.from([ch]), data]));
  };
  const conns = new Map<number, Duplex>();
  const pending = new Map<number, Buffer[]>();
  let open = req.ports.length;
  const portDone = () => {
    if (--open === 0 && ws.readyState === ws.OPEN) ws.close(1000);
  };
  req.ports.forEach((port, i) => {
    send(2 * i, portPrefix(port));
    send(2 * i + 1, portPrefix(port));
    pending.set(i, []);
  });
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary || data.length < 1) return;
    const ch = data[0]!;
    if (ch % 2 !== 0 || ch / 2 >= req.ports.length) return; // only data channels are writable
    const i = ch / 2;
    const body = data.subarray(1);
    const conn = conns.get(i);
    if (conn) conn.write(body);
    else pending.get(i)?.push(body);
  });
  ws.on('close', () => {
    for (const c of conns.values()) c.destroy();
  });
  req.ports.forEach((port, i) => {
    const dial = req.dial ? req.dial(req.pod, port) : Promise.reject(new Error('the recorded API server has no way into pods (no portForward dialer)'));
    dial.then(
      (conn) => {
        if (ws.readyState !== ws.OPEN) {
          conn.destroy();
          return;
        }
        conns.set(i, conn);
        for (const b of pending.get(i) ?? []) conn.write(b);
        pending.delete(i);
        let ended = false;
        const done = () => {
          if (!ended) {
            ended = true;
            portDone();
          }
        };
        conn.on('data', (d: Buffer) => send(2 * i, d));
        conn.on('error', () => undefined);
        conn.on('end', done);
        conn.on('close', done);
      },
      (e: Error) => {
        send(2 * i + 1, Buffer.from(forwardError(req, port, e.message)));
        portDone();
      },
    );
  });
  return new Promise((resolve) => ws.on('close', () => resolve()));
}

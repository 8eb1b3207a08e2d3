/**
 * The three ways into a pod's port-forward, after the route, RBAC and pod checks of
 * server.ts: a WebSocket `v4.channel.k8s.io` (portforward.ts), kubectl's SPDY/3.1
 * tunnelled in a WebSocket (`SPDY/3.1+portforward.k8s.io`), or kubectl's fallback
 * `Upgrade: SPDY/3.1` on the raw socket (spdy-portforward.ts). A request none of them
 * fits is refused with a `StatusError` (400) before anything is written.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import type { PodDialer } from './dial.js';
import { PORT_FORWARD_PROTOCOLS, runPortForwardSession } from './portforward.js';
import { SpdySession } from './spdy.js';
import { PORT_FORWARD_STREAM_PROTOCOL, serveSpdyPortForward, SPDY_TUNNEL_PROTOCOL } from './spdy-portforward.js';
import { badRequest, StatusError } from './status.js';

/** The pod being forwarded to. */
export interface ForwardTarget {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** Upgrades port-forward requests; `close()` ends every session. */
export interface PortForwardUpgrader {
  /**
   * Takes over `socket` for `target` (`ports` from the query, used by the WebSocket
   * protocol only; `record(101)` once switched). Throws a 400 `StatusError` when the
   * request fits no protocol.
   */
  upgrade(req: IncomingMessage, socket: Socket, head: Buffer, target: ForwardTarget, ports: readonly number[], record: (status: number) => void): void;
  close(): void;
}

/** An upgrader whose connections go through `dial()` (read at each request). */
export function portForwardUpgrader(dial: () => PodDialer | undefined): PortForwardUpgrader {
  const v4 = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => PORT_FORWARD_PROTOCOLS.find((p) => protocols.has(p)) ?? false });
  const tunnel = new WebSocketServer({ noServer: true, handleProtocols: () => SPDY_TUNNEL_PROTOCOL });
  const sessions = new Set<SpdySession>();

  /** A SPDY session writing with `write`; `stop(protocolError)` ends the transport. */
  const spdy = (write: (b: Buffer) => void, stop: (protocolError: boolean) => void, target: ForwardTarget) => {
    const session = new SpdySession(write);
    sessions.add(session);
    session.on('error', () => stop(true));
    session.on('goaway', () => stop(false));
    serveSpdyPortForward(session, { pod: target, dial: dial() });
    return {
      feed: (b: Buffer) => session.feed(b),
      end: () => {
        sessions.delete(session);
        session.closeAll();
      },
    };
  };

  return {
    upgrade(req, socket, head, target, ports, record) {
      const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
      if (upgrade === 'spdy/3.1') {
        const offered = String(req.headers['x-stream-protocol-version'] ?? '').split(',').map((p) => p.trim());
        if (!offered.includes(PORT_FORWARD_STREAM_PROTOCOL)) {
          throw new StatusError(badRequest(`unable to upgrade: X-Stream-Protocol-Version must offer ${PORT_FORWARD_STREAM_PROTOCOL} (got ${offered.join(', ') || 'none'})`));
        }
        record(101);
        socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${PORT_FORWARD_STREAM_PROTOCOL}\r\n\r\n`);
        const io = spdy((b) => socket.write(b), (bad) => (bad ? socket.destroy() : socket.end()), target);
        socket.on('data', io.feed);
        socket.on('close', io.end);
        if (head.length) io.feed(head);
        return;
      }
      if (upgrade !== 'websocket') throw new StatusError(badRequest(`the recorded API server speaks port-forward over WebSockets or SPDY/3.1, not ${req.headers.upgrade}`));
      const offered = String(req.headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
      if (offered.includes(SPDY_TUNNEL_PROTOCOL)) {
        // ws refuses '/' in a sub-protocol (RFC 7230 token rules), which Go's server takes:
        // hand it a token, and answer with the real name (`tunnel`'s handleProtocols).
        req.headers['sec-websocket-protocol'] = 'spdy-tunnel';
        tunnel.handleUpgrade(req, socket, head, (ws) => {
          record(101);
          const io = spdy((b) => ws.send(b), (bad) => ws.close(bad ? 1002 : 1000), target);
          ws.on('message', (d: Buffer) => io.feed(d));
          ws.on('close', io.end);
        });
        return;
      }
      if (!PORT_FORWARD_PROTOCOLS.some((p) => offered.includes(p))) {
        throw new StatusError(badRequest(`unable to upgrade: no supported sub-protocol among [${offered.join(' ')}]; this server speaks ${[...PORT_FORWARD_PROTOCOLS, SPDY_TUNNEL_PROTOCOL].join(', ')}`));
      }
      if (ports.length === 0) throw new StatusError(badRequest('query parameter "ports" is required'));
      v4.handleUpgrade(req, socket, head, (ws) => {
        record(101);
        void runPortForwardSession(ws, { pod: target, ports, dial: dial() });
      });
    },
    close() {
      for (const c of [...v4.clients, ...tunnel.clients]) c.terminate();
      for (const s of sessions) s.closeAll();
    },
  };
}

/**
 * The query engine: asks one question of one server the way a stub resolver does —
 * UDP first (retried after each timeout, `tries` times), then TCP when the UDP reply has
 * TC set (RFC 1035 §4.2.1, RFC 7766 §5) — and records every attempt as raw bytes
 * ({@link RawExchange}). A datagram that is not a reply to this query (other id, other
 * question, undecodable) is ignored, as glibc's `res_send` ignores it.
 *
 * The sockets are behind {@link DnsWire} so the same loop runs over local sockets
 * ({@link socketWire}, used directly and by the in-namespace query program) and over a
 * TCP stream opened elsewhere, e.g. an SSH `forwardOut` channel ({@link streamWire}).
 */
import { randomInt } from 'node:crypto';
import dgram from 'node:dgram';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { DnsQuestionType, DnsWireTransport } from '../model/dns.js';
import { TIMEOUT_ERROR, type RawAttempt, type RawExchange } from './raw.js';
import { answersQuery, decodeReply, encodeQuery } from './wire.js';

/** What one wire operation gave: a reply's bytes (no TCP prefix), a timeout, or a socket error. */
export type WireResult =
  | { readonly kind: 'reply'; readonly bytes: Buffer }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'error'; readonly message: string };

/**
 * Moves DNS messages. `udp`: sends a datagram from a fresh socket and resolves with the
 * first datagram `accept` takes, within `timeoutMs` (undefined: no UDP on this wire).
 * `tcp`: connects, writes the length-prefixed query and reads one length-prefixed reply
 * within `timeoutMs`. Neither throws.
 */
export interface DnsWire {
  readonly udp?: (server: string, port: number, query: Buffer, timeoutMs: number, accept: (reply: Buffer) => boolean) => Promise<WireResult>;
  readonly tcp: (server: string, port: number, query: Buffer, timeoutMs: number) => Promise<WireResult>;
}

/** Options of {@link runExchange}. */
export interface ExchangeOptions {
  /** `udp`: UDP, then TCP on truncation (default); `tcp`: TCP only. */
  readonly proto?: DnsWireTransport;
  /** Milliseconds to wait for each attempt (default 1,500). */
  readonly timeoutMs?: number;
  /** UDP sends before giving up (default 2, as glibc's `attempts`). */
  readonly tries?: number;
  /** Message id; default random (a resolver must not be predictable). */
  readonly id?: number;
  /** Milliseconds clock for latencies (default `performance.now`). */
  readonly clock?: () => number;
  /** Wall clock for `startedAt` (ms since epoch, default `Date.now`). */
  readonly now?: () => number;
}

/** Default per-attempt timeout, milliseconds. */
export const DEFAULT_TIMEOUT_MS = 1500;
/** Default UDP tries. */
export const DEFAULT_TRIES = 2;

const round = (ms: number): number => Math.round(ms * 100) / 100;

/**
 * Asks `qname`/`qtype` of `server:port` over `wire`; never throws. A UDP-only wire
 * without `udp` (a TCP stream) asks over TCP directly.
 */
export async function runExchange(
  wire: DnsWire,
  question: { readonly server: string; readonly port: number; readonly qname: string; readonly qtype: DnsQuestionType },
  options: ExchangeOptions = {},
): Promise<RawExchange> {
  const clock = options.clock ?? (() => performance.now());
  const id = options.id ?? randomInt(0, 65536);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const tries = Math.max(1, options.tries ?? DEFAULT_TRIES);
  const { server, port, qname, qtype } = question;
  const startedAt = new Date((options.now ?? Date.now)()).toISOString();
  const t0 = clock();
  const attempts: RawAttempt[] = [];
  const attempt = async (transport: DnsWireTransport, run: () => Promise<WireResult>): Promise<WireResult> => {
    const start = clock();
    const r = await run();
    attempts.push({
      transport,
      latencyMs: round(clock() - start),
      replyHex: r.kind === 'reply' ? r.bytes.toString('hex') : null,
      error: r.kind === 'reply' ? null : r.kind === 'timeout' ? TIMEOUT_ERROR : r.message,
    });
    return r;
  };
  const viaTcp = async (): Promise<void> => {
    for (let i = 0; i < tries; i++) {
      const r = await attempt('tcp', () => wire.tcp(server, port, encodeQuery(id, qname, qtype, 'tcp'), timeoutMs));
      if (r.kind !== 'timeout') return;
    }
  };
  const udp = wire.udp;
  if ((options.proto ?? 'udp') === 'tcp' || !udp) {
    await viaTcp();
  } else {
    const accept = (bytes: Buffer): boolean => {
      const r = decodeReply(bytes);
      return !('error' in r) && answersQuery(r, id, qname, qtype);
    };
    for (let i = 0; i < tries; i++) {
      const r = await attempt('udp', () => udp(server, port, encodeQuery(id, qname, qtype, 'udp'), timeoutMs, accept));
      if (r.kind === 'timeout') continue;
      if (r.kind === 'reply') {
        const decoded = decodeReply(r.bytes);
        // Truncated: ask again over TCP, once (RFC 7766 §5).
        if (!('error' in decoded) && decoded.flags.tc) {
          await attempt('tcp', () => wire.tcp(server, port, encodeQuery(id, qname, qtype, 'tcp'), timeoutMs));
        }
      }
      break;
    }
  }
  return { server, port, qname: qname.replace(/\.$/, ''), qtype, id, startedAt, totalMs: round(clock() - t0), attempts };
}

/** A socket error as one line: `ECONNREFUSED connect 10.0.0.1:53`. */
function errorText(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ? `${err.code} ${err.syscall ?? ''} ${err.message.replace(/^\S+ \S+ /, '')}`.replace(/\s+/g, ' ').trim() : String(err.message ?? e);
}

/**
 * Reads one length-prefixed DNS message from `stream` after writing `query`; resolves on
 * the reply, on `timeoutMs`, or on a stream error or early end. Destroys the stream.
 */
export function tcpExchangeOver(stream: Duplex, query: Buffer, timeoutMs: number): Promise<WireResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (r: WireResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stream.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    stream.on('data', (d: Buffer) => {
      chunks.push(d);
      const b = Buffer.concat(chunks);
      if (b.length >= 2 && b.length >= 2 + b.readUInt16BE(0)) finish({ kind: 'reply', bytes: b.subarray(2, 2 + b.readUInt16BE(0)) });
    });
    stream.on('error', (e) => finish({ kind: 'error', message: errorText(e) }));
    stream.on('end', () => finish({ kind: 'error', message: 'connection closed before a full reply' }));
    stream.on('close', () => finish({ kind: 'error', message: 'connection closed before a full reply' }));
    stream.write(query);
  });
}

/** UDP from a connected socket (so ICMP errors surface, as with glibc's connected socket). */
function udpSend(server: string, port: number, query: Buffer, timeoutMs: number, accept: (reply: Buffer) => boolean): Promise<WireResult> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket(net.isIPv6(server) ? 'udp6' : 'udp4');
    let done = false;
    const finish = (r: WireResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.close();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    socket.on('error', (e) => finish({ kind: 'error', message: errorText(e) }));
    socket.on('message', (m: Buffer) => {
      if (accept(m)) finish({ kind: 'reply', bytes: m });
    });
    socket.connect(port, server, () => {
      socket.send(query, (e) => {
        if (e) finish({ kind: 'error', message: errorText(e) });
      });
    });
  });
}

/** The local sockets of this process (node:dgram, node:net). */
export const socketWire: DnsWire = {
  udp: udpSend,
  tcp: (server, port, query, timeoutMs) => {
    const socket = net.connect({ host: server, port });
    return tcpExchangeOver(socket, query, timeoutMs);
  },
};

/**
 * Opens a TCP connection to `host:port` as seen from somewhere else (an SSH server's
 * `forwardOut`, a port-forward). The SSH source's `openTcp` has this shape.
 */
export interface TcpOpener {
  openTcp(host: string, port: number): Promise<Duplex>;
}

/** A TCP-only wire over streams from `opener`; opening failures become socket errors. */
export function streamWire(opener: TcpOpener): DnsWire {
  return {
    tcp: (server, port, query, timeoutMs) =>
      new Promise<WireResult>((resolve) => {
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          resolve({ kind: 'timeout' });
        }, timeoutMs);
        opener.openTcp(server, port).then(
          (stream) => {
            clearTimeout(timer);
            // A channel that opened after we gave up is closed, not leaked.
            if (timedOut) stream.destroy();
            else void tcpExchangeOver(stream, query, timeoutMs).then(resolve);
          },
          (e: unknown) => {
            clearTimeout(timer);
            if (!timedOut) resolve({ kind: 'error', message: errorText(e) });
          },
        );
      }),
  };
}

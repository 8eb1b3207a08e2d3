/**
 * DNS from this process: {@link DirectDnsTransport} with its own UDP/TCP sockets
 * (`--local`: this machine's namespace), and {@link StreamDnsTransport}, DNS over TCP
 * through streams opened elsewhere (an SSH server's `forwardOut`: the query leaves from
 * the node, over TCP only, since an SSH channel carries no datagrams).
 */
import type { DnsExchange } from '../model/dns.js';
import { runExchange, socketWire, streamWire, type DnsWire, type ExchangeOptions, type TcpOpener } from './engine.js';
import { decodeExchange } from './raw.js';
import { checkQuery, type DnsQuery, type DnsQueryOptions, type DnsTransport } from './transport.js';

/** Clocks for deterministic tests: `clock` milliseconds (monotonic), `now` ms since epoch. */
export interface DnsClock {
  readonly clock?: () => number;
  readonly now?: () => number;
}

function exchangeOptions(options: DnsQueryOptions, clocks: DnsClock): ExchangeOptions {
  return {
    ...(options.proto ? { proto: options.proto } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.tries !== undefined ? { tries: options.tries } : {}),
    ...(clocks.clock ? { clock: clocks.clock } : {}),
    ...(clocks.now ? { now: clocks.now } : {}),
  };
}

/** Queries with this process's sockets: UDP, then TCP on truncation. */
export class DirectDnsTransport implements DnsTransport {
  readonly kind = 'direct' as const;
  readonly label = 'direct';
  constructor(private readonly clocks: DnsClock = {}, private readonly wire: DnsWire = socketWire) {}

  async query(q: DnsQuery, options: DnsQueryOptions = {}): Promise<DnsExchange> {
    checkQuery(q, options);
    return decodeExchange(await runExchange(this.wire, q, exchangeOptions(options, this.clocks)), this.label);
  }

  async close(): Promise<void> {}
}

/**
 * Queries over TCP streams from `opener` (RFC 7766 framing via dns-packet's
 * `streamEncode`). `label` names the far end (`ssh:node-1`); the exchanges' `via` is
 * `tcp-stream:LABEL` unless `via` says the path (`port-forward to NS/POD:53`).
 */
export class StreamDnsTransport implements DnsTransport {
  readonly kind = 'tcp-stream' as const;
  readonly label: string;
  private readonly wire: DnsWire;

  constructor(opener: TcpOpener, label: string, private readonly clocks: DnsClock = {}, via?: string) {
    this.wire = streamWire(opener);
    this.label = via ?? `tcp-stream:${label}`;
  }

  async query(q: DnsQuery, options: DnsQueryOptions = {}): Promise<DnsExchange> {
    checkQuery(q, options);
    return decodeExchange(await runExchange(this.wire, q, { ...exchangeOptions(options, this.clocks), proto: 'tcp' }), this.label);
  }

  async close(): Promise<void> {}
}

void (null as unknown as DirectDnsTransport satisfies DnsTransport);
void (null as unknown as StreamDnsTransport satisfies DnsTransport);

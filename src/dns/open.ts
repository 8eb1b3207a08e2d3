/**
 * The DNS transport that matches an opened source: a replay bundle's recorded
 * exchanges, the `dns-query` probe inside `--netns`, this process's sockets for
 * `--local`, a forwarded TCP channel for `--ssh` (when the SSH transport can open one).
 */
import { UserError } from '../errors.js';
import type { Transport } from '../sources/transport.js';
import type { TcpOpener } from './engine.js';
import { DirectDnsTransport, StreamDnsTransport } from './direct.js';
import { ProbeDnsTransport } from './probe.js';
import { ReplayDnsTransport } from './replay.js';
import type { DnsTransport } from './transport.js';

function canOpenTcp(t: Transport): t is Transport & TcpOpener {
  return typeof (t as Partial<TcpOpener>).openTcp === 'function';
}

/**
 * Chooses the DNS transport for `transport`. Throws `UserError` for a source that cannot
 * ask DNS (kubectl-debug today, an SSH transport without `openTcp`).
 */
export function dnsTransportFor(transport: Transport): DnsTransport {
  switch (transport.kind) {
    case 'replay': {
      const dir = (transport as Transport & { bundle?: { dir: string } }).bundle?.dir;
      if (!dir) throw new UserError('this replay source has no bundle directory to read DNS answers from');
      return ReplayDnsTransport.fromBundle(dir);
    }
    case 'netns':
      return new ProbeDnsTransport(transport);
    case 'local':
      return new DirectDnsTransport();
    case 'ssh':
      if (canOpenTcp(transport)) return new StreamDnsTransport(transport, transport.label);
      throw new UserError('this SSH source cannot forward a TCP channel for DNS', 'use --dns-server with --local on a machine inside the cluster network');
    default:
      throw new UserError(`DNS questions are not supported over ${transport.kind} yet`, 'use --local, --netns or --ssh');
  }
}

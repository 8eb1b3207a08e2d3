/**
 * The DNS transport that matches an opened source: a replay bundle's recorded
 * exchanges, the `dns-query` probe inside `--netns`, this process's sockets for
 * `--local`, a forwarded TCP channel for `--ssh` (when the SSH transport can open one),
 * a Kubernetes port-forward to a CoreDNS pod for `--node`.
 */
import { said, UserError } from '../errors.js';
import type { KubeContext } from '../sources/k8s-client.js';
import type { Transport } from '../sources/transport.js';
import type { TcpOpener } from './engine.js';
import { DirectDnsTransport, StreamDnsTransport } from './direct.js';
import { PortForwardDnsTransport } from './portforward.js';
import { ProbeDnsTransport } from './probe.js';
import { ReplayDnsTransport } from './replay.js';
import type { DnsTransport } from './transport.js';

function canOpenTcp(t: Transport): t is Transport & TcpOpener {
  return typeof (t as Partial<TcpOpener>).openTcp === 'function';
}

function kubeOf(t: Transport): KubeContext | undefined {
  return (t as Transport & { kube?: KubeContext }).kube;
}

/**
 * Chooses the DNS transport for `transport`. Throws `UserError` for a source that cannot
 * ask DNS (an SSH transport without `openTcp`, a kubectl-debug transport without its
 * kubeconfig context).
 */
export function dnsTransportFor(transport: Transport): DnsTransport {
  switch (transport.kind) {
    case 'replay': {
      const dir = (transport as Transport & { bundle?: { dir: string } }).bundle?.dir;
      if (!dir) throw new UserError(said('ue.dns.noBundle'));
      return ReplayDnsTransport.fromBundle(dir);
    }
    case 'netns':
      return new ProbeDnsTransport(transport);
    case 'local':
      return new DirectDnsTransport();
    case 'ssh':
      if (canOpenTcp(transport)) return new StreamDnsTransport(transport, transport.label);
      throw new UserError(said('ue.dns.sshNoForward'), said('ue.dns.sshNoForwardHint'));
    case 'kubectl-debug': {
      const kube = kubeOf(transport);
      if (kube) return PortForwardDnsTransport.forKube(kube);
      throw new UserError(said('ue.dns.noContext'));
    }
    default:
      throw new UserError(said('ue.dns.notSupported', { kind: transport.kind }), said('ue.useLive'));
  }
}

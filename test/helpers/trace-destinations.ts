/** Destinations for `trace` comparisons, read from a capture's own API objects and addresses. */
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Destinations in the capture at `dir` (a bundle directory with api.json and
 * probes/ip-addr.stdout): every ClusterIP port of the first `services` Services
 * (`ADDR:PORT/proto`), the first NodePort on each IPv4 node address, an address no Service
 * has (10.99.99.99:80/tcp) and ICMP to the first ClusterIP. Throws when the files are unreadable.
 */
export function traceDestinations(dir: string, services: number): string[] {
  const list = JSON.parse(readFileSync(path.join(dir, 'api.json'), 'utf8')) as { items: Record<string, any>[] };
  const out: string[] = [];
  for (const s of list.items.filter((i) => i['kind'] === 'Service' && /^\d/.test(i['spec'].clusterIP ?? '')).slice(0, services)) {
    for (const p of s['spec'].ports ?? []) out.push(`${s['spec'].clusterIP}:${p.port}/${String(p.protocol ?? 'TCP').toLowerCase()}`);
  }
  const nodePort = list.items.flatMap((i) => (i['kind'] === 'Service' ? (i['spec'].ports ?? []) : [])).find((p: any) => p.nodePort)?.nodePort as number | undefined;
  const addrs = JSON.parse(readFileSync(path.join(dir, 'probes', 'ip-addr.stdout'), 'utf8')) as { addr_info: { family: string; local: string }[] }[];
  for (const a of addrs.flatMap((x) => x.addr_info).filter((a) => a.family === 'inet' && a.local !== '127.0.0.1')) {
    if (nodePort !== undefined) out.push(`${a.local}:${nodePort}/tcp`);
  }
  out.push('10.99.99.99:80/tcp', `${out[0]!.split(':')[0]}/icmp`);
  return out;
}

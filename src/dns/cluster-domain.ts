/**
 * The cluster domain (`cluster.local`, `cluster2.local`, `clusterset.local` …) the DNS
 * questions and expectations use, and where it came from: `--cluster-domain`, else what the
 * node shows — kubelet's config `clusterDomain` (KubeletConfiguration, kubelet.config.k8s.io),
 * the resolv.conf search list kubelet writes for pods (`<ns>.svc.<domain> svc.<domain>
 * <domain>`, pkg/kubelet/network/dns/dns.go), a Corefile's `kubernetes <zone> …` block —
 * else the default `cluster.local`, said to be a default.
 */
import type { ResolvConf } from '../model/resolv.js';
import { probe } from '../sources/catalog.js';
import { runProbe } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { readNodeResolvConf } from './resolve.js';

/** Where the domain came from. */
export type ClusterDomainSource = 'flag' | 'kubelet-config' | 'resolv-conf' | 'corefile' | 'default';

/** The cluster domain (lower case, no trailing dot) and its source. */
export interface ClusterDomain {
  readonly name: string;
  readonly source: ClusterDomainSource;
}

/** The Kubernetes default (kubeadm's `--service-dns-domain`, kubelet's usual `clusterDomain`). */
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

const norm = (d: string): string => d.trim().toLowerCase().replace(/\.$/, '');
const isDomain = (d: string): boolean => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(d);

/** `clusterDomain: cluster2.local` of a KubeletConfiguration (YAML or JSON); null when absent. */
export function clusterDomainFromKubeletConfig(text: string): string | null {
  const m = /(?:^|[{,])\s*"?clusterDomain"?\s*:\s*["']?([^"'\s,#}]+)/m.exec(text);
  const d = m ? norm(m[1]!) : '';
  return isDomain(d) ? d : null;
}

/**
 * The domain in a pod's search list: the `X` of a `svc.X` entry (kubelet writes
 * `<ns>.svc.X svc.X X`); null when the list has none (a node's own resolv.conf usually).
 */
export function clusterDomainFromSearch(search: readonly string[]): string | null {
  for (const s of search) {
    const d = norm(s);
    if (d.startsWith('svc.') && isDomain(d.slice(4))) return d.slice(4);
  }
  return null;
}

/** The first zone of a Corefile's `kubernetes` plugin line (`kubernetes cluster2.local in-addr.arpa ip6.arpa {`); null when none. */
export function clusterDomainFromCorefile(text: string): string | null {
  for (const line of text.split('\n')) {
    const words = line.replace(/#.*/, '').trim().split(/\s+/);
    if (words[0] !== 'kubernetes') continue;
    for (const w of words.slice(1)) {
      const d = norm(w);
      if (d === '{') break;
      if (isDomain(d) && !d.endsWith('in-addr.arpa') && !d.endsWith('ip6.arpa')) return d;
    }
  }
  return null;
}

/** `cluster2.local (from kubelet's clusterDomain)`: the domain and its source, for output. */
export function clusterDomainText(d: ClusterDomain): string {
  const from: Record<ClusterDomainSource, string> = {
    flag: '--cluster-domain',
    'kubelet-config': "kubelet's config clusterDomain",
    'resolv-conf': 'the resolv.conf search list',
    corefile: 'the Corefile',
    default: 'the default: the capture does not show it; --cluster-domain sets it',
  };
  return `${d.name} (from ${from[d.source]})`;
}

/**
 * The cluster domain for a source: `flag` when given (checked: a DNS name), else kubelet's
 * config (the on-demand `kubelet-config` probe), else a search list in `resolv` (or the
 * node's resolv.conf, read through `transport`), else a `corefile` text, else the default.
 * Throws only for a `flag` that is not a domain name (the caller's UserError).
 */
export async function readClusterDomain(options: { flag?: string; transport?: Transport; resolv?: ResolvConf; corefile?: string }): Promise<ClusterDomain> {
  if (options.flag !== undefined) {
    const d = norm(options.flag);
    if (!isDomain(d)) throw new Error(`--cluster-domain ${options.flag}: not a DNS domain name`);
    return { name: d, source: 'flag' };
  }
  if (options.transport) {
    const run = await runProbe(options.transport, probe('kubelet-config')).catch(() => null);
    const d = run?.status === 'ok' ? clusterDomainFromKubeletConfig(run.result.stdout) : null;
    if (d) return { name: d, source: 'kubelet-config' };
  }
  const resolv = options.resolv ?? (options.transport ? (await readNodeResolvConf(options.transport).catch(() => null))?.conf : undefined);
  const fromSearch = resolv ? clusterDomainFromSearch(resolv.search) : null;
  if (fromSearch) return { name: fromSearch, source: 'resolv-conf' };
  const fromCorefile = options.corefile ? clusterDomainFromCorefile(options.corefile) : null;
  if (fromCorefile) return { name: fromCorefile, source: 'corefile' };
  return { name: DEFAULT_CLUSTER_DOMAIN, source: 'default' };
}

/**
 * The cluster domain (`cluster.local`, `cluster2.local`, `clusterset.local` …): its shape and
 * how to read it from what the node shows — kubelet's config `clusterDomain`
 * (KubeletConfiguration, kubelet.config.k8s.io), the resolv.conf search list kubelet writes for
 * pods (`<ns>.svc.<domain> svc.<domain> <domain>`, pkg/kubelet/network/dns/dns.go), a
 * Corefile's `kubernetes <zone> …` block. Pure: src/dns/cluster-domain.ts reads the node.
 */
/** Where the domain came from. */
export type ClusterDomainSource = 'flag' | 'kubelet-config' | 'resolv-conf' | 'corefile' | 'default';

/** The cluster domain (lower case, no trailing dot) and its source. */
export interface ClusterDomain {
  readonly name: string;
  readonly source: ClusterDomainSource;
}

/** The Kubernetes default (kubeadm's `--service-dns-domain`, kubelet's usual `clusterDomain`). */
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

/** A domain as written, lower case without the trailing dot. */
export const normalizeDomain = (d: string): string => d.trim().toLowerCase().replace(/\.$/, '');
/** Whether `d` (normalized) is a DNS name: dot-separated labels of letters, digits, inner hyphens. */
export const isDomainName = (d: string): boolean => /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(d);

/** `clusterDomain: cluster2.local` of a KubeletConfiguration (YAML or JSON); null when absent. */
export function clusterDomainFromKubeletConfig(text: string): string | null {
  const m = /(?:^|[{,])\s*"?clusterDomain"?\s*:\s*["']?([^"'\s,#}]+)/m.exec(text);
  const d = m ? normalizeDomain(m[1]!) : '';
  return isDomainName(d) ? d : null;
}

/**
 * The domain in a pod's search list: the `X` of a `svc.X` entry (kubelet writes
 * `<ns>.svc.X svc.X X`); null when the list has none (a node's own resolv.conf usually).
 */
export function clusterDomainFromSearch(search: readonly string[]): string | null {
  for (const s of search) {
    const d = normalizeDomain(s);
    if (d.startsWith('svc.') && isDomainName(d.slice(4))) return d.slice(4);
  }
  return null;
}

/** The first zone of a Corefile's `kubernetes` plugin line (`kubernetes cluster2.local in-addr.arpa ip6.arpa {`); null when none. */
export function clusterDomainFromCorefile(text: string): string | null {
  for (const line of text.split('\n')) {
    const words = line.replace(/#.*/, '').trim().split(/\s+/);
    if (words[0] !== 'kubernetes') continue;
    for (const w of words.slice(1)) {
      const d = normalizeDomain(w);
      if (d === '{') break;
      if (isDomainName(d) && !d.endsWith('in-addr.arpa') && !d.endsWith('ip6.arpa')) return d;
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

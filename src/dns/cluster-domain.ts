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
import {
  clusterDomainFromCorefile,
  clusterDomainFromKubeletConfig,
  clusterDomainFromSearch,
  DEFAULT_CLUSTER_DOMAIN,
  isDomainName,
  normalizeDomain,
  type ClusterDomain,
} from '../analysis/cluster-domain.js';

export {
  clusterDomainFromCorefile,
  clusterDomainFromKubeletConfig,
  clusterDomainFromSearch,
  clusterDomainText,
  DEFAULT_CLUSTER_DOMAIN,
  type ClusterDomain,
  type ClusterDomainSource,
} from '../analysis/cluster-domain.js';

/**
 * The cluster domain for a source: `flag` when given (checked: a DNS name), else kubelet's
 * config (the on-demand `kubelet-config` probe), else a search list in `resolv` (or the
 * node's resolv.conf, read through `transport`), else a `corefile` text, else the default.
 * Throws only for a `flag` that is not a domain name (the caller's UserError).
 */
export async function readClusterDomain(options: { flag?: string; transport?: Transport; resolv?: ResolvConf; corefile?: string }): Promise<ClusterDomain> {
  if (options.flag !== undefined) {
    const d = normalizeDomain(options.flag);
    if (!isDomainName(d)) throw new Error(`--cluster-domain ${options.flag}: not a DNS domain name`);
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

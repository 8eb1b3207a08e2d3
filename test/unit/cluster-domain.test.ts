/**
 * The cluster domain: `--cluster-domain`, else kubelet's clusterDomain, the resolv.conf search
 * list or a Corefile, else `cluster.local` — said where it came from; a cluster on
 * `cluster2.local` is asked and checked under its own domain.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectedAnswer } from '../../src/analysis/dns-expected.js';
import {
  clusterDomainFromCorefile,
  clusterDomainFromKubeletConfig,
  clusterDomainFromSearch,
  clusterDomainText,
  readClusterDomain,
} from '../../src/dns/cluster-domain.js';
import { serviceQuestions } from '../../src/dns/resolve.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { parseResolvConf } from '../../src/parsers/resolv-conf.js';

const api = parseK8sObjects(
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'ClusterIP', clusterIP: '10.96.12.34', clusterIPs: ['10.96.12.34'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] } }],
  }),
  'api',
).value;

describe('cluster domain', () => {
  it('reads kubelet config, a pod search list and a Corefile', () => {
    expect(clusterDomainFromKubeletConfig('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS:\n- 10.96.0.10\nclusterDomain: cluster2.local\n')).toBe('cluster2.local');
    expect(clusterDomainFromKubeletConfig('{"kind":"KubeletConfiguration","clusterDomain":"clusterset.local."}')).toBe('clusterset.local');
    expect(clusterDomainFromKubeletConfig('kind: KubeletConfiguration\n')).toBeNull();
    expect(clusterDomainFromSearch(['default.svc.cluster2.local', 'svc.cluster2.local', 'cluster2.local', 'localdomain'])).toBe('cluster2.local');
    expect(clusterDomainFromSearch(['oe5.internal.cloudapp.net'])).toBeNull();
    expect(clusterDomainFromCorefile('.:53 {\n    errors\n    kubernetes cluster2.local in-addr.arpa ip6.arpa {\n       pods insecure\n    }\n}\n')).toBe('cluster2.local');
    expect(clusterDomainFromCorefile('kubernetes {{ .DNSDomain }} in-addr.arpa ip6.arpa {')).toBeNull();
  });

  it('takes the flag first, then the search list, then a Corefile, else says it is the default', async () => {
    const resolv = parseResolvConf('search default.svc.cluster2.local svc.cluster2.local cluster2.local\nnameserver 10.96.0.10\noptions ndots:5\n', 'r').value;
    expect(await readClusterDomain({ flag: 'Clusterset.Local.', resolv })).toEqual({ name: 'clusterset.local', source: 'flag' });
    expect(await readClusterDomain({ resolv })).toEqual({ name: 'cluster2.local', source: 'resolv-conf' });
    expect(await readClusterDomain({ corefile: 'kubernetes cluster3.local {' })).toEqual({ name: 'cluster3.local', source: 'corefile' });
    const fallback = await readClusterDomain({});
    expect(fallback).toEqual({ name: 'cluster.local', source: 'default' });
    expect(clusterDomainText(fallback)).toBe('cluster.local (from the default: the capture does not show it; --cluster-domain sets it)');
    await expect(readClusterDomain({ flag: 'not a domain' })).rejects.toThrow(/not a DNS domain name/);
  });

  it('a cluster on cluster2.local: the questions and the expected answers use its domain, not cluster.local', () => {
    const qs = serviceQuestions(api, 'default', 'web', { zone: 'cluster2.local' });
    expect(qs.map((q) => `${q.qname} ${q.qtype}`)).toContain('web.default.svc.cluster2.local A');
    expect(qs.some((q) => q.qname.endsWith('.cluster.local'))).toBe(false);
    const want = expectedAnswer(api, 'web.default.svc.cluster2.local', 'A', { zone: 'cluster2.local' });
    expect(want?.rcode).toBe('NOERROR');
    expect(want?.answers.map((a) => a.data)).toEqual(['10.96.12.34']);
  });

  const corpus = path.resolve(__dirname, '../../../shared/corpus/dns');
  const reason = existsSync(corpus) ? '' : `no ${corpus}: the shared corpus is not on this machine`;
  if (reason) console.warn(`skipped: ${reason}`);
  it.skipIf(reason !== '')('the real captures: pod search lists give cluster.local, node lists nothing, Corefiles their zone', () => {
    const resolvText = readFileSync(path.join(corpus, 'resolv-conf-variants.txt'), 'utf8') + readFileSync(path.join(corpus, 'aks-pod-and-node-resolv-conf.txt'), 'utf8');
    const lists = resolvText.split('\n').filter((l) => l.startsWith('search ')).map((l) => l.split(/\s+/).slice(1));
    const found = lists.map(clusterDomainFromSearch);
    expect(found).toContain('cluster.local');
    expect(found).toContain(null); // a node's own search list (Azure's internal domain)
    expect(found.every((d) => d === null || d === 'cluster.local')).toBe(true);
    expect(clusterDomainFromCorefile(readFileSync(path.join(corpus, 'corefile-variants.txt'), 'utf8'))).toBe('cluster.local');
  });
});

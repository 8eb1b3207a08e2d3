/** `nodescope dig +search`: dig(1)'s words, `--resolv-conf FILE` read or refused (issue 19 item 9), and a Pod's resolv.conf as kubelet writes it. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { digWords, podResolvChoice, readResolvConfFile } from '../../src/dns/dig-search.js';
import { clusterFirstSearch, KUBELET_MAX_SEARCH_CHARS, KUBELET_MAX_SEARCH_DOMAINS, kubernetesDefaultResolvConf } from '../../src/analysis/dns-search.js';
import { podViewLines } from '../../src/analysis/dns-pod-view.js';
import type { ClusterDomain } from '../../src/analysis/cluster-domain.js';
import type { PodResolvView } from '../../src/model/dns.js';
import { snapshotOf } from '../helpers/fixtures.js';

describe('coredns#2289: dig +search words and --resolv-conf', () => {
  it('+search / +nosearch anywhere beside one name, as dig(1) takes them', () => {
    expect(digWords(['+search', 'web'])).toEqual({ name: 'web', search: true });
    expect(digWords(['web.default.', '+nosearch'])).toEqual({ name: 'web.default.', search: false });
    expect(digWords(['web'])).toEqual({ name: 'web', search: null });
    expect(() => digWords(['+trace', 'web'])).toThrow(UserError);
    expect(() => digWords(['a', 'b'])).toThrow(UserError);
    expect(() => digWords(['+search'])).toThrow(UserError);
  });

  it('--resolv-conf: a pod resolv.conf is read with its ndots and search order; an unreadable file is refused', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-resolv-'));
    const file = path.join(dir, 'resolv.conf');
    writeFileSync(file, 'search shop.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:2\n');
    const r = readResolvConfFile(file);
    expect(r.origin).toBe('pod');
    expect(r.conf.search).toEqual(['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local']);
    expect(r.conf.options.ndots).toBe(2);
    expect(() => readResolvConfFile(path.join(dir, 'absent'))).toThrow(UserError);
  });
});

describe("as a Pod resolves it: kubelet's ClusterFirst resolv.conf from what the source shows", () => {
  const domain = (name: string, source: ClusterDomain['source'] = 'kubelet-config'): ClusterDomain => ({ name, source });

  it('search <ns>.svc.<domain> svc.<domain> <domain> + the node search list, duplicates once, ndots:5', () => {
    expect(clusterFirstSearch('shop', 'cluster.local', ['corp.example', 'cluster.local', 'corp.example'])).toEqual(['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example']);
    const conf = kubernetesDefaultResolvConf('shop', 'c2.local', '10.0.0.10', ['corp.example']);
    expect(conf.search).toEqual(['shop.svc.c2.local', 'svc.c2.local', 'c2.local', 'corp.example']);
    expect(conf.options.ndots).toBe(5);
    expect(conf.nameservers.map((n) => n.address)).toEqual(['10.0.0.10']);
  });

  it("kubelet's limits: the first 32 domains, none over 253 characters, the list at most 2048 characters", () => {
    const many = Array.from({ length: 40 }, (_, i) => `d${i}.example`);
    expect(clusterFirstSearch('default', 'cluster.local', many)).toHaveLength(KUBELET_MAX_SEARCH_DOMAINS);
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(20)}`;
    expect(clusterFirstSearch('default', 'cluster.local', [long, 'corp.example'])).toEqual(['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example']);
    const wide = Array.from({ length: 28 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(90)}.example`);
    const cut = clusterFirstSearch('default', 'cluster.local', wide);
    expect(cut.join(' ').length).toBeLessThanOrEqual(KUBELET_MAX_SEARCH_CHARS);
    expect(cut.slice(0, 4)).toEqual(['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', wide[0]]);
    expect([...cut, wide[cut.length - 3]].join(' ').length).toBeGreaterThan(KUBELET_MAX_SEARCH_CHARS);
  });

  it('podResolvChoice: the kube-dns ClusterIP as name server, what each part came from; --server wins; no kube-dns is refused', async () => {
    const api = (await snapshotOf('lab-iptables')).api!.value!;
    const parts = { namespace: 'shop', namespaceGiven: true, clusterDomain: domain('cluster.local'), nodeResolv: null };
    const pod = podResolvChoice(parts, api);
    expect(pod.origin).toBe('kubernetes-default');
    expect(pod.conf.search).toEqual(['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local']);
    expect(pod.server).toEqual({ address: '10.96.0.10', port: 53 });
    expect(pod.view).toEqual({ namespace: 'shop', namespaceGiven: true, clusterDomain: 'cluster.local', clusterDomainSource: 'kubelet-config', nameserverService: 'kube-system/kube-dns', nodeSearch: null });
    const flagged = podResolvChoice({ ...parts, nodeResolv: kubernetesDefaultResolvConf('x', 'corp.example') }, api, '192.0.2.53');
    expect(flagged.server.address).toBe('192.0.2.53');
    expect(flagged.view.nameserverService).toBeNull();
    expect(flagged.view.nodeSearch).toEqual(['x.svc.corp.example', 'svc.corp.example', 'corp.example']);
    expect(() => podResolvChoice(parts, { ...api, services: api.services.filter((s) => s.meta.name !== 'kube-dns') })).toThrow(UserError);
  });

  it('says which part it did not know, in English and Japanese', () => {
    const view: PodResolvView = { namespace: 'default', namespaceGiven: false, clusterDomain: 'cluster.local', clusterDomainSource: 'default', nameserverService: 'kube-system/kube-dns', nodeSearch: null };
    expect(podViewLines(view, '10.96.0.10', 'en')).toEqual([
      'as a ClusterFirst Pod in namespace default (assumed: -n sets it):',
      '  cluster domain unknown, cluster.local assumed (--cluster-domain sets it)',
      "  name server 10.96.0.10, kube-system/kube-dns's ClusterIP",
      "  node's search domains: unknown: the node's resolv.conf was not read",
    ]);
    expect(podViewLines({ ...view, namespaceGiven: true, clusterDomainSource: 'resolv-conf', nameserverService: null, nodeSearch: [] }, '192.0.2.53', 'ja')).toEqual([
      '名前空間 default の ClusterFirst の Pod として:',
      '  クラスタドメイン cluster.local（ノードの resolv.conf から）',
      '  ネームサーバ 192.0.2.53（--server）',
      '  ノードの検索ドメイン: なし',
    ]);
  });
});

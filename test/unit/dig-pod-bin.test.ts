/**
 * README's `dig +search web` on the real binary: as a ClusterFirst Pod resolves it (kubelet's
 * search list and ndots:5, the kube-dns ClusterIP), it finds the Service on every shipped
 * capture; what the capture does not show is named; the node's own view stays one flag away.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/run-binary.js';
import { fixtureDir } from '../helpers/fixtures.js';

const home = mkdtempSync(path.join(tmpdir(), 'nodescope-dig-pod-'));

describe('dig +search as a Pod resolves it', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])("README's `dig +search web` finds default/web on %s", async (capture) => {
    const r = await runBinary(['dig', '+search', 'web', '--replay', fixtureDir(capture)], home);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("search \"web\" with a ClusterFirst Pod's resolv.conf (ndots:5; search default.svc.cluster.local svc.cluster.local cluster.local; nameserver 10.96.0.10):\n");
    expect(r.stdout).toContain('  as a ClusterFirst Pod in namespace default (assumed: -n sets it):\n    cluster domain unknown, cluster.local assumed (--cluster-domain sets it)\n');
    expect(r.stdout).toMatch(/^ {8}web\.default\.svc\.cluster\.local\.\t\d+\tIN\tA\t10\.96\.12\.34$/m);
    expect(r.stdout).toContain('answered by web.default.svc.cluster.local. after 2 queries');
  }, 30_000);

  it('-n sets the namespace; --cluster-domain the domain, said to come from the flag; JSON carries the same', async () => {
    const r = await runBinary(['dig', '+search', 'kube-dns', '-n', 'kube-system', '--cluster-domain', 'cluster.local', '--replay', fixtureDir('lab-iptables'), '-o', 'json'], home);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.podView).toEqual({ namespace: 'kube-system', namespaceGiven: true, clusterDomain: 'cluster.local', clusterDomainSource: 'flag', nameserverService: 'kube-system/kube-dns', nodeSearch: [] });
    expect(doc.searchList).toEqual(['kube-system.svc.cluster.local', 'svc.cluster.local', 'cluster.local']);
    expect(doc.answeredBy).toBe('kube-dns.kube-system.svc.cluster.local.');
  }, 30_000);

  it('-n default still finds kube-system/kube-dns and compares a kube-system answer with the API (-n is the Pod\'s namespace, not a narrowing)', async () => {
    const r = await runBinary(['dig', '+search', 'web', '-n', 'default', '--replay', fixtureDir('lab-iptables')], home);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('  as a ClusterFirst Pod in namespace default:\n');
    expect(r.stdout).toContain("    name server 10.96.0.10, kube-system/kube-dns's ClusterIP\n");
    expect(r.stdout).toMatch(/^ {8}web\.default\.svc\.cluster\.local\.\t\d+\tIN\tA\t10\.96\.12\.34$/m);
    expect(r.stdout).not.toContain('not as a Pod');
    // Another namespace's Service by FQDN, from a Pod of `default`: answered and judged against the API.
    const fqdn = await runBinary(['dig', 'kube-dns.kube-system.svc.cluster.local', '-n', 'default', '--replay', fixtureDir('lab-iptables')], home);
    expect(fqdn.code, fqdn.stderr).toBe(0);
    expect(fqdn.stdout).toContain(';; EXPECTED from the API: NOERROR (Service kube-system/kube-dns): ok\n');
  }, 30_000);

  it.each(['en', 'ja'] as const)('the replay NOTE only under a recorded answer; a question not captured has no time (%s)', async (lang) => {
    const note = lang === 'en' ? ';; NOTE: recorded answer replayed' : ';; 注:';
    const one = await runBinary(['dig', 'nope.default.svc.cluster.local', '--replay', fixtureDir('lab-iptables'), '--lang', lang], home);
    expect(one.code).toBe(9);
    expect(one.stdout).toContain('NOT-CAPTURED from 10.96.0.10:53: ');
    expect(one.stdout).not.toContain('0.0 ms');
    expect(one.stdout).not.toContain(note);
    const search = await runBinary(['dig', '+search', 'web', '--node-resolv-conf', '--replay', fixtureDir('lab-iptables'), '--lang', lang], home);
    expect(search.code).toBe(9);
    expect(search.stdout).toMatch(/^ {3}1 {2}web\. {2}A NOT-CAPTURED +AAAA NOT-CAPTURED$/m);
    expect(search.stdout).not.toContain(' ms');
    expect(search.stdout).not.toContain(note);
    const json = JSON.parse((await runBinary(['dig', '+search', 'web', '--node-resolv-conf', '--replay', fixtureDir('lab-iptables'), '-o', 'json'], home)).stdout);
    expect(json.note).toBeNull();
    // A recorded answer keeps its NOTE.
    const answered = await runBinary(['dig', '+search', 'web', '--replay', fixtureDir('lab-iptables'), '--lang', lang], home);
    expect(answered.stdout).toContain(note);
  }, 30_000);

  it("without a kube-dns Service a Pod's name server is unknown: said so, and the node's resolv.conf asked instead", async () => {
    const api = path.join(home, 'no-kube-dns.json');
    writeFileSync(api, '{"apiVersion":"v1","kind":"List","items":[]}');
    const r = await runBinary(['dig', '+search', 'web', '--replay', fixtureDir('lab-iptables'), '--api-file', api], home);
    expect(r.stdout).toContain("search \"web\" with the node's resolv.conf (ndots:1; search -; nameserver 10.255.255.53):\n  not as a Pod: its name server (kube-dns's ClusterIP) is unknown\n    no kube-dns Service in the API objects (--server, --api-file): the node's resolv.conf instead\n");
    expect(r.code).toBe(9);
  }, 30_000);

  it("--node-resolv-conf keeps the node's own view (ndots:1, the node's upstream server), which the capture cannot answer", async () => {
    const r = await runBinary(['dig', '+search', 'web', '--node-resolv-conf', '--replay', fixtureDir('lab-iptables')], home);
    expect(r.code).toBe(9);
    expect(r.stdout).toContain("search \"web\" with the node's resolv.conf (ndots:1; search -; nameserver 10.255.255.53):");
    expect(r.stdout).not.toContain('ClusterFirst');
    const both = await runBinary(['dig', '+search', 'web', '--node-resolv-conf', '--resolv-conf', '/etc/resolv.conf', '--replay', fixtureDir('lab-iptables')], home);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('nodescope: give --resolv-conf or --node-resolv-conf, not both');
  }, 30_000);
});

/** kubectl habits on the real binary (issue 22 item 3): `-n`/`-A` everywhere, `--kubeconfig`. Built by `npm test` first. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { apiInNamespace } from '../../src/model/api-namespace.js';
import { readFileSync } from 'node:fs';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });
const serviceNames = (stdout: string) => (JSON.parse(stdout) as { services: { namespace: string; name: string }[] }).services.map((s) => `${s.namespace}/${s.name}`);

describe('-n and -A', () => {
  it('keeps the objects of the namespace and the cluster-scoped ones (apiInNamespace)', () => {
    const api = parseK8sObjects(readFileSync(path.join(fixture('lab-iptables'), 'api.json'), 'utf8'), 'api.json').value;
    const only = apiInNamespace(api, 'kube-system');
    expect(only.services.map((s) => s.meta.name)).toEqual(['kube-dns']);
    expect(only.endpointSlices.every((s) => s.meta.namespace === 'kube-system')).toBe(true);
    expect(only.pods.every((p) => p.meta.namespace === 'kube-system')).toBe(true);
    expect(only.nodes).toEqual(api.nodes);
    expect(api.services.length).toBeGreaterThan(1);
  });

  it('-n holds for a replay and for --api-file; -A wins over -n as in kubectl', () => {
    const all = run('show', 'services', '-o', 'json', '--replay', fixture('lab-iptables'));
    expect(serviceNames(all.stdout)).toContain('default/web');
    for (const source of [['--replay', fixture('lab-iptables')], ['--api-file', path.join(fixture('lab-iptables'), 'api.json')]]) {
      const one = run('show', 'services', '-o', 'json', '-n', 'kube-system', ...source);
      expect(one.status, one.stderr).toBe(0);
      expect(serviceNames(one.stdout)).toEqual(['kube-system/kube-dns']);
      const both = run('show', 'services', '-o', 'json', '-n', 'kube-system', '-A', ...source);
      expect(serviceNames(both.stdout)).toEqual(serviceNames(all.stdout));
      const long = run('--namespace', 'kube-system', 'show', 'services', '-o', 'json', '--all-namespaces', ...source);
      expect(serviceNames(long.stdout)).toEqual(serviceNames(all.stdout));
    }
  }, 90_000);

  it("-n narrows diagnose to the namespace's Services without calling other frontends unexpected", () => {
    const d = run('diagnose', '-o', 'json', '-n', 'kube-system', '--replay', fixture('lab-iptables'));
    expect(d.status, d.stderr).toBe(0);
    const doc = JSON.parse(d.stdout) as { services: { namespace: string; verdict: string }[]; counts: Record<string, number>; nodeFindings: unknown[] };
    expect(doc.services.map((s) => s.namespace)).toEqual(['kube-system']);
    expect(doc.counts['ok']).toBe(doc.services.filter((s) => s.verdict === 'ok').length);
    // The diagnosis still reads every namespace: default/web's frontend is not "unexpected".
    expect(JSON.stringify(doc.nodeFindings)).not.toContain('frontend-unexpected');
  });
});

describe('--kubeconfig', () => {
  it('every command that reads a cluster takes it and reads that file', () => {
    const missing = '/nonexistent-nodescope/kubeconfig';
    for (const args of [['show', 'services'], ['diagnose'], ['trace', '--to', '10.96.0.10:53/udp'], ['dig', 'kube-dns.kube-system'], ['capture', '-o', '/nonexistent-nodescope/out'], ['fleet', 'capture', '-o', '/nonexistent-nodescope/out']]) {
      const r = run(...args, ...(args[0] === 'fleet' ? [] : ['--node', 'n1']), '--kubeconfig', missing);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).not.toBe(0);
      expect(r.stderr, args.join(' ')).toContain(`no kubeconfig: ${missing} does not exist`);
    }
  }, 120_000);
});

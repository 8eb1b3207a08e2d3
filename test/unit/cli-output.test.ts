/** `-o` formats and the document envelope (issue 22 item 3): printers, then the real binary (built first by `npm test`). */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { packageRoot } from '../../src/paths.js';
import { plainTable } from '../../src/text/plain-table.js';
import { DOCUMENT_API_VERSION, toDocument } from '../../src/text/document.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });
const BOX = /[\u2500-\u257f]/;

describe('plainTable', () => {
  it('aligns columns by display width with three spaces, joins several values with commas, says <none> for none', () => {
    const out = plainTable(['NAME', 'PORTS', 'NOTE'], [['web', ['80/TCP', '443/TCP'], 'ウェブ'], ['a', [], '']]);
    expect(out.split('\n')).toEqual(['NAME' + ' '.repeat(3) + 'PORTS' + ' '.repeat(12) + 'NOTE', 'web' + ' '.repeat(4) + '80/TCP,443/TCP' + ' '.repeat(3) + 'ウェブ', 'a' + ' '.repeat(6) + '<none>' + ' '.repeat(11) + '<none>', '']);
    expect(out).not.toMatch(BOX);
  });

  it('escapes a control character in a cell instead of passing it on', () => {
    expect(plainTable(['A'], [['x\x1b]0;t\x07']])).not.toContain('\x1b');
  });
});

describe('toDocument', () => {
  it('puts apiVersion and kind first, as JSON and as YAML of the same values', () => {
    const json = JSON.parse(toDocument('Thing', { n: 1n << 70n, s: 'a' })) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(['apiVersion', 'kind', 'n', 's']);
    expect(json).toEqual({ apiVersion: DOCUMENT_API_VERSION, kind: 'Thing', n: (1n << 70n).toString(), s: 'a' });
    const yaml = toDocument('Thing', { n: 1n << 70n, s: 'a' }, 'yaml');
    expect(yaml.startsWith('apiVersion: nodescope.dev/v1\nkind: Thing\n')).toBe(true);
    expect(YAML.parse(yaml)).toEqual(json);
  });
});

describe('the binary\'s -o formats', () => {
  it('every JSON document carries apiVersion and kind: show *, diagnose, trace, dig', () => {
    const replay = ['--replay', fixture('lab-iptables')];
    const kinds: [string[], string][] = [
      [['show', 'services'], 'ServiceList'], [['show', 'rules'], 'RuleList'], [['show', 'lb'], 'LbMaps'], [['show', 'conntrack'], 'ConntrackList'],
      [['show', 'compare'], 'ModeComparison'], [['show', 'dns', '--service', 'kube-system/kube-dns'], 'DnsAnswers'], [['diagnose'], 'Diagnosis'],
      [['trace', '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp'], 'Trace'], [['dig', 'kube-dns.kube-system.svc.cluster.local'], 'Dig'], [['dig', '+search', 'kube-dns.kube-system'], 'DigSearch'],
    ];
    for (const [args, kind] of kinds) {
      const r = run(...args, '-o', 'json', ...replay);
      const doc = JSON.parse(r.stdout) as Record<string, unknown>;
      expect([doc['apiVersion'], doc['kind']], `${args.join(' ')}: ${r.stderr}`).toEqual(['nodescope.dev/v1', kind]);
      expect(Object.keys(doc).slice(0, 2)).toEqual(['apiVersion', 'kind']);
    }
  }, 180_000);

  it('show -o yaml is the JSON document in YAML; text is plain columns; wide adds columns; name lists kind/name', () => {
    const replay = ['--replay', fixture('lab-cilium')];
    const json = JSON.parse(run('show', 'services', '-o', 'json', ...replay).stdout) as unknown;
    expect(YAML.parse(run('show', 'services', '-o', 'yaml', ...replay).stdout)).toEqual(json);
    for (const what of ['services', 'compare', 'rules', 'lb', 'conntrack']) expect(run('show', what, ...replay).stdout, what).not.toMatch(BOX);
    const text = run('show', 'services', ...replay).stdout;
    expect(text).toMatch(/^NAMESPACE +NAME +TYPE +CLUSTER-IP +PORT\(S\) +ENDPOINTS$/m);
    expect(text).toMatch(/^default +web +NodePort +10\.96\.12\.34 +80:30080\/TCP→8080 +10\.244\.0\.23,10\.244\.0\.31,10\.244\.1\.15\(not-ready,terminating\)$/m);
    const wide = run('show', 'services', '-o', 'wide', ...replay).stdout;
    expect(wide).toMatch(/^NAMESPACE +NAME +TYPE +CLUSTER-IP +PORT\(S\) +ENDPOINTS +NODES +ITP +ETP +AFFINITY$/m);
    expect(wide).toMatch(/ lab-node,lab-node,lab-node2 +Cluster +Cluster +None$/m);
    expect(run('show', 'services', '-o', 'name', ...replay).stdout).toBe('service/default/api\nservice/default/empty\nservice/default/web\nservice/default/web-headless\nservice/kube-system/kube-dns\n');
    expect(run('show', 'lb', '-o', 'name', ...replay).stdout).toMatch(/^frontend\/10\.96\.12\.34:80\/TCP$/m);
    const rules = run('show', 'rules', '-o', 'name', '--replay', fixture('lab-iptables')).stdout;
    expect(rules).toMatch(/^chain\/iptables\/nat\/KUBE-SERVICES$/m);
    const ct = run('show', 'conntrack', '-o', 'name', ...replay);
    expect(ct.status).toBe(2);
    expect(ct.stderr).toContain('-o name is for show services, rules, lb');
  }, 180_000);

  it('show alone lists what it can show; an unknown one names the choices', () => {
    const r = run('show');
    expect(r.status).toBe(0);
    for (const what of ['services', 'rules', 'lb', 'conntrack', 'dns', 'compare']) expect(r.stdout).toMatch(new RegExp(`^ {2}${what} +\\S`, 'm'));
    const bad = run('show', 'pods');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('try: services, rules, lb, conntrack, dns, compare');
  });
});

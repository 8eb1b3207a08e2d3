/** `nodescope diagnose` on the real binary (built by `npm test` before the tests run) and its report. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { showDiagnose } from '../../src/report/diagnose.js';
import { snapshotOf } from '../helpers/fixtures.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });

describe('nodescope diagnose (real binary, replay)', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: JSON with the show header and one verdict per Service; exit 1 (default/empty is broken)', (name) => {
    const r = run('diagnose', '-o', 'json', '--replay', fixture(name));
    expect(r.status, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc.node).toBe('lab-node');
    expect(doc.mode).toBe(name.slice(4));
    expect(doc.capturedAt).toMatch(/^\d{4}-/);
    const v = Object.fromEntries(doc.services.map((s: { namespace: string; name: string; verdict: string }) => [`${s.namespace}/${s.name}`, s.verdict]));
    expect(v['default/web']).toBe('ok');
    expect(v['default/empty']).toBe('broken');
    const empty = doc.services.find((s: { name: string }) => s.name === 'empty');
    expect(Object.keys(empty.findings[0]).sort()).toEqual(['code', 'evidence', 'layer', 'message', 'severity']);
  });

  it('--service of a healthy Service: text, exit 0', () => {
    const r = run('diagnose', '--service', 'default/web', '--replay', fixture('lab-nftables'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^OK +default\/web$/m);
    expect(r.stdout).toMatch(/^mode nftables/m);
  });

  it('a --service the API does not have: exit 2 with close names (1 is kept for "found something")', () => {
    const r = run('diagnose', '--service', 'default/wbe', '--replay', fixture('lab-iptables'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('default/web');
  });
});

describe('nodescope diagnose --from, the DNS layer and --lang (real binary, replay)', () => {
  it('--from a Pod by name: each frontend walked, the resolved client and the checked DNS layer in the JSON', () => {
    const r = run('diagnose', '-o', 'json', '--service', 'kube-system/kube-dns', '--from', 'client', '--replay', fixture('lab-iptables'));
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.from).toEqual({ kind: 'pod', label: 'default/client', ip: '10.244.0.9', pod: 'default/client', podNode: 'lab-node' });
    expect(doc.dns).toEqual({ checked: true, zone: 'cluster.local' });
    const from = doc.services[0].findings.filter((f: { code: string }) => f.code.startsWith('from-'));
    expect(from.map((f: { code: string; frontend: string }) => [f.code, f.frontend])).toEqual([['from-reaches', '10.96.0.10:53/UDP'], ['from-reaches', '10.96.0.10:53/TCP']]);
    expect(from[0].message).toMatch(/^from default\/client: ClusterIP 10\.96\.0\.10:53\/UDP → reaches 10\.244\.0\.2:53 via nat KUBE-SEP-\S+ #2, 10\.244\.0\.3:53 via nat KUBE-SEP-\S+ #2 \(2 of 2 branches\)$/);
  });

  it('--from a name no Pod has: exit 2 with the close names', () => {
    const r = run('diagnose', '--from', 'default/clinet', '--replay', fixture('lab-iptables'));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--from default/clinet: no Pod of that name in the API objects');
    expect(r.stderr).toContain('default/client');
  });

  it('--lang ja: the findings, verdicts, layers and report lines in Japanese, names as they are', () => {
    const r = run('diagnose', '--lang', 'ja', '--service', 'default/empty', '--replay', fixture('lab-nftables'));
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^故障 +default\/empty$/m);
    expect(r.stdout).toContain('    故障: [エンドポイント] EndpointSlice はあるがエンドポイントが1つもありません\n');
    expect(r.stdout).toContain('dns: cluster.local の応答を API と比較しました\n');
  });
});

describe('the text report', () => {
  it('prints every finding under its Service with the proving row, terminal-safe', async () => {
    const s = await snapshotOf('lab-iptables');
    const api = s.api!.value!;
    const hostile = { ...s, api: { ...s.api!, value: { ...api, services: api.services.map((x) => (x.meta.name === 'empty' ? { ...x, selector: { app: 'nothing\u001b[2J' } } : x)) } } };
    const { out, diagnosis } = showDiagnose(hostile, 'text');
    expect(out).not.toContain('\u001b');
    expect(out).toMatch(/^BROKEN +default\/empty\n {4}broken: \[endpoints\]/m);
    expect(out).toContain('proof: services default/empty');
    expect(diagnosis.services.find((x) => x.name === 'empty')!.verdict).toBe('broken');
  });
});

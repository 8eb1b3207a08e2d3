/**
 * The detected cluster domain (here kubelet's clusterDomain: cluster2.local) reaches the TUI's
 * DNS pane (Session.resolveDns) and the DNS answers `capture` records into extra/dns.json:
 * neither asks a fixed cluster.local.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureBundle } from '../../src/collect/capture.js';
import { formatDnsCapture, parseDnsCapture } from '../../src/dns/capture.js';
import { Session } from '../../src/collect/session.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { makeExchange, makeRecord } from './builders/dns.js';
import { listJson, makeService } from './builders/k8s.js';

const Z = 'default.svc.cluster2.local';
const apiText = listJson([
  makeService({ name: 'kube-dns', namespace: 'kube-system', clusterIP: '10.96.0.10', ports: [{ name: 'dns', protocol: 'UDP', port: 53 }] }),
  makeService({ name: 'web', clusterIP: '10.96.12.34', ports: [{ name: 'http', port: 80 }] }),
]);
function run(id: string, stdout: string): ProbeRun {
  const argv = probe(id).argv;
  return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 3 } };
}
const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'ns-cluster2-'));
  dirs.push(d);
  return d;
};
let bundle = '';
beforeAll(() => {
  bundle = tmp();
  const dns = { formatVersion: 1 as const, exchanges: [makeExchange({ qname: `web.${Z}`, answers: [makeRecord('A', '10.96.12.34', `web.${Z}`)] })] };
  writeBundle(bundle, {
    capturedAt: '2026-01-01T00:00:00.000Z', nodescopeVersion: 'test', node: 'node-a', source: { kind: 'local', label: 'local' }, toolVersions: {},
    runs: [run('kubelet-config', 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nclusterDNS:\n- 10.96.0.10\nclusterDomain: cluster2.local\n')],
    apiText,
    extras: { 'dns.json': formatDnsCapture(dns) },
  });
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the cluster domain beyond show dns and dig', () => {
  it('the DNS pane (Session.resolveDns) asks web.default.svc.cluster2.local on a capture of cluster2.local', async () => {
    const session = new Session({ transport: new ReplayTransport(bundle), apiText, live: false });
    await session.start();
    session.resolveDns('default/web');
    await expect.poll(() => session.getState().dns?.loading, { timeout: 5000 }).toBe(false);
    const dns = session.getState().dns!;
    expect(dns.error).toBeNull();
    expect(dns.domain).toEqual({ name: 'cluster2.local', source: 'kubelet-config' });
    expect(dns.result!.fqdn).toBe(`web.${Z}`);
    expect(dns.result!.checks.map((c) => c.qname)).toContain(`web.${Z}`);
    const a = dns.result!.checks.find((c) => c.qname === `web.${Z}` && c.qtype === 'A')!;
    expect(a.verdict).toBe('ok');
    expect(a.exchange.answers.map((r) => r.data)).toEqual(['10.96.12.34']);
    await session.stop();
  });

  it('--cluster-domain overrides what the node shows in the pane', async () => {
    const session = new Session({ transport: new ReplayTransport(bundle), apiText, live: false, clusterDomain: 'clusterset.local' });
    await session.start();
    session.resolveDns('default/web');
    await expect.poll(() => session.getState().dns?.loading, { timeout: 5000 }).toBe(false);
    expect(session.getState().dns!.domain).toEqual({ name: 'clusterset.local', source: 'flag' });
    expect(session.getState().dns!.result!.fqdn).toBe('web.default.svc.clusterset.local');
    await session.stop();
  });

  it("capture records the questions in the detected domain (extra/dns.json asks cluster2.local, never cluster.local)", async () => {
    const out = tmp();
    await captureBundle({ transport: new ReplayTransport(bundle), live: false, apiText, apiOrigin: 'api.json' }, out, { dnsTimeoutMs: 200 });
    const recorded = parseDnsCapture(readFileSync(path.join(out, 'extra', 'dns.json'), 'utf8'), 'dns.json').value.exchanges;
    const names = recorded.map((e) => e.qname);
    expect(names).toContain(`web.${Z}`);
    expect(names.filter((n) => /\.svc\.cluster\.local\.?$/.test(n))).toEqual([]);
    expect(recorded.find((e) => e.qname === `web.${Z}` && e.qtype === 'A')!.answers.map((r) => r.data)).toEqual(['10.96.12.34']);
  });
});

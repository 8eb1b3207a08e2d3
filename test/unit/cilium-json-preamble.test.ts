/**
 * Cilium `-o json` listings as captures hold them: with or without kubectl's
 * `Defaulted container "cilium-agent" out of: …` line first (kubectl exec prints it on stderr,
 * often merged), as an array (`service list -o json`) or a single object (`service get ID -o json`).
 */
import { describe, expect, it } from 'vitest';
import { parseCiliumBpfLbList } from '../../src/parsers/cilium-bpf-lb-list.js';
import { jsonItems, looksLikeJson } from '../../src/parsers/cilium-json.js';
import { parseCiliumServiceList } from '../../src/parsers/cilium-service-list.js';
import { parseCiliumStatus } from '../../src/parsers/cilium-status.js';

const NOTICE = 'Defaulted container "cilium-agent" out of: cilium-agent, config (init), mount-cgroup (init), apply-sysctl-overwrites (init), clean-cilium-state (init)';

/** One service as the agent's API model serializes it (api/v1/models Service: spec + status.realized). */
function service(id: number, ip: string, port: number, backend: string) {
  const spec = { id, 'frontend-address': { ip, port, protocol: 'TCP', scope: 'external' }, 'backend-addresses': [{ ip: backend, port: 8080, protocol: 'TCP', state: 'active' }], flags: { type: 'ClusterIP', name: 'web', namespace: 'default' } };
  return { spec, status: { realized: spec } };
}
const list = [service(10, '10.96.12.34', 80, '10.244.1.15'), service(11, 'fd00:10:96::5', 80, 'fd00:10:244::7')];

const view = (r: ReturnType<typeof parseCiliumServiceList>) => r.value.services.map((s) => [s.id, s.frontend.ip, s.slots.map((x) => x.backend?.ip)]);

describe('cilium-dbg service list/get -o json', () => {
  it.each([
    ['an array', JSON.stringify(list, null, 2)],
    ['an array after the kubectl notice', `${NOTICE}\n${JSON.stringify(list, null, 2)}`],
    ['an array after the notice, CRLF', `${NOTICE}\r\n${JSON.stringify(list, null, 2).replace(/\n/g, '\r\n')}`],
  ])('reads %s: every service, one info for the notice, no error per line', (_name, text) => {
    const r = parseCiliumServiceList(text, 't');
    expect(view(r)).toEqual([
      [10, '10.96.12.34', ['10.244.1.15']],
      [11, 'fd00:10:96::5', ['fd00:10:244::7']],
    ]);
    expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual(text.startsWith('Defaulted') ? [['kubectl-notice', 1]] : []);
  });

  it.each([
    ['one object (service get)', JSON.stringify(list[0], null, 2)],
    ['one object after the kubectl notice', `${NOTICE}\n${JSON.stringify(list[0])}`],
  ])('reads %s as one service', (_name, text) => {
    const r = parseCiliumServiceList(text, 't');
    expect(view(r)).toEqual([[10, '10.96.12.34', ['10.244.1.15']]]);
    expect(r.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  });

  it('still reports a document that is neither, and text that is not JSON stays a text listing', () => {
    expect(parseCiliumServiceList(`${NOTICE}\n[{`, 't').diagnostics.map((d) => [d.code, d.line])).toEqual([['kubectl-notice', 1], ['invalid-json', 0]]);
    expect(jsonItems(42)).toBeNull();
    expect(looksLikeJson(`${NOTICE}\nID   Frontend   Service Type   Backend\n`)).toBe(false);
    expect(looksLikeJson(`$ kubectl exec …\n[]`)).toBe(false);
  });
});

describe('other Cilium -o json outputs after the kubectl notice', () => {
  it('bpf lb list -o json', () => {
    const doc = { '10.96.12.34:80': ['10.244.1.15:8080 (10) (1)'] };
    const plain = parseCiliumBpfLbList(JSON.stringify(doc), 't');
    const noticed = parseCiliumBpfLbList(`${NOTICE}\n${JSON.stringify(doc)}`, 't');
    expect(noticed.value.source).toBe('bpf-lb-list-json');
    expect(noticed.value.services).toEqual(plain.value.services);
    expect(noticed.diagnostics.filter((d) => d.code !== 'kubectl-notice')).toEqual(plain.diagnostics);
  });

  it('status -o json', () => {
    const doc = { cilium: { state: 'Ok', msg: '' }, 'kube-proxy-replacement': { mode: 'True' } };
    const noticed = parseCiliumStatus(`${NOTICE}\n${JSON.stringify(doc)}`, 't');
    expect(noticed.value.kubeProxyReplacement.mode).toBe(parseCiliumStatus(JSON.stringify(doc), 't').value.kubeProxyReplacement.mode);
    expect(noticed.diagnostics.map((d) => d.code)).toContain('kubectl-notice');
  });
});

/**
 * The DNS layer of `nodescope diagnose` (issue 17, item 5): the recorded
 * `<svc>.<ns>.svc.<zone>` answers of a capture against the API objects. The shipped lab
 * captures' own answers (extra/dns.json, recorded from a real dnsmasq/CoreDNS-style server)
 * agree with their API objects; each break edits one recorded answer.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { diagnoseSnapshot, type Diagnosis, type DnsLayer, type Finding } from '../../src/analysis/diagnose/index.js';
import { dnsLayerOf } from '../../src/dns/diagnose-dns.js';
import { readBundleDnsCapture } from '../../src/dns/replay.js';
import type { ApiObjects } from '../../src/model/k8s.js';
import type { DnsCapture, DnsExchange } from '../../src/model/dns.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { showDiagnose } from '../../src/report/diagnose.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';

let snap: NodeSnapshot;
let capture: DnsCapture;
let healthy: Diagnosis;

const ZONE = 'cluster.local';
const verdicts = (d: Diagnosis) => Object.fromEntries(d.services.map((s) => [`${s.namespace}/${s.name}`, s.verdict]));
const dnsFindings = (d: Diagnosis, ref: string): Finding[] => (d.services.find((s) => `${s.namespace}/${s.name}` === ref)?.findings ?? []).filter((f) => f.layer === 'dns');
const changed = (d: Diagnosis) => Object.entries(verdicts(d)).filter(([k, v]) => verdicts(healthy)[k] !== v).map(([k]) => k);

function run(dns: DnsLayer, api: ApiObjects = snap.api!.value!): Diagnosis {
  return diagnoseSnapshot(snap, api, { dns });
}

/** The capture with the exchanges of `qname`/`qtype` changed by `change`. */
function edited(qname: string, qtype: string, change: (e: DnsExchange) => DnsExchange): DnsCapture {
  return { ...capture, exchanges: capture.exchanges.map((e) => (e.qname === qname && e.qtype === qtype ? change(e) : e)) };
}

function answer(e: DnsExchange, type: string, ...data: string[]): DnsExchange {
  return { ...e, outcome: 'answer', rcode: 'NOERROR', answers: data.map((d) => ({ section: 'answer', name: e.qname, type, ttl: 5, data: d })) };
}

beforeAll(async () => {
  snap = await snapshotOf('lab-iptables');
  capture = readBundleDnsCapture(fixtureDir('lab-iptables')).capture;
  healthy = run(dnsLayerOf(snap.api!.value!, capture, ZONE));
});

describe('the shipped captures: recorded answers agree with the API', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: dns checked, no dns finding, verdicts as without the layer', async (name) => {
    const s = await snapshotOf(name);
    const layer = dnsLayerOf(s.api!.value!, readBundleDnsCapture(fixtureDir(name)).capture, ZONE);
    expect(layer).toMatchObject({ checked: true, zone: ZONE });
    const d = diagnoseSnapshot(s, undefined, { dns: layer });
    expect(d.services.flatMap((x) => x.findings).filter((f) => f.layer === 'dns')).toEqual([]);
    expect(d.header.dns).toEqual({ checked: true, zone: ZONE });
    expect(verdicts(d)).toEqual(verdicts(diagnoseSnapshot(s)));
  });
});

describe('wrong answers, one Service at a time', () => {
  it('a stale ClusterIP in the A answer: broken, naming the answer, what the API says and the DNS pane row; nothing else changes', () => {
    const d = run(dnsLayerOf(snap.api!.value!, edited('web.default.svc.cluster.local', 'A', (e) => answer(e, 'A', '10.96.12.99')), ZONE));
    const f = dnsFindings(d, 'default/web');
    expect(f.map((x) => [x.code, x.severity])).toEqual([['dns-wrong-answer', 'broken']]);
    expect(f[0]!.message).toMatch(/^web\.default\.svc\.cluster\.local A: answered A 10\.96\.12\.99, the API says A 10\.96\.12\.34: /);
    expect(f[0]!.evidence).toEqual([{ pane: 'dns', ref: 'default/web web.default.svc.cluster.local A', text: 'A 10.96.12.99' }]);
    expect(changed(d)).toEqual(['default/web']);
  });

  it('a headless Service answering without one ready Pod: broken, the missing Pod IP named', () => {
    const d = run(dnsLayerOf(snap.api!.value!, edited('web-headless.default.svc.cluster.local', 'A', (e) => answer(e, 'A', ...e.answers.map((a) => a.data).filter((ip) => ip !== '10.244.1.15'))), ZONE));
    const f = dnsFindings(d, 'default/web-headless');
    expect(f.map((x) => [x.code, x.severity])).toEqual([['dns-wrong-answer', 'broken']]);
    expect(f[0]!.message).toContain('A 10.244.1.15');
    expect(changed(d)).toEqual(['default/web-headless']);
  });

  it('an AAAA answer for an IPv4-only Service: degraded (getaddrinfo still has the A answer)', () => {
    const d = run(dnsLayerOf(snap.api!.value!, edited('kube-dns.kube-system.svc.cluster.local', 'AAAA', (e) => answer(e, 'AAAA', 'fd00::10')), ZONE));
    const f = dnsFindings(d, 'kube-system/kube-dns');
    expect(f.map((x) => [x.code, x.severity])).toEqual([['dns-wrong-answer', 'degraded']]);
    expect(f[0]!.message).toContain('answered AAAA fd00::10, the API says no record (NODATA)');
    expect(verdicts(d)['kube-system/kube-dns']).toBe('degraded');
  });

  it('NXDOMAIN for a Service the API has: broken', () => {
    const d = run(dnsLayerOf(snap.api!.value!, edited('web.default.svc.cluster.local', 'A', (e) => ({ ...e, outcome: 'nxdomain', rcode: 'NXDOMAIN', answers: [] })), ZONE));
    expect(dnsFindings(d, 'default/web').map((x) => [x.code, x.severity, x.message.slice(0, 66)])).toEqual([['dns-wrong-answer', 'broken', 'web.default.svc.cluster.local A: answered NXDOMAIN, the API says A']]);
  });

  it('a recorded timeout: not compared, unknown, naming the server and the outcome (never ok)', () => {
    const d = run(dnsLayerOf(snap.api!.value!, edited('web.default.svc.cluster.local', 'A', (e) => ({ ...e, outcome: 'timeout', rcode: null, answers: [], error: 'no reply in 2000 ms' })), ZONE));
    const f = dnsFindings(d, 'default/web');
    expect(f.map((x) => [x.code, x.severity])).toEqual([['dns-not-answered', 'unknown']]);
    expect(f[0]!.message).toBe('web.default.svc.cluster.local A: not compared: the server 10.96.0.10 gave no usable reply when it was asked (timeout: no reply in 2000 ms)');
    expect(verdicts(d)['default/web']).toBe('unknown');
  });
});

describe('ExternalName Services', () => {
  let api: ApiObjects;
  let exch: (qname: string, qtype: string) => DnsExchange;
  beforeAll(() => {
    const list = JSON.parse(readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json'), 'utf8')) as { items: unknown[] };
    const ext = (name: string, externalName: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default', uid: `uid-${name}` }, spec: { type: 'ExternalName', externalName } });
    list.items.push(ext('docs', 'docs.example.com'), ext('legacy-db', '192.0.2.7'));
    api = parseK8sObjects(JSON.stringify(list), 'api').value;
    const template = capture.exchanges[0]!;
    exch = (qname, qtype) => ({ ...template, qname, qtype: qtype as DnsExchange['qtype'], outcome: 'nxdomain', rcode: 'NXDOMAIN', answers: [] });
  });

  it('a CNAME to the right name is ok; to another name is broken', () => {
    const right = answer(exch('docs.default.svc.cluster.local', 'CNAME'), 'CNAME', 'docs.example.com');
    const ok = run(dnsLayerOf(api, { ...capture, exchanges: [...capture.exchanges, right] }, ZONE), api);
    expect(dnsFindings(ok, 'default/docs')).toEqual([]);
    const wrong = answer(exch('docs.default.svc.cluster.local', 'CNAME'), 'CNAME', 'docs.example.org');
    const d = run(dnsLayerOf(api, { ...capture, exchanges: [...capture.exchanges, wrong] }, ZONE), api);
    const f = dnsFindings(d, 'default/docs');
    expect(f.map((x) => [x.code, x.severity])).toEqual([['dns-wrong-answer', 'broken']]);
    expect(f[0]!.message).toContain('answered CNAME docs.example.org, the API says CNAME docs.example.com');
  });

  it('an ExternalName holding an IP: NXDOMAIN is what CoreDNS answers (no dns finding; the api layer says why it is broken); a CNAME answer instead is a dns finding', () => {
    const nx = exch('legacy-db.default.svc.cluster.local', 'A');
    const d = run(dnsLayerOf(api, { ...capture, exchanges: [...capture.exchanges, nx] }, ZONE), api);
    expect(dnsFindings(d, 'default/legacy-db')).toEqual([]);
    expect(d.services.find((s) => s.name === 'legacy-db')!.findings.map((f) => f.code)).toEqual(['externalname-ip']);
    const cname = answer(exch('legacy-db.default.svc.cluster.local', 'A'), 'CNAME', '192.0.2.7');
    const d2 = run(dnsLayerOf(api, { ...capture, exchanges: [...capture.exchanges, cname] }, ZONE), api);
    expect(dnsFindings(d2, 'default/legacy-db').map((x) => x.code)).toEqual(['dns-wrong-answer']);
    expect(dnsFindings(d2, 'default/legacy-db')[0]!.message).toContain('the API says NXDOMAIN');
  });
});

describe('no DNS data: the layer is not checked, never ok', () => {
  it('no capture, or one naming no Service: no dns finding, the header says why; the JSON and text say "not checked"', () => {
    for (const layer of [dnsLayerOf(snap.api!.value!, null, ZONE), dnsLayerOf(snap.api!.value!, { formatVersion: 1, exchanges: [{ ...capture.exchanges[0]!, qname: 'example.com' }] }, ZONE)]) {
      expect(layer.checked).toBe(false);
      const d = run(layer);
      expect(d.services.flatMap((s) => s.findings).filter((f) => f.layer === 'dns')).toEqual([]);
      expect(d.header.dns.checked).toBe(false);
      expect(d.header.dns.reason).toMatch(/no recorded DNS answers|name no Service/);
    }
    const json = JSON.parse(showDiagnose(snap, 'json').out) as { dns: unknown };
    expect(json.dns).toEqual({ checked: false, reason: expect.stringContaining('no recorded DNS answers') });
    expect(showDiagnose(snap, 'text').out).toContain('\ndns: not checked: no recorded DNS answers');
  });
});

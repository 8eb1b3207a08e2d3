/**
 * Lab: the DNS pane's data from the real kernel. Every question goes to the kube-dns
 * ClusterIP (10.96.0.10) from inside the node namespace through the declared
 * `dns-query` probe (`ip netns exec <node> node dist/src/dns/query-main.js …`), so it is
 * DNATed by the node's kube-proxy rules to a coredns pod's dnsmasq and tracked by
 * conntrack — as a pod's query would be. The lab's dnsmasq gets extra records here: two
 * ExternalName targets, a name with 40 addresses (a truncated UDP reply), and a wrong
 * address for `default/empty` (the deliberate mismatch). The API objects get the
 * matching ExternalName Services and a Service DNS does not know yet.
 *
 * Needs the build (`npm test` runs tsc first): the probe runs dist/src/dns/query-main.js.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { ProbeDnsTransport } from '../../src/dns/probe.js';
import { dnsCaptureExtras, readBundleDnsCapture, RecordingDnsTransport, REPLAY_NOTE, ReplayDnsTransport } from '../../src/dns/replay.js';
import { dnsLayerOf } from '../../src/dns/diagnose-dns.js';
import { resolveServiceDns } from '../../src/dns/resolve.js';
import { runDigCommand } from '../../src/dns/dig.js';
import type { DnsTransport } from '../../src/dns/transport.js';
import { showDns } from '../../src/report/dns.js';
import type { ApiObjects } from '../../src/model/k8s.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { packageRoot } from '../../src/paths.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { LocalTransport } from '../../src/sources/local.js';
import { labDown, labUp, nsExec, type LabDnsExtras, type LabHandle } from './lab.js';

const PREFIX = 'nsdns-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl']);
const QUERY_MAIN = path.join(packageRoot(), 'dist/src/dns/query-main.js');
const Z = 'default.svc.cluster.local';
const KUBE_DNS = '10.96.0.10';
const COREDNS_PODS = ['10.244.0.2', '10.244.0.3'];

/** ExternalName Services of this test: API object and DNS record come from the same row. */
const EXTERNAL_NAMES = [
  { name: 'web-alias', target: `web.${Z}` },
  { name: 'ext', target: 'db.example.test' },
];
const BIG = Array.from({ length: 40 }, (_, i) => `10.244.9.${i + 1}`);
const DNS_EXTRAS: LabDnsExtras = {
  records: [{ name: 'db.example.test', addresses: ['192.0.2.7'] }, { name: `big.${Z}`, addresses: BIG }],
  overrides: [{ name: `empty.${Z}`, addresses: ['10.96.50.99'] }],
  cnames: EXTERNAL_NAMES.map((e) => ({ name: `${e.name}.${Z}`, target: e.target })),
};
const EXTRA_API_OBJECTS = [
  ...EXTERNAL_NAMES.map((e) => ({
    apiVersion: 'v1', kind: 'Service', metadata: { name: e.name, namespace: 'default' }, spec: { type: 'ExternalName', externalName: e.target },
  })),
  { apiVersion: 'v1', kind: 'Service', metadata: { name: 'new-svc', namespace: 'default' }, spec: { type: 'ClusterIP', clusterIP: '10.96.77.7', ports: [{ port: 80 }] } },
];

describe.runIf(canRun)('DNS through the kube-dns ClusterIP from the node namespace', () => {
  let lab: LabHandle;
  let api: ApiObjects;
  let dns: DnsTransport;

  beforeAll(async () => {
    if (!existsSync(QUERY_MAIN)) throw new Error(`${QUERY_MAIN} is missing: build first (npx tsc -p . — npm test does)`);
    lab = await labUp('iptables', { prefix: PREFIX, dns: DNS_EXTRAS });
    const list = JSON.parse(readFileSync(lab.apiObjectsPath, 'utf8')) as { items: unknown[] };
    list.items.push(...EXTRA_API_OBJECTS);
    api = parseK8sObjects(JSON.stringify(list), 'lab api objects').value;
    dns = new ProbeDnsTransport(new LocalTransport({ netns: lab.names.node }));
  });
  afterAll(async () => {
    await labDown({ prefix: PREFIX });
  });

  const resolve = (service: string) => resolveServiceDns({ api, service, dns, query: { timeoutMs: 1000, tries: 2 } });
  const lines = (r: Awaited<ReturnType<typeof resolve>>) => r.checks.map((c) => `${c.qtype} ${c.qname} ${c.exchange.rcode ?? c.exchange.outcome} ${c.verdict}`);

  it('answers A, AAAA and SRV of default/web as the API predicts, through real DNAT', async () => {
    const r = await resolve('default/web');
    expect(lines(r)).toEqual([`A web.${Z} NOERROR ok`, `AAAA web.${Z} NOERROR ok`, `SRV _http._tcp.web.${Z} NOERROR ok`]);
    expect(r.server).toEqual({ address: KUBE_DNS, port: 53, source: 'kube-dns-service', service: 'kube-system/kube-dns' });
    expect(r.via).toBe(`netns:${lab.names.node}`);
    expect(r.checks[0]!.exchange.answers.map((a) => a.data)).toEqual(['10.96.12.34']);
    const ct = await nsExec(lab.names.node, ['conntrack', '-L', '-p', 'udp', '--orig-dst', KUBE_DNS]);
    const replied = [...ct.stdout.matchAll(/dport=53 .*?src=(\S+) dst=/g)].map((m) => m[1]);
    expect(replied.length).toBeGreaterThan(0);
    expect(replied.every((ip) => COREDNS_PODS.includes(ip ?? ''))).toBe(true);
  });

  it('answers the headless Service with every endpoint, each endpoint name and per-endpoint SRV', async () => {
    const r = await resolve('default/web-headless');
    expect(r.checks.every((c) => c.verdict === 'ok')).toBe(true);
    const eps = ['10.244.0.23', '10.244.0.31', '10.244.1.15'];
    expect(r.checks[0]!.exchange.answers.map((a) => a.data).sort()).toEqual(eps);
    expect(r.checks.filter((c) => c.qtype === 'A').map((c) => c.qname)).toEqual([`web-headless.${Z}`, ...eps.map((ip) => `${ip.replaceAll('.', '-')}.web-headless.${Z}`)]);
    const srv = r.checks.find((c) => c.qtype === 'SRV')!;
    expect(srv.exchange.answers.map((a) => a.data).sort()).toEqual(eps.map((ip) => `0 33 8080 ${ip.replaceAll('.', '-')}.web-headless.${Z}`));
  });

  it('answers an ExternalName Service with its CNAME, inside and outside the zone', async () => {
    const alias = await resolve('default/web-alias');
    expect(lines(alias)).toEqual([`A web-alias.${Z} NOERROR ok`, `AAAA web-alias.${Z} NOERROR mismatch`, `CNAME web-alias.${Z} NOERROR ok`]);
    expect(alias.checks[0]!.exchange.answers.map((a) => `${a.type} ${a.data}`)).toEqual([`CNAME web.${Z}`, 'A 10.96.12.34']);
    // dnsmasq, unlike CoreDNS, gives the CNAME even when its target has no AAAA: flagged, as it should be.
    expect(alias.checks[1]!.records.map((x) => [x.verdict, x.actual])).toEqual([['unexpected', `CNAME web.${Z}`]]);
    const ext = await resolve('default/ext');
    expect(ext.checks[0]!.records.map((x) => `${x.verdict} ${x.actual}`)).toEqual(['match CNAME db.example.test', 'upstream A 192.0.2.7']);
    expect(ext.checks[0]!.verdict).toBe('ok');
  });

  it('gets NXDOMAIN for a Service that does not exist, as expected', async () => {
    const r = await resolve('default/nosuch');
    expect(lines(r)).toEqual([`A nosuch.${Z} NXDOMAIN ok`, `AAAA nosuch.${Z} NXDOMAIN ok`]);
    expect(r.serviceExists).toBe(false);
  });

  it('flags a wrong address and a Service DNS does not know yet', async () => {
    const wrong = await resolve('default/empty');
    expect(wrong.checks[0]!.records.map((x) => [x.verdict, x.expected, x.actual])).toEqual([['mismatch', 'A 10.96.50.5', 'A 10.96.50.99']]);
    expect(wrong.checks[0]!.verdict).toBe('mismatch');
    const fresh = await resolve('default/new-svc');
    expect(fresh.checks[0]!.records.map((x) => [x.verdict, x.expected])).toEqual([['missing', 'A 10.96.77.7']]);
    expect([fresh.checks[0]!.exchange.rcode, fresh.checks[0]!.rcodeMatches]).toEqual(['NXDOMAIN', false]);
  });

  it('sends the search expansion of web.default a pod would send: NXDOMAIN, then NOERROR', async () => {
    const r = await resolve('default/web');
    const [short, dotted] = r.searches;
    expect(short!.steps.map((s) => s.qname)).toEqual([`web.${Z}.`]);
    expect(dotted!.steps.map((s) => [s.qname, s.exchanges.map((e) => e.rcode)])).toEqual([
      [`web.default.${Z}.`, ['NXDOMAIN', 'NXDOMAIN']],
      [`web.${Z}.`, ['NOERROR', 'NOERROR']],
    ]);
    expect([dotted!.answeredBy, dotted!.queries, dotted!.wastedQueries, dotted!.ndots]).toEqual([`web.${Z}.`, 4, 2, 5]);
    // The coredns pods' own logs saw those questions (the ClusterIP spread them over both).
    const logs = ['coredns-1', 'coredns-2'].map((k) => readFileSync(path.join(lab.stateDir, `dns-${k}.log`), 'utf8')).join('\n');
    expect(logs).toContain(`query[A] web.default.${Z} from 192.168.49.2`);
    expect(logs).toContain(`query[AAAA] web.default.${Z} from 192.168.49.2`);
  });

  it('retries a truncated UDP reply over TCP through the ClusterIP', async () => {
    const e = await dns.query({ server: KUBE_DNS, port: 53, qname: `big.${Z}`, qtype: 'A' });
    expect(e).toMatchObject({ outcome: 'answer', truncated: true, transport: 'tcp', tries: 2 });
    expect(e.answers.map((a) => a.data).sort()).toEqual([...BIG].sort());
    const ct = await nsExec(lab.names.node, ['conntrack', '-L', '-p', 'tcp', '--orig-dst', KUBE_DNS]);
    expect(ct.stdout).toMatch(/dport=53 /);
  });

  it('reports a ClusterIP without a DNS endpoint as a timeout, with the server and the time waited', async () => {
    // default/empty's ClusterIP has no rule for 53/udp: the query is routed away and never answered.
    const e = await dns.query({ server: '10.96.50.5', port: 53, qname: `web.${Z}`, qtype: 'A' }, { timeoutMs: 400, tries: 2 });
    expect(e).toMatchObject({ outcome: 'timeout', tries: 2, rcode: null, server: '10.96.50.5' });
    expect(e.latencyMs).toBeGreaterThanOrEqual(790);
    expect(e.latencyMs).toBeLessThan(3000);
    const dig = await runDigCommand({ name: `web.${Z}`, server: '10.96.50.5', dns, api, query: { timeoutMs: 300, tries: 1 } });
    expect(dig).toMatch(/;; no reply: TIMEOUT from 10\.96\.50\.5:53 after (29\d|3\d\d)(\.\d)? ms \(1 try\)/);
    const r = await resolveServiceDns({ api, service: 'default/web', dns, server: '10.96.50.5', shortNames: [], query: { timeoutMs: 300, tries: 1 } });
    const text = showDns(api, [r], 'text');
    expect(r.checks.every((c) => c.verdict === 'no-reply')).toBe(true);
    expect(text).toMatch(/^web\.default\.svc +A +TIMEOUT +TIMEOUT from 10\.96\.50\.5:53 after \d+ ms \(1 try\)/m);
  });

  it('answers nodescope dig through the node namespace, checked against the API', async () => {
    const text = await runDigCommand({ name: `_http._tcp.web.${Z}`, type: 'SRV', dns, api });
    expect(text).toContain(`; <<>> nodescope dig <<>> _http._tcp.web.${Z} SRV @${KUBE_DNS} via netns:${lab.names.node}`);
    expect(text).toContain(`_http._tcp.web.${Z}.\t5\tIN\tSRV\t0 100 80 web.${Z}.`);
    expect(text).toContain(';; EXPECTED from the API: NOERROR (Service default/web): ok');
  });

  it('replays a capture of these exchanges exactly', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nsdns-bundle-'));
    try {
      const recorder = new RecordingDnsTransport(new ProbeDnsTransport(new LocalTransport({ netns: lab.names.node })));
      const live = await resolveServiceDns({ api, service: 'default/web-headless', dns: recorder });
      writeBundle(dir, {
        capturedAt: new Date().toISOString(), nodescopeVersion: '0.1.0', node: 'lab-node', source: { kind: 'netns', label: `netns:${lab.names.node}` },
        toolVersions: {}, runs: [], extras: dnsCaptureExtras(recorder.capture()),
      });
      const replay = ReplayDnsTransport.fromBundle(dir);
      const again = await resolveServiceDns({ api, service: 'default/web-headless', dns: replay });
      expect(again.via).toBe(`replay:${dir}`);
      // The same answers and checks; the replay adds one note saying they are recorded.
      expect({ ...again, via: live.via, notes: again.notes.filter((n) => n !== REPLAY_NOTE) }).toEqual(live);
      expect(again.notes).toContain(REPLAY_NOTE);
      expect(again.checks[0]!.exchange.via).toBe(`netns:${lab.names.node}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('diagnose (issue 17, DNS layer): a capture of every Service\'s answers, judged against the API — the wrong address, the Service DNS does not know and the bare CNAME dnsmasq gives for an AAAA are findings naming the answer; no other Service has one', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nsdns-diag-'));
    try {
      const recorder = new RecordingDnsTransport(new ProbeDnsTransport(new LocalTransport({ netns: lab.names.node })));
      for (const svc of api.services) await resolveServiceDns({ api, service: `${svc.meta.namespace}/${svc.meta.name}`, dns: recorder, shortNames: [], query: { timeoutMs: 1000, tries: 2 } });
      writeBundle(dir, {
        capturedAt: new Date().toISOString(), nodescopeVersion: '0.1.0', node: 'lab-node', source: { kind: 'netns', label: `netns:${lab.names.node}` },
        toolVersions: {}, runs: [], extras: dnsCaptureExtras(recorder.capture()),
      });
      const layer = dnsLayerOf(api, readBundleDnsCapture(dir).capture, 'cluster.local');
      expect(layer.checked).toBe(true);
      const found = layer.checked ? [...layer.findings].map(([ref, fs]) => [ref, fs.map((f) => `${f.code} ${f.severity}: ${f.message}`)]) : [];
      // The lab's dnsmasq answers an ExternalName's AAAA with the bare CNAME; CoreDNS drops a CNAME to an in-zone name without that record (NODATA).
      expect(found).toEqual([
        ['default/empty', [`dns-wrong-answer broken: empty.${Z} A: answered A 10.96.50.99, the API says A 10.96.50.5: Service default/empty`]],
        ['default/web-alias', [`dns-wrong-answer degraded: web-alias.${Z} AAAA: answered CNAME web.${Z}, the API says no record (NODATA): Service default/web-alias, but no AAAA record (NODATA)`]],
        ['default/new-svc', [
          `dns-wrong-answer broken: new-svc.${Z} A: answered NXDOMAIN, the API says A 10.96.77.7: Service default/new-svc`,
          `dns-wrong-answer degraded: new-svc.${Z} AAAA: answered NXDOMAIN, the API says no record (NODATA): Service default/new-svc, but no AAAA record (NODATA)`,
        ]],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

/**
 * `show dns` (JSON and text) and `nodescope dig` over a real DNS server on 127.0.0.1;
 * choosing the DNS transport for a source.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectDnsTransport } from '../../src/dns/direct.js';
import { runDigCommand } from '../../src/dns/dig.js';
import { dnsTransportFor } from '../../src/dns/open.js';
import { parseDnsCapture } from '../../src/dns/capture.js';
import { recordServiceDns } from '../../src/dns/record.js';
import { ProbeDnsTransport } from '../../src/dns/probe.js';
import { REPLAY_NOTE, ReplayDnsTransport } from '../../src/dns/replay.js';
import { resolveServiceDns } from '../../src/dns/resolve.js';
import { UserError } from '../../src/errors.js';
import type { ServiceDnsResult } from '../../src/model/dns.js';
import { showDns } from '../../src/report/dns.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { LocalTransport } from '../../src/sources/local.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { Transport } from '../../src/sources/transport.js';
import { startTestDnsServer, type TestDnsServer } from './builders/dns.js';
import { makeService, objectsOf } from './builders/k8s.js';

const Z = 'default.svc.cluster.local';
const api = objectsOf(
  makeService({ name: 'kube-dns', namespace: 'kube-system', clusterIP: '10.96.0.10', ports: [{ name: 'dns', protocol: 'UDP', port: 53 }] }),
  makeService({ name: 'web', clusterIP: '10.96.12.34', ports: [{ name: 'http', port: 80 }] }),
  makeService({ name: 'stale', clusterIP: '10.96.50.5', ports: [{ name: 'http', port: 80 }] }),
);
let server: TestDnsServer;
let web: ServiceDnsResult;
let stale: ServiceDnsResult;
const dns = new DirectDnsTransport();
beforeAll(async () => {
  server = await startTestDnsServer({
    records: [
      { name: `web.${Z}`, type: 'A', data: '10.96.12.34' },
      { name: `_http._tcp.web.${Z}`, type: 'SRV', data: { priority: 0, weight: 100, port: 80, target: `web.${Z}` } },
      { name: `stale.${Z}`, type: 'A', data: '10.96.50.99' },
    ],
    silent: [`_http._tcp.stale.${Z}`],
  });
  const opts = { api, dns, server: '127.0.0.1', port: server.port, query: { timeoutMs: 100, tries: 2 } };
  web = await resolveServiceDns({ ...opts, service: 'default/web' });
  stale = await resolveServiceDns({ ...opts, service: 'default/stale', shortNames: ['stale'] });
});
afterAll(async () => server.close());

describe('show dns', () => {
  it('writes the JSON document with every check, reply and search', () => {
    const doc = JSON.parse(showDns(api, [web, stale], 'json')) as {
      ttlCompared: boolean;
      dns: { name: string; checks: { qtype: string; verdict: string; reply: { answers: { data: string; ttl: number }[]; latencyMs: number; outcome: string } }[]; searches: { name: string; queries: number; steps: unknown[] }[] }[];
    };
    expect(doc.ttlCompared).toBe(false);
    expect(doc.dns.map((d) => d.name)).toEqual(['web', 'stale']);
    expect(doc.dns[0]!.checks.map((c) => [c.qtype, c.verdict])).toEqual([['A', 'ok'], ['AAAA', 'ok'], ['SRV', 'ok']]);
    expect(doc.dns[0]!.checks[0]!.reply.answers).toEqual([{ name: `web.${Z}`, type: 'A', ttl: 5, data: '10.96.12.34' }]);
    expect(doc.dns[0]!.searches.map((s) => [s.name, s.queries, s.steps.length])).toEqual([['web', 2, 1], ['web.default', 4, 2]]);
    expect(doc.dns[1]!.checks.map((c) => [c.verdict, c.reply.outcome])).toEqual([['mismatch', 'answer'], ['ok', 'nodata'], ['no-reply', 'timeout']]);
    expect(JSON.stringify(doc)).not.toContain('replyHex');
  });

  it('writes text with the table, the mismatched records, the timeout, the searches and the TTL note', () => {
    const text = showDns(api, [stale], 'text');
    expect(text).toContain(`default/stale  stale.${Z}`);
    expect(text).toContain(`server 127.0.0.1:${server.port} (--dns-server) via direct`);
    expect(text).toMatch(/^stale\.default\.svc +A +NOERROR +10\.96\.50\.99/m);
    expect(text).toMatch(new RegExp(`TIMEOUT from 127\\.0\\.0\\.1:${server.port} after \\d+(\\.\\d)? ms \\(2 tries\\)`));
    expect(text).toContain('  mismatch   expected A 10.96.50.5  got A 10.96.50.99');
    expect(text).toContain(`search "stale" with a ClusterFirst Pod's resolv.conf (ndots:5; search default.svc.cluster.local svc.cluster.local cluster.local; nameserver 127.0.0.1):`);
    expect(text).toMatch(/answered by stale\.default\.svc\.cluster\.local\. after 2 queries in [\d.]+ ms; 0 queries before it \(ndots:5\)/);
    expect(text).toContain('note: TTLs are not compared');
  });
});

describe('nodescope dig', () => {
  const digOpts = { dns, api, server: '127.0.0.1', port: server?.port ?? 0 };

  it('prints the reply in dig layout and checks it against the API', async () => {
    const text = await runDigCommand({ ...digOpts, port: server.port, name: `_http._tcp.web.${Z}`, type: 'srv' });
    expect(text).toContain(';; ->>HEADER<<- status: NOERROR, flags: qr aa rd; ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 0');
    expect(text).toContain(`;; ANSWER SECTION:\n_http._tcp.web.${Z}.\t5\tIN\tSRV\t0 100 80 web.${Z}.`);
    expect(text).toContain(`;; EXPECTED from the API: NOERROR (Service default/web): ok`);
    expect(text).toContain(`;;   match      expected SRV 0 100 80 web.default.svc  got SRV 0 100 80 web.default.svc`);
  });

  it('says there was no reply, from where and for how long', async () => {
    const text = await runDigCommand({ ...digOpts, port: server.port, name: `_http._tcp.stale.${Z}`, type: 'SRV', query: { timeoutMs: 100, tries: 1 } });
    expect(text).toMatch(new RegExp(`;; no reply: TIMEOUT from 127\\.0\\.0\\.1:${server.port} after \\d+(\\.\\d)? ms \\(1 try\\)`));
  });

  it('prints JSON without the reply bytes', async () => {
    const doc = JSON.parse(await runDigCommand({ ...digOpts, port: server.port, name: `stale.${Z}`, format: 'json' })) as { exchange: Record<string, unknown>; check: { verdict: string; records: unknown[] } };
    expect(doc.exchange.replyHex).toBeUndefined();
    expect(doc.check.verdict).toBe('mismatch');
    expect(doc.check.records).toEqual([{ verdict: 'mismatch', name: `stale.${Z}`, type: 'A', expected: 'A 10.96.50.5', actual: 'A 10.96.50.99' }]);
  });

  it('refuses a bad type, a bad name, or no server to ask', async () => {
    await expect(runDigCommand({ ...digOpts, name: 'web', type: 'MX' })).rejects.toBeInstanceOf(UserError);
    await expect(runDigCommand({ ...digOpts, name: 'we b' })).rejects.toBeInstanceOf(UserError);
    await expect(runDigCommand({ dns, name: `web.${Z}` })).rejects.toBeInstanceOf(UserError);
  });
});

describe('dnsTransportFor', () => {
  it('picks direct for --local, the probe for --netns, the recorded exchanges for a replay', () => {
    expect(dnsTransportFor(new LocalTransport())).toBeInstanceOf(DirectDnsTransport);
    expect(dnsTransportFor(new LocalTransport({ netns: 'x' }))).toBeInstanceOf(ProbeDnsTransport);
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-dns-open-'));
    try {
      writeBundle(dir, { capturedAt: 't', nodescopeVersion: '0', node: 'n', source: { kind: 'local', label: 'local' }, toolVersions: {}, runs: [] });
      const t = dnsTransportFor(new ReplayTransport(dir));
      expect(t).toBeInstanceOf(ReplayDnsTransport);
      expect(t.label).toBe(`replay:${dir}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const ssh = { kind: 'ssh', label: 'node-1', exec: async () => { throw new Error('unused'); }, close: async () => {} } satisfies Transport;
    expect(() => dnsTransportFor(ssh)).toThrow(UserError);
    expect(dnsTransportFor({ ...ssh, openTcp: async () => { throw new Error('unused'); } } as Transport).kind).toBe('tcp-stream');
  });
});

describe('recordServiceDns (DNS for a capture)', () => {
  it('records every exchange of every Service and replays to the same results', async () => {
    const live = await recordServiceDns({ api, dns, server: '127.0.0.1', port: server.port, query: { timeoutMs: 100, tries: 1 } });
    expect(live.results.map((r) => `${r.namespace}/${r.name}`)).toEqual(['default/stale', 'default/web', 'kube-system/kube-dns']);
    const asked = live.results.reduce((n, r) => n + r.checks.length + r.searches.reduce((m, s) => m + s.queries, 0), 0);
    expect(live.capture.exchanges).toHaveLength(asked);
    const parsed = parseDnsCapture(live.extras['dns.json']!, 'dns.json');
    expect(parsed.diagnostics).toEqual([]);
    const replay = new ReplayDnsTransport(parsed.value, 'replay:x');
    const again = await recordServiceDns({ api, dns: replay, server: '127.0.0.1', port: server.port, query: { timeoutMs: 100, tries: 1 } });
    // The same answers and checks; the replay adds one note saying they are recorded.
    expect(again.results.map((r) => ({ ...r, via: 'direct', notes: r.notes.filter((n) => n !== REPLAY_NOTE) }))).toEqual(live.results);
    expect(again.results.every((r) => r.notes.includes(REPLAY_NOTE))).toBe(true);
  });
});

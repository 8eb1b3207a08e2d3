/**
 * Expected vs actual, record by record: match, mismatch, missing, unexpected, upstream;
 * RCODE; no reply; outside the zone. Expected answers come from the real
 * `expectedAnswer` over API objects built with the k8s builders.
 */
import { describe, expect, it } from 'vitest';
import { expectedAnswer, type ExpectedRecordType } from '../../src/analysis/dns-expected.js';
import { compareExchange, expectedRecordText } from '../../src/dns/compare.js';
import type { DnsExchange } from '../../src/model/dns.js';
import { makeExchange, makeNxdomain, makeRecord, makeTimeout } from './builders/dns.js';
import { makeEndpointSlice, makeService, objectsOf } from './builders/k8s.js';

const Z = 'default.svc.cluster.local';
const api = objectsOf(
  makeService({ name: 'web', clusterIP: '10.96.12.34', ports: [{ name: 'http', port: 80 }] }),
  makeService({ name: 'dual', clusterIP: '10.96.0.20', clusterIPs: ['10.96.0.20', 'fd00::20'], ports: [{ name: 'http', port: 80 }] }),
  makeService({ name: 'db', clusterIP: 'None', clusterIPs: ['None'], ports: [{ name: 'pg', port: 5432 }] }),
  makeEndpointSlice({ service: 'db', name: 'db-1', ports: [{ name: 'pg', port: 5432 }], endpoints: [{ address: '10.244.1.5' }, { address: '10.244.2.6' }] }),
  makeService({ name: 'ext', type: 'ExternalName', clusterIP: null, externalName: 'db.example.com', ports: [] }),
);

/** Compares a reply with the answer predicted for its question. */
function check(qtype: ExpectedRecordType, exchange: Partial<DnsExchange>) {
  const e = makeExchange({ qtype, ...exchange });
  return compareExchange(expectedAnswer(api, e.qname, qtype), e);
}
const A = (data: string, name = `web.${Z}`) => makeRecord('A', data, name);
const verdicts = (c: ReturnType<typeof check>) => c.records.map((r) => `${r.verdict} ${r.expected ?? '-'} | ${r.actual ?? '-'}`);

describe('compareExchange', () => {
  it('matches the ClusterIP (TTL ignored, name case and final dot ignored)', () => {
    const c = check('A', { answers: [makeRecord('A', '10.96.12.34', `WEB.Default.svc.cluster.local.`, { ttl: 30 })] });
    expect([c.verdict, c.rcodeMatches, c.expectedRcode]).toEqual(['ok', true, 'NOERROR']);
    expect(verdicts(c)).toEqual(['match A 10.96.12.34 | A 10.96.12.34']);
  });

  it('flags a wrong address as a mismatch, paired with the expected record', () => {
    const c = check('A', { answers: [A('10.96.99.99')] });
    expect(c.verdict).toBe('mismatch');
    expect(verdicts(c)).toEqual(['mismatch A 10.96.12.34 | A 10.96.99.99']);
  });

  it('says missing for NXDOMAIN where the Service exists', () => {
    const c = check('A', { outcome: 'nxdomain', rcode: 'NXDOMAIN', answers: [] });
    expect([c.verdict, c.rcodeMatches]).toEqual(['mismatch', false]);
    expect(verdicts(c)).toEqual(['missing A 10.96.12.34 | -']);
  });

  it('agrees on NXDOMAIN for a Service that does not exist, and on NODATA', () => {
    const nx = compareExchange(expectedAnswer(api, `gone.${Z}`, 'A'), makeNxdomain(`gone.${Z}`));
    expect([nx.verdict, nx.expectedRcode, nx.records]).toEqual(['ok', 'NXDOMAIN', []]);
    expect(nx.expectedReason).toMatch(/no Service gone/);
    const nodata = check('AAAA', { outcome: 'nodata', answers: [] });
    expect(nodata.verdict).toBe('ok');
  });

  it('flags an answer for a name that should not exist', () => {
    const e = makeExchange({ qname: `gone.${Z}`, answers: [A('10.96.1.1', `gone.${Z}`)] });
    const c = compareExchange(expectedAnswer(api, e.qname, 'A'), e);
    expect([c.verdict, c.rcodeMatches]).toEqual(['mismatch', false]);
    expect(verdicts(c)).toEqual(['unexpected - | A 10.96.1.1']);
  });

  it('compares IPv6 addresses in canonical form', () => {
    const c = check('AAAA', { qname: `dual.${Z}`, answers: [makeRecord('AAAA', 'FD00:0:0:0:0:0:0:20', `dual.${Z}`)] });
    expect(c.verdict).toBe('ok');
  });

  it('compares SRV priority, weight, port and target', () => {
    const name = `_http._tcp.web.${Z}`;
    const ok = check('SRV', { qname: name, answers: [makeRecord('SRV', `0 100 80 WEB.${Z}`, name)] });
    expect(ok.verdict).toBe('ok');
    const weight0 = check('SRV', { qname: name, answers: [makeRecord('SRV', `0 0 80 web.${Z}`, name)] });
    expect(verdicts(weight0)).toEqual([`mismatch SRV 0 100 80 web.${Z} | SRV 0 0 80 web.${Z}`]);
  });

  it('checks every endpoint address of a headless Service (order free) and an extra one', () => {
    const name = `db.${Z}`;
    const c = check('A', { qname: name, answers: [A('10.244.2.6', name), A('10.244.9.9', name), A('10.244.1.5', name)] });
    expect(verdicts(c)).toEqual(['match A 10.244.1.5 | A 10.244.1.5', 'match A 10.244.2.6 | A 10.244.2.6', 'unexpected - | A 10.244.9.9']);
    expect(c.verdict).toBe('mismatch');
  });

  it('takes the upstream resolution behind an ExternalName CNAME as upstream, not unexpected', () => {
    const name = `ext.${Z}`;
    const c = check('A', { qname: name, answers: [makeRecord('CNAME', 'db.example.com', name), A('192.0.2.7', 'db.example.com')] });
    expect(verdicts(c)).toEqual(['match CNAME db.example.com | CNAME db.example.com', 'upstream - | A 192.0.2.7']);
    expect(c.verdict).toBe('ok');
  });

  it('does not judge a question without a reply, or outside the zone', () => {
    const t = check('A', makeTimeout());
    expect([t.verdict, t.rcodeMatches, t.records, t.expectedRcode]).toEqual(['no-reply', null, [], 'NOERROR']);
    const outside = compareExchange(expectedAnswer(api, 'www.example.com', 'A'), makeExchange({ qname: 'www.example.com', answers: [A('192.0.2.1', 'www.example.com')] }));
    expect([outside.verdict, outside.expectedRcode]).toEqual(['unpredicted', null]);
    expect(verdicts(outside)).toEqual(['upstream - | A 192.0.2.1']);
  });

  it('writes expected records in the same text as actual ones', () => {
    const srv = expectedAnswer(api, `_http._tcp.web.${Z}`, 'SRV')!.answers[0]!;
    expect(expectedRecordText(srv)).toBe(`SRV 0 100 80 web.${Z}`);
  });
});

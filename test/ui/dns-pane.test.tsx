/**
 * Frames of the DNS pane at 80 and 120 columns: a Service whose names answer as
 * predicted, a wrong record, a timeout and a SERVFAIL (with server and time), the
 * selected question's records, and the search expansion with its ndots cost. Checks
 * are computed by the real comparison against API objects built with the k8s builders.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { expectedAnswer } from '../../src/analysis/dns-expected.js';
import { compareExchange } from '../../src/dns/compare.js';
import { PORT_FORWARD_NOTE } from '../../src/dns/portforward.js';
import type { DnsExchange, DnsSearchStepRun, ServiceDnsResult } from '../../src/model/dns.js';
import { DnsPane, dnsPaneData, dnsRowCount, type DnsPaneData } from '../../src/ui/panes/DnsPane.js';
import type { Lang } from '../../src/text/i18n.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';
import { makeExchange, makeNxdomain, makeRecord, makeResult, makeSearch, makeTimeout } from '../unit/builders/dns.js';
import { makeService, objectsOf } from '../unit/builders/k8s.js';

const Z = 'default.svc.cluster.local';
const api = objectsOf(makeService({ name: 'web', clusterIP: '10.96.12.34', ports: [{ name: 'http', port: 80 }] }));
const check = (e: DnsExchange) => compareExchange(expectedAnswer(api, e.qname, e.qtype), e);
const step = (qname: string, exchanges: DnsExchange[], outcome: DnsSearchStepRun['outcome']): DnsSearchStepRun => ({
  qname, origin: 'search', exchanges, outcome, elapsedMs: Math.max(...exchanges.map((e) => e.latencyMs)),
});

/** default/web: A answered wrong, AAAA NODATA, SRV timed out, and a SERVFAIL on a second A. */
function webResult(): ServiceDnsResult {
  const srv = `_http._tcp.web.${Z}`;
  const nx = (q: string) => [makeNxdomain(q), makeNxdomain(q, { qtype: 'AAAA' })];
  return makeResult({
    checks: [
      check(makeExchange({ qname: `web.${Z}`, answers: [makeRecord('A', '10.96.99.99', `web.${Z}`)], latencyMs: 1.24 })),
      check(makeExchange({ qname: `web.${Z}`, qtype: 'AAAA', outcome: 'nodata', answers: [], latencyMs: 0.9 })),
      check(makeTimeout({ qname: srv, qtype: 'SRV', latencyMs: 3001.4 })),
      check(makeExchange({ qname: `web.${Z}`, outcome: 'servfail', rcode: 'SERVFAIL', answers: [], latencyMs: 2.5 })),
    ],
    searches: [
      makeSearch('web.default', [
        step(`web.default.${Z}.`, nx(`web.default.${Z}`), 'nxdomain'),
        step(`web.${Z}.`, [makeExchange({ qname: `web.${Z}` }), makeExchange({ qname: `web.${Z}`, qtype: 'AAAA', outcome: 'nodata', answers: [] })], 'answer'),
      ]),
    ],
  });
}

function pane(data: DnsPaneData, width: number, cursor = 0, height = 22, lang: Lang = 'en', pinned = false) {
  return renderAt(<DnsPane data={data} pinned={pinned} width={width} height={height} focused cursor={cursor} lang={lang} />, width);
}

describe.each(FRAME_WIDTHS)('DnsPane at %i columns', (width) => {
  const data: DnsPaneData = { kind: 'result', result: webResult() };

  it('shows every question, the wrong record, the timeout and the SERVFAIL, and the search cost', () => {
    const r = pane(data, width);
    const frame = r.frame();
    // The title names the Service and that it follows the Services cursor; the zone note is cut first at 80 columns.
    expect(frame).toContain('default/web (Services cursor) · web.default.svc.cluster.local · names relative');
    if (width >= 120) expect(frame).toContain('names relative to cluster.local');
    expect(frame).toContain('server 10.96.0.10:53 (kube-dns ClusterIP) via netns:ns-node');
    expect(frame).toMatch(/web\.default\.svc\s+A\s+NOERROR\s+10\.96\.99\.99\s+1\.2\s+MISMATCH/);
    expect(frame).toMatch(/_http\._tcp\.web\.default\.svc\s+SRV\s+timeout\s+— \(10\.96\.0\.10:53\)\s+3001\s+no reply/);
    expect(frame).toMatch(/SERVFAIL\s+\(no data\)\s+2\.5\s+MISMATCH/);
    expect(frame).toContain('mismatch: expected A 10.96.12.34 · got A 10.96.99.99');
    expect(frame).toContain('search "web.default" (ClusterFirst resolv.conf, ndots:5, @10.96.0.10)');
    expect(frame).toMatch(/1 web\.default\.default\.svc\s+A NXDOMAIN\s+AAAA NXDOMAIN/);
    expect(frame).toMatch(/2 web\.default\.svc {9}\s+A NOERROR\s+AAAA NOERROR/);
    expect(frame).toContain('ndots:5 cost: 2 of 4 queries went out before the answer');
    expect(frame.split('\n').every((l) => l.length <= width)).toBe(true);
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it('details the selected question: the timeout with its server, tries and time', () => {
    const r = pane(data, width, 2);
    const frame = r.frame();
    expect(frame).toContain('SRV _http._tcp.web.default.svc: timeout\n  no reply from 10.96.0.10:53 after 3001 ms (2 tries)\n');
    expect(frame).toContain('  expected NOERROR: Service default/web');
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it('keeps the table and cuts the lines below it on a short terminal', () => {
    const r = pane(data, width, 0, 8);
    const lines = r.frame().split('\n');
    expect(lines.length).toBeLessThanOrEqual(8);
    expect(lines[2]).toMatch(/QUESTION/);
    expect(lines.filter((l) => /NOERROR|SERVFAIL|timeout/.test(l)).length).toBeGreaterThanOrEqual(2);
    r.unmount();
  });
});

describe('DnsPane states and language', () => {
  it('in Japanese', () => {
    const r = pane({ kind: 'result', result: webResult() }, 80, 0, 22, 'ja');
    const frame = r.frame();
    expect(frame).toContain('不一致');
    expect(frame).toContain('ndots:5 のコスト');
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it.each([
    [{ kind: 'no-api' } as const, 'no API objects'],
    [{ kind: 'no-service' } as const, 'highlight a Service in the Services pane'],
    [{ kind: 'loading', service: 'default/web', server: '10.96.0.10' } as const, 'asking 10.96.0.10 about default/web (Services cursor)…'],
    [{ kind: 'failed', service: 'default/web', reason: 'no kube-dns Service' } as const, 'DNS check of default/web (Services cursor) failed: no kube-dns Service'],
  ])('%j', (data, text) => {
    const r = pane(data, 80);
    expect(r.frame()).toContain(text);
    r.unmount();
  });

  it('says in its title when the Service is pinned', () => {
    const r = pane({ kind: 'result', result: webResult() }, 120, 0, 22, 'en', true);
    expect(r.frame().split('\n')[0]).toMatch(/^default\/web \(pinned\) · web\.default\.svc/);
    r.unmount();
    const ja = pane({ kind: 'loading', service: 'default/web', server: null }, 80, 0, 22, 'ja', true);
    expect(ja.frame()).toContain('default/web（固定）');
    ja.unmount();
  });

  it('says when the Service is not in the API objects', () => {
    const result = makeResult({ name: 'nosuch', fqdn: `nosuch.${Z}`, serviceExists: false, checks: [check(makeNxdomain(`nosuch.${Z}`))] });
    const r = pane({ kind: 'result', result }, 120);
    expect(r.frame()).toContain('no such Service in the API objects: NXDOMAIN is expected');
    expect(r.frame()).toMatch(/nosuch\.default\.svc\s+A\s+NXDOMAIN\s+\(no data\).*ok/);
    r.unmount();
  });

  it('warns that a port-forward (--node) skips the node\'s ClusterIP DNAT, and only then', () => {
    const via = 'port-forward to kube-system/coredns-5d78c9869d-abcde:53';
    const forwarded = makeResult({ via, notes: [PORT_FORWARD_NOTE] });
    const r = pane({ kind: 'result', result: forwarded }, 120);
    expect(r.frame()).toContain(`via ${via}`);
    expect(r.frame()).toContain("asked through a port-forward to one CoreDNS pod: the node's ClusterIP DNAT is not on this path");
    r.unmount();
    const direct = pane({ kind: 'result', result: makeResult() }, 120);
    expect(direct.frame()).not.toContain('port-forward');
    direct.unmount();
  });

  it('derives its data from the selection and the latest result', () => {
    const result = webResult();
    const base = { hasApi: true, selectedService: 'default/web', result, loading: false, error: null };
    expect(dnsPaneData(base)).toEqual({ kind: 'result', result });
    expect(dnsPaneData({ ...base, hasApi: false }).kind).toBe('no-api');
    expect(dnsPaneData({ ...base, selectedService: null }).kind).toBe('no-service');
    expect(dnsPaneData({ ...base, selectedService: 'default/other', server: '10.96.0.10' })).toEqual({ kind: 'loading', service: 'default/other', server: '10.96.0.10' });
    expect(dnsPaneData({ ...base, error: 'boom' })).toEqual({ kind: 'failed', service: 'default/web', reason: 'boom' });
    expect(dnsRowCount({ kind: 'result', result })).toBe(4);
    expect(dnsRowCount({ kind: 'no-service' })).toBe(0);
  });
});

describe.each(FRAME_WIDTHS)('DnsPane on a replay answered by the capture\'s only server, at %i columns', (width) => {
  it('names the recorded server and the kube-dns ClusterIP it stands in for', () => {
    const pod = '10.244.0.2';
    const result = makeResult({ via: 'replay:fixtures/lab-cilium', checks: [check(makeExchange({ qname: `web.${Z}`, server: pod }))] });
    const frame = pane({ kind: 'result', result }, width, 0, 22).frame().replace(/\s+/g, ' ');
    expect(frame).toContain('server 10.96.0.10:53 (kube-dns ClusterIP)');
    expect(frame).toContain(`answered by ${pod}:53 (recorded), standing in for 10.96.0.10:53`);
  });
});

describe('DnsPane on a replay that holds no answer to the question', () => {
  it('says the capture has no answer (no time, no tries), and counts no ndots cost without an answer', () => {
    const missing = (qname: string, qtype: DnsExchange['qtype'] = 'A') =>
      makeExchange({ qname, qtype, outcome: 'not-captured', rcode: null, flags: null, answers: [], tries: 0, latencyMs: 0 });
    // What the search makes of it: the step unanswered, the run incomplete (src/dns/search.ts).
    const search = makeSearch('web', [step(`web.${Z}.`, [missing(`web.${Z}`), missing(`web.${Z}`, 'AAAA')], 'timeout')], { incomplete: true });
    const result = makeResult({ via: 'replay:/tmp/big', checks: [check(missing(`web.${Z}`))], searches: [search] });
    expect(search.wastedQueries).toBeGreaterThan(0);
    const frame = pane({ kind: 'result', result }, 120, 0, 30).frame();
    expect(frame).toContain('the capture holds no answer from 10.96.0.10:53 to this question (a replay answers only what was recorded)');
    expect(frame).not.toMatch(/no reply from .* after 0\.0 ms/);
    expect(frame).not.toContain('went out before the answer');
  });
});

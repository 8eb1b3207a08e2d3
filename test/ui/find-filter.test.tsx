/**
 * Issue 22 item 2, the rest, in frames: `:find` lists every Service, rule, set element, LB
 * frontend/backend and flow holding an IP or a name (whole words: 10.96.0.1 is not found in
 * 10.96.0.10), each hit opened by Enter in its pane and Esc back to the list; `/` filters the
 * DNS and Modes panes by what their rows show (regex, `!`); the cursor stays on its row while
 * a filter is typed. 80 and 120 columns, en and ja.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { expectedAnswer } from '../../src/analysis/dns-expected.js';
import { compareExchange } from '../../src/dns/compare.js';
import type { DnsExchange } from '../../src/model/dns.js';
import type { Lang } from '../../src/text/i18n.js';
import { App } from '../../src/ui/App.js';
import { findHits, wordTest } from '../../src/ui/find-view.js';
import { DnsPane, dnsRowCount, filterDnsData } from '../../src/ui/panes/DnsPane.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp, renderAt } from '../helpers/render.js';
import { makeExchange, makeRecord, makeResult, makeTimeout } from '../unit/builders/dns.js';
import { makeService, objectsOf } from '../unit/builders/k8s.js';

async function app(width: number, fixture = 'lab-iptables', lang: Lang = 'en', height = 30) {
  return renderApp(<App session={staticSession(await snapshotOf(fixture))} lang={lang} width={width} height={height} />, width, height);
}

describe('the find matcher', () => {
  it('matches an address or a name as a whole word only', () => {
    const ip = wordTest('10.96.0.1');
    expect(ip('-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp')).toBe(true);
    expect(ip('dst=10.96.0.1 sport=1')).toBe(true);
    expect(ip('10.96.0.1:443/TCP')).toBe(true);
    expect(ip('-d 10.96.0.10/32')).toBe(false);
    expect(ip('110.96.0.1')).toBe(false);
    const name = wordTest('web');
    expect(name('"default/web:http cluster IP"')).toBe(true);
    expect(name('default/web-headless')).toBe(false);
  });
});

describe('find across panes', () => {
  it('iptables capture: kube-dns by its ClusterIP in the Services, rules and flows', async () => {
    const hits = findHits(await snapshotOf('lab-iptables'), '10.96.0.10').hits;
    const panes = new Set(hits.map((h) => h.pane));
    expect([...panes].sort()).toEqual(['conntrack', 'rules', 'services']);
    expect(hits.filter((h) => h.pane === 'services').map((h) => h.where)).toEqual(['kube-system/kube-dns']);
    expect(hits.some((h) => h.pane === 'rules' && /nat\/KUBE-SERVICES #\d+$/.test(h.where) && h.text.includes('-d 10.96.0.10/32'))).toBe(true);
    for (const h of hits) expect(h.text).toMatch(/10\.96\.0\.10(?![0-9])/);
  });

  it('nftables capture: the element of @service-ips; Cilium capture: the LB frontend and a backend', async () => {
    const nft = findHits(await snapshotOf('lab-nftables'), '10.96.12.34').hits;
    expect(nft.some((h) => /@service-ips \[\d+\]$/.test(h.where))).toBe(true);
    const cilium = findHits(await snapshotOf('lab-cilium'), '10.96.12.34').hits;
    expect(cilium.some((h) => h.pane === 'lb' && h.where.startsWith('frontend 10.96.12.34:80'))).toBe(true);
    const backend = findHits(await snapshotOf('lab-cilium'), '10.244.0.23').hits;
    expect(backend.some((h) => h.pane === 'lb' && /^backend 10\.244\.0\.23:8080 of /.test(h.where))).toBe(true);
  });

  it.each(FRAME_WIDTHS)('at %i columns: :find lists the hits, Enter opens the rule in its chain, Esc comes back to the list', async (width) => {
    const r = await app(width);
    await r.press(':', ...'find 10.96.0.10', KEYS.enter);
    let f = r.frame();
    expect(f).toMatch(/find 10\.96\.0\.10: \d+ hits/);
    expect(f).toMatch(/PANE\s+WHERE\s+TEXT/);
    // Down to the first Rules hit, then open it.
    const rows = f.split('\n').filter((l) => /^\s*(Services|Rules|Conntrack)\s/.test(l));
    const firstRule = rows.findIndex((l) => /^\s*Rules/.test(l));
    expect(firstRule).toBeGreaterThanOrEqual(0);
    for (let i = 0; i < firstRule; i++) await r.press('j');
    await r.press(KEYS.enter);
    f = r.frame();
    expect(f).toMatch(/chain (nat|filter)\/KUBE-/);
    expect(f).toMatch(/10\.96\.0\.10/);
    await r.press(KEYS.escape);
    expect(r.frame()).toMatch(/find 10\.96\.0\.10: \d+ hits/);
    await r.press(KEYS.escape);
    expect(r.frame()).not.toContain('find 10.96.0.10');
    r.unmount();
  });

  it.each(FRAME_WIDTHS)('in Japanese at %i columns: the view and its columns are Japanese', async (width) => {
    const r = await app(width, 'lab-iptables', 'ja');
    await r.press(':', ...'find kube-dns', KEYS.enter);
    const f = r.frame();
    expect(f).toMatch(/kube-dns の検索: \d+ 件/);
    expect(f).toMatch(/ペイン\s+場所\s+内容/);
    for (const l of f.split('\n')) expect(l.length).toBeLessThanOrEqual(width);
    r.unmount();
  });
});

describe.each(FRAME_WIDTHS)('/ on the DNS and Modes panes at %i columns', (width) => {
  it('Modes: a regex keeps the Service rows it matches, ! the others', async () => {
    const r = await app(width);
    await r.press('7');
    expect(r.frame()).toContain('kube-system/kube-dns');
    await r.press('/', ...'^default/web', KEYS.enter);
    let f = r.frame();
    expect(f).toContain('default/web');
    expect(f).not.toContain('kube-system/kube-dns');
    await r.press(KEYS.escape, '/', ...'!^default/', KEYS.enter);
    f = r.frame();
    expect(f).toContain('kube-system/kube-dns');
    expect(f).not.toMatch(/^\s*default\/web /m);
    r.unmount();
  });

  it('DNS: the questions whose row matches (reply, answer, check words included)', () => {
    const Z = 'default.svc.cluster.local';
    const api = objectsOf(makeService({ name: 'web', clusterIP: '10.96.12.34', ports: [{ name: 'http', port: 80 }] }));
    const check = (e: DnsExchange) => compareExchange(expectedAnswer(api, e.qname, e.qtype), e);
    const data = {
      kind: 'result' as const,
      result: makeResult({
        checks: [
          check(makeExchange({ qname: `web.${Z}`, answers: [makeRecord('A', '10.96.12.34', `web.${Z}`)] })),
          check(makeExchange({ qname: `web.${Z}`, qtype: 'AAAA', outcome: 'nodata', answers: [] })),
          check(makeTimeout({ qname: `_http._tcp.web.${Z}`, qtype: 'SRV' })),
        ],
      }),
    };
    expect(dnsRowCount(filterDnsData(data, '10.96.12.34', 'en'))).toBe(1);
    expect(dnsRowCount(filterDnsData(data, '!SRV', 'en'))).toBe(2);
    expect(dnsRowCount(filterDnsData(data, '^_http', 'en'))).toBe(1);
    const r = renderAt(<DnsPane data={filterDnsData(data, 'AAAA', 'en')} pinned={false} width={width} height={20} focused cursor={0} lang="en" />, width);
    expect(r.frame()).toMatch(/AAAA/);
    expect(r.frame()).not.toMatch(/\bSRV\b/);
    r.unmount();
  });
});

describe('the cursor kept on a filter change', () => {
  it('stays on kube-dns while / narrows the Services to it and widens again', async () => {
    const r = await app(120);
    await r.press(':', ...'svc kube-dns', KEYS.enter);
    expect(r.frame()).toContain('endpoints of kube-system/kube-dns');
    await r.press('/', 'd', 'n');
    expect(r.frame()).toContain('endpoints of kube-system/kube-dns');
    await r.press(KEYS.backspace, KEYS.backspace, KEYS.escape);
    expect(r.frame()).toContain('endpoints of kube-system/kube-dns');
    r.unmount();
  });
});

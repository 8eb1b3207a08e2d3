/**
 * Dual-stack end to end (issue 21 item 4) on a dual-stack capture (test/helpers/dual-stack.ts:
 * the iptables lab bundle with web and kube-dns dual-stack, the IPv6 proxier's ip6tables
 * rules, IPv6 routes from the `ip6-route` probe, IPv6 conntrack flows; and the Cilium bundle
 * with lb4 + lb6 maps): the walk over ip6tables, diagnose over the IPv6 frontends, and the
 * Services, Rules, Conntrack and LB panes at 80 and 120 columns in English and Japanese; AAAA
 * answers in the DNS pane.
 */
import React from 'react';
import { beforeAll, describe, expect, it } from 'vitest';
import { kubeProxyInputOf } from '../../src/analysis/compare-modes-input.js';
import { expectedAnswer } from '../../src/analysis/dns-expected.js';
import { diagnoseSnapshot } from '../../src/analysis/diagnose/index.js';
import { staticSession } from '../../src/collect/session.js';
import { compareExchange } from '../../src/dns/compare.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { App } from '../../src/ui/App.js';
import { DnsPane } from '../../src/ui/panes/DnsPane.js';
import { initialUiState } from '../../src/ui/state.js';
import { dualStackCiliumCapture, dualStackIptablesCapture } from '../helpers/dual-stack.js';
import { snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp, renderAt } from '../helpers/render.js';
import { LAB_CILIUM_SCENARIO } from '../lab/cilium-scenario.js';
import { makeExchange, makeRecord, makeResult } from '../unit/builders/dns.js';
import { makeService, objectsOf } from '../unit/builders/k8s.js';

let ipt: NodeSnapshot;
let cilium: NodeSnapshot;
beforeAll(async () => {
  ipt = await snapshotOfDir(dualStackIptablesCapture());
  const base = await snapshotOf('lab-cilium');
  cilium = await snapshotOfDir(dualStackCiliumCapture(kubeProxyInputOf(base, base.api!.value!).input, LAB_CILIUM_SCENARIO));
});

describe('the walk and diagnose over IPv6', () => {
  it('a pod\'s SYN to the IPv6 ClusterIP walks ip6tables (KUBE-SERVICES → KUBE-SVC → KUBE-SEP DNAT) and is routed by the IPv6 routes', () => {
    expect(ipt.probes.find((p) => p.id === 'ip6-route')?.status).toBe('ok');
    const text = runTraceCommand(ipt, { from: 'fd00:10:244::9', to: '[fd00:10:96::1234]:80/tcp', entry: 'pod' });
    expect(text).toMatch(/prerouting nat\/KUBE-SERVICES #1 ✓ jump KUBE-SVC-\w+: daddr fd00:10:96::1234 is in fd00:10:96::1234/);
    expect(text).toMatch(/DNAT --to-destination \[fd00:10:244:(1)?:(:)?\w*\]:8080 rewrites the destination: \[fd00:10:96::1234\]:80 →/);
    expect(text).toMatch(/routing decision for fd00:10:244:/);
    expect(text).not.toContain('no route to');
    // The IPv4 walk of the same capture is unchanged by the IPv6 rules.
    expect(runTraceCommand(ipt, { from: '10.244.0.9', to: '10.96.12.34:80/tcp', entry: 'pod' })).toMatch(/DNAT --to-destination 10\.244\.\d+\.\d+:8080/);
  });

  it('diagnose compares the IPv6 frontends too: all ok on both dataplanes, none left unknown', () => {
    for (const s of [ipt, cilium]) {
      const d = diagnoseSnapshot(s);
      const web = d.services.find((x) => x.name === 'web')!;
      expect(web.verdict).toBe('ok');
      expect(d.services.flatMap((x) => x.findings).filter((f) => f.severity === 'unknown')).toEqual([]);
      expect(d.header.nodeFindings.filter((f) => f.code === 'frontend-unexpected')).toEqual([]);
    }
  });
});

const LANGS = ['en', 'ja'] as const;

describe.each(FRAME_WIDTHS)('panes on the dual-stack capture at %i columns', (width) => {
  it.each(LANGS)('Services (%s): the dual-stack Service shows both ClusterIPs, both families\' endpoints and its family policy', async (lang) => {
    const r = await renderApp(<App session={staticSession(ipt)} lang={lang} width={width} height={30} initialState={{ ...initialUiState, pane: 'services' }} />, width, 30);
    await r.press(KEYS.down, KEYS.down, KEYS.down);
    const f = r.frame();
    expect(f).toContain('ClusterIPs 10.96.0.10, fd00:10:96::a');
    // The policy line ends with the families; at 80 columns the line is cut before them.
    if (width >= 120) expect(f).toContain('IPv4,IPv6 PreferDualStack');
    expect(f).toContain('fd00:10:244::2 ');
    expect(f).toContain('10.244.0.2 ');
    expect(f.split('\n').every((l) => l.length <= width)).toBe(true);
    r.unmount();
  });

  it.each(LANGS)('Rules (%s): the ip6tables chains beside the iptables ones', async (lang) => {
    const r = await renderApp(<App session={staticSession(ipt)} lang={lang} width={width} height={70} initialState={{ ...initialUiState, pane: 'rules' }} />, width, 70);
    const f = r.frame();
    expect(f).toMatch(/nat +KUBE-SERVICES \(ip6tables\)/);
    if (width >= 120) expect(f).toMatch(/nat +KUBE-SVC-\w+ \(ip6tables\)/);
    expect(f).toMatch(/nat +KUBE-SERVICES +/);
    r.unmount();
  });

  it.each(LANGS)('Conntrack (%s): IPv6 flows with bracketed VIP and endpoint, matched to their Service', async (lang) => {
    const r = await renderApp(<App session={staticSession(ipt)} lang={lang} width={width} height={40} initialState={{ ...initialUiState, pane: 'conntrack' }} />, width, 40);
    const f = r.frame();
    const rows = f.split('\n').filter((l) => l.includes('[fd00'));
    expect(rows.length).toBe(2);
    // Sorted by Service: at 80 columns its column stands in the state's place.
    expect(rows.find((l) => l.includes(width >= 100 ? 'ESTABLISHED' : 'default/web'))).toBeDefined();
    if (width >= 120) {
      expect(rows.find((l) => l.includes('ESTABLISHED'))).toMatch(/default\/web .*\[fd00:10:96::1234\]:80 ⇒ \[fd00:10:244::23\]:8080/);
      expect(rows.find((l) => l.includes('udp'))).toMatch(/kube-system\/kube-dns .*\[fd00:10:96::a\]:53 ⇒ \[fd00:10:244::2\]:53/);
    }
    r.unmount();
  });

  it.each(LANGS)('LB maps (%s): lb6 frontends listed whole, beside the lb4 ones', async (lang) => {
    const r = await renderApp(<App session={staticSession(cilium)} lang={lang} width={width} height={40} initialState={{ ...initialUiState, pane: 'lb' }} />, width, 40);
    const f = r.frame();
    expect(f).toContain('[fd00:10:96::a]:53/UDP');
    expect(f).toContain('[fd00:10:96::1234]:80/TCP');
    expect(f).toContain('10.96.12.34:80/TCP');
    expect(f.split('\n').every((l) => l.length <= width)).toBe(true);
    r.unmount();
  });

  it.each(LANGS)('DNS (%s): the AAAA answer of a dual-stack Service is its IPv6 ClusterIP, checked against the API', (lang) => {
    const api = objectsOf(makeService({ name: 'web', clusterIP: '10.96.12.34', clusterIPs: ['10.96.12.34', 'fd00:10:96::1234'], ipFamilies: ['IPv4', 'IPv6'], ports: [{ name: 'http', port: 80 }] }));
    const q = 'web.default.svc.cluster.local';
    const check = (e: ReturnType<typeof makeExchange>) => compareExchange(expectedAnswer(api, e.qname, e.qtype), e);
    const result = makeResult({ checks: [check(makeExchange({ qname: q, answers: [makeRecord('A', '10.96.12.34', q)] })), check(makeExchange({ qname: q, qtype: 'AAAA', answers: [makeRecord('AAAA', 'fd00:10:96::1234', q)] }))] });
    expect(result.checks.map((c) => c.verdict)).toEqual(['ok', 'ok']);
    const wrong = check(makeExchange({ qname: q, qtype: 'AAAA', answers: [makeRecord('AAAA', 'fd00:10:96::9999', q)] }));
    expect(wrong.verdict).toBe('mismatch');
    const r = renderAt(<DnsPane data={{ kind: 'result', result }} pinned={false} width={width} height={24} focused cursor={1} lang={lang} />, width);
    expect(r.frame()).toContain('fd00:10:96::1234');
    expect(r.frame()).toContain('AAAA');
    r.unmount();
  });
});

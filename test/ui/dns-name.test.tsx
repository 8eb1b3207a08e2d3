/**
 * The DNS pane's `n`: any name, resolved as `nodescope dig +search NAME` resolves it.
 * Frames of the pane at 80 and 120 columns in English and Japanese (the search step by
 * step, what answered, the answer's records, terminal-safe), and the keys through the
 * whole App: `n` opens a prompt in the footer, Enter asks the session, Esc goes back.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession, type SessionDnsName, type SessionLike, type SessionState } from '../../src/collect/session.js';
import type { DnsSearchStepRun, PodResolvView } from '../../src/model/dns.js';
import type { Lang } from '../../src/text/i18n.js';
import { App } from '../../src/ui/App.js';
import { helpRows } from '../../src/ui/key-bindings.js';
import { DnsPane, dnsPaneData, type DnsNameData } from '../../src/ui/panes/DnsPane.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderAt, renderApp } from '../helpers/render.js';
import { makeExchange, makeNxdomain, makeRecord, makeSearch } from '../unit/builders/dns.js';

const step = (qname: string, exchanges: DnsSearchStepRun['exchanges'], outcome: DnsSearchStepRun['outcome']): DnsSearchStepRun => ({
  qname, origin: 'search', exchanges, outcome, elapsedMs: Math.max(...exchanges.map((e) => e.latencyMs)),
});

/** What the Pod's resolv.conf of {@link answered} was built from: namespace assumed, the node's search list unread. */
const podView: PodResolvView = { namespace: 'default', namespaceGiven: false, clusterDomain: 'cluster.local', clusterDomainSource: 'kubelet-config', nameserverService: 'kube-system/kube-dns', nodeSearch: null };

/** `kube-dns.kube-system` from namespace default: the first search domain misses, the second answers. */
function answered(): DnsNameData {
  const miss = 'kube-dns.kube-system.default.svc.cluster.local';
  const hit = 'kube-dns.kube-system.svc.cluster.local';
  const run = makeSearch('kube-dns.kube-system', [
    step(`${miss}.`, [makeNxdomain(miss), makeNxdomain(miss, { qtype: 'AAAA' })], 'nxdomain'),
    step(`${hit}.`, [makeExchange({ qname: hit, answers: [makeRecord('A', '10.96.0.10', hit)] }), makeExchange({ qname: hit, qtype: 'AAAA', outcome: 'nodata', answers: [] })], 'answer'),
  ], { podView });
  return { name: 'kube-dns.kube-system', run, error: null, zone: 'cluster.local' };
}

function pane(name: DnsNameData, width: number, lang: Lang = 'en') {
  const data = dnsPaneData({ hasApi: true, selectedService: 'default/web', result: null, loading: false, error: null, name });
  return renderAt(<DnsPane data={data} width={width} height={20} focused cursor={0} lang={lang} />, width);
}

describe.each(FRAME_WIDTHS)('the DNS pane resolving a typed name at %i columns', (width) => {
  it('shows each question in order, what answered, the count and the records (en)', () => {
    const r = pane(answered(), width);
    const frame = r.frame();
    expect(frame).toContain('kube-dns.kube-system · as a pod resolves it (dig +search)');
    // What the Pod's resolv.conf was built from, the parts the source did not show said so.
    expect(frame).toContain("as a ClusterFirst Pod in namespace default (assumed: -n sets it):\n  cluster domain cluster.local (from kubelet's config)\n  name server 10.96.0.10, kube-system/kube-dns's ClusterIP\n  node's search domains: unknown: the node's resolv.conf was not read\n");
    expect(frame).toContain('search "kube-dns.kube-system" (ClusterFirst resolv.conf, ndots:5, @10.96.');
    expect(frame).toMatch(/1 kube-dns\.kube-system\.default\.svc\.cluster\.local\s+A NXDOMAIN\s+AAAA NXDOMAIN/);
    expect(frame).toMatch(/2 kube-dns\.kube-system\.svc\.cluster\.local\s+A NOERROR\s+AAAA NOERROR/);
    expect(frame).toContain('answered by kube-dns.kube-system.svc.cluster.local: 4 queries');
    expect(frame).toContain('answered by kube-dns.kube-system.svc.cluster.local: 4 queries, 2.3 ms\n  A 10.96.0.10\n');
    // The Service's questions are not shown while a name is.
    expect(frame).not.toContain('default/web');
    expect(frame.split('\n').every((l) => l.length <= width)).toBe(true);
    r.unmount();
  });

  it('in Japanese', () => {
    const r = pane(answered(), width, 'ja');
    const frame = r.frame();
    expect(frame).toContain('kube-dns.kube-system · Pod のリゾルバと同じ解決（dig +search）');
    expect(frame).toContain('名前空間 default（仮定: -n で指定できます） の ClusterFirst の Pod として:\n  クラスタドメイン cluster.local（kubelet の設定 から）\n  ネームサーバ 10.96.0.10（kube-system/kube-dns の ClusterIP）\n  ノードの検索ドメイン: 不明: ノードの resolv.conf を読めませんでした\n');
    expect(frame).toContain('"kube-dns.kube-system" の検索');
    expect(frame).toContain('  A 10.96.0.10');
    r.unmount();
  });

  it('shows an escape sequence in the name or the answer as text, never as an escape', () => {
    const hostile = answered();
    const hit = 'kube-dns.kube-system.svc.cluster.local';
    const run = { ...hostile.run!, steps: [step(`${hit}.`, [makeExchange({ qname: hit, answers: [makeRecord('TXT', '"\u001b[31mred\u001b[0m"', hit)] })], 'answer')] };
    const r = pane({ ...hostile, name: 'evil\u001b]0;x\u0007', run }, width);
    const frame = r.frame();
    expect(frame).not.toContain('\u001b');
    expect(frame).not.toContain('\u0007');
    expect(frame).toContain('evil\\x1b]0;x\\x07');
    expect(frame).toContain('TXT "\\x1b[31mred\\x1b[0m"');
    r.unmount();
  });
});

describe('the DNS pane name states', () => {
  it('says while it resolves, and why it could not', () => {
    const loading = pane({ name: 'web', run: null, error: null, zone: null }, 80);
    expect(loading.frame()).toContain('resolving web…');
    loading.unmount();
    const failed = pane({ name: 'a..b', run: null, error: 'invalid DNS name "a..b"', zone: null }, 80, 'ja');
    expect(failed.frame()).toContain('a..b: invalid DNS name "a..b"');
    failed.unmount();
  });

  it('lists n in the help, for the DNS pane', () => {
    expect(helpRows().find(([label]) => label === 'n')?.[1]).toBe('key.askName');
  });
});

/** A static session that answers `resolveName` with a recorded run (and counts the questions). */
function answeringSession(state: SessionState): SessionLike & { asked: string[] } {
  let current = state;
  const listeners = new Set<() => void>();
  const asked: string[] = [];
  return {
    asked,
    getState: () => current,
    subscribe: (l) => (listeners.add(l), () => listeners.delete(l)),
    refreshNow: () => {},
    resolveDns: () => {},
    resolveName: (name) => {
      asked.push(name);
      const dnsName: SessionDnsName = { name, run: { ...answered().run!, name }, loading: false, error: null, domain: { name: 'cluster.local', source: 'default' } };
      current = { ...current, dnsName };
      for (const l of listeners) l();
    },
  };
}

describe.each(FRAME_WIDTHS)('the DNS pane keys in the App at %i columns', (width) => {
  it('n opens a name prompt in the footer, Enter resolves the name, Esc returns to the Service', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const session = answeringSession(staticSession(snapshot).getState());
    const r = await renderApp(<App session={session} lang="en" width={width} height={30} now={() => 0} />, width, 30);
    await r.press('5');
    expect(r.frame()).toContain('n:resolve a name');
    await r.press('n', 'k', 'u', 'b', 'e', '-', 'd', 'n', 's', '.', 'k', 'u', 'b', 'e', '-', 's', 'y', 's', 't', 'e', 'm');
    // Typed keys edit the name, they do not move or switch panes.
    expect(r.frame()).toContain('name to resolve: kube-dns.kube-system▏');
    await r.press(KEYS.backspace, 'm', KEYS.enter);
    expect(session.asked).toEqual(['kube-dns.kube-system']);
    const frame = r.frame();
    expect(frame).toContain('kube-dns.kube-system · as a pod resolves it (dig +search)');
    expect(frame).toContain('  A 10.96.0.10');
    expect(frame).toContain('Esc:back to the Service');
    await r.press(KEYS.escape);
    expect(r.frame()).not.toContain('as a pod resolves it');
    expect(r.frame()).toContain('n:resolve a name');
    r.unmount();
  });

  it.each(['en', 'ja'] as const)('Enter in the same chunk as the name (a paste, fast typing), or as LF, still asks it and closes the prompt; the failed Service check does not hold it (%s)', async (lang) => {
    const snapshot = await snapshotOf('lab-iptables');
    const failed = { service: 'default/empty', result: null, loading: false, error: 'no kube-dns Service (kube-system/kube-dns) in the API objects to ask' };
    const session = answeringSession(staticSession(snapshot, { dns: failed }).getState());
    const r = await renderApp(<App session={session} lang={lang} width={width} height={30} now={() => 0} />, width, 30);
    await r.press('5', 'n', 'kube-dns.kube-system\r');
    expect(session.asked).toEqual(['kube-dns.kube-system']);
    // The prompt is closed: the next keys are commands again, not letters of the name.
    expect(r.frame()).not.toContain(lang === 'en' ? 'name to resolve:' : '解決する名前:');
    expect(r.frame()).toContain('  A 10.96.0.10');
    await r.press('n', 'web', '\n');
    expect(session.asked).toEqual(['kube-dns.kube-system', 'web']);
    expect(r.frame()).not.toContain(lang === 'en' ? 'name to resolve:' : '解決する名前:');
    r.unmount();
  });

  it('Esc in the prompt closes it without asking', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const session = answeringSession(staticSession(snapshot).getState());
    const r = await renderApp(<App session={session} lang="ja" width={width} height={30} now={() => 0} />, width, 30);
    await r.press('5', 'n', 'w', 'e', 'b');
    expect(r.frame()).toContain('解決する名前: web▏');
    await r.press(KEYS.escape);
    expect(session.asked).toEqual([]);
    expect(r.frame()).toContain('n:名前を解決');
    r.unmount();
  });
});

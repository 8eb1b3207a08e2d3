/**
 * Frames of the IPVS pane at 80 and 120 columns, in English and Japanese: the virtual
 * servers of an IPVS-mode node (scheduler, flags, persistence, totals) with the selected
 * one's real servers (forwarding, weight, ActiveConn / InActConn, totals); a table that
 * was not read (the lab kernel has no IPVS) shown as unknown with its probes; and the
 * pane in the App on its registry key.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { buildIpvsView } from '../../src/analysis/ipvs-view.js';
import { staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { IpvsPane } from '../../src/ui/panes/IpvsPane.js';
import { ipvsSnapshot } from '../helpers/ipvs-fixtures.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, KEYS, renderApp, renderAt } from '../helpers/render.js';

const LANGS = ['en', 'ja'] as const;

describe.each(FRAME_WIDTHS.flatMap((w) => LANGS.map((l) => [w, l] as const)))('IPVS pane at %i columns (%s)', async (width, lang) => {
  const view = buildIpvsView(await ipvsSnapshot());
  const persistent = view.status === 'ready' ? view.virtualServers.findIndex((v) => v.service.includes('10.100.49.21:80')) : -1;

  it('lists virtual servers with scheduler, flags and persistence, and the selected one\'s real servers with weights and counters', () => {
    expect(persistent).toBe(2);
    const r = renderAt(<IpvsPane data={view} width={width} height={20} focused cursor={persistent} lang={lang} />, width);
    const frame = r.frame();
    expect(frame).toContain('IPVS 1.2.1 (size=4096)');
    expect(frame.replace(/\n/g, ' ')).toMatch(/ipvsadm -Ln \+ ipvsadm -Ln --stats --exact/);
    expect(frame).toMatch(/TCP +10\.100\.49\.21:80 +rr +- +(10800s|持続 10800秒|persistent 10800s) +3 +12\b/);
    expect(frame).toMatch(/TCP +10\.101\.177\.188:443 +sh +sh-fallback,sh-port/);
    expect(frame).toMatch(/192\.168\.185\.13:80 +Masq +1 +2 +1 +6/);
    expect(frame).toMatch(/192\.168\.185\.15:80 +Masq +0 +0 +0 +0/);
    expect(frame).not.toContain('?');
    expect(frame.split('\n').every((l) => l.length <= width)).toBe(true);
    expect(frame).toMatchSnapshot();
    r.unmount();
  });

  it('says a virtual server without real servers has no destination', () => {
    const empty = view.status === 'ready' ? view.virtualServers.findIndex((v) => v.realServers.length === 0) : -1;
    const r = renderAt(<IpvsPane data={view} width={width} height={20} focused cursor={empty} lang={lang} />, width);
    expect(r.frame()).toContain(lang === 'en' ? 'no real servers: IPVS has no destination' : '実サーバーなし');
    r.unmount();
  });

  it('shows an unread table as unknown with the probes that would read it, never as 0 virtual servers', async () => {
    const unknown = buildIpvsView(await snapshotOf('lab-iptables'));
    expect(unknown.status).toBe('unknown');
    const r = renderAt(<IpvsPane data={unknown} width={width} height={20} focused cursor={0} lang={lang} />, width);
    const frame = r.frame().replace(/\n/g, ' ');
    expect(frame).toContain(lang === 'en' ? 'IPVS table unknown (not read)' : 'IPVS テーブルは不明');
    expect(frame).toContain(`ipvsadm -Ln: ${lang === 'en' ? 'exit code' : '終了コード'} 2 (Can't initialize ipvs: Protocol not available)`);
    expect(frame).toContain('ipvsadm -Ln, ipvsadm -Ln --stats --exact');
    expect(frame).not.toMatch(/0 virtual servers|仮想サーバー 0 件/);
    expect(r.frame()).toMatchSnapshot();
    r.unmount();
  });
});

describe('IPVS view', () => {
  it('with only the counters listing, says the scheduler and weights are not read (?), not that there are none', async () => {
    const view = buildIpvsView(await ipvsSnapshot({ list: false }));
    if (view.status !== 'ready') throw new Error(view.status);
    expect(view.sources).toEqual(['ipvsadm -Ln --stats --exact']);
    expect(view.virtualServers[0]).toMatchObject({ service: 'TCP  10.96.0.1:443', scheduler: null, persistence: null });
    expect(view.virtualServers[0]!.realServers[0]).toMatchObject({ weight: null, forward: null, activeConn: null });
    expect(view.virtualServers[0]!.stats?.conns.value).toBe(41n);
    const r = renderAt(<IpvsPane data={view} width={80} height={20} focused cursor={0} lang="en" />, 80);
    expect(r.frame()).toContain('? = not in the listings read');
    r.unmount();
  });

  it('with only the -Ln listing, keeps schedulers and weights and leaves the totals unread', async () => {
    const view = buildIpvsView(await ipvsSnapshot({ stats: false }));
    if (view.status !== 'ready') throw new Error(view.status);
    expect(view.sources).toEqual(['ipvsadm -Ln']);
    expect(view.virtualServers[2]).toMatchObject({ scheduler: 'rr', persistence: { timeout: 10800 }, stats: null });
  });

  it('says no IPVS probe ran on a source without one', async () => {
    const base = await snapshotOf('lab-iptables');
    const view = buildIpvsView({ ...base, ipvs: null, probes: base.probes.filter((p) => !p.id.startsWith('ipvsadm')) });
    expect(view).toEqual({ status: 'unknown', probes: ['ipvsadm -Ln', 'ipvsadm -Ln --stats --exact'], reason: 'no IPVS probe ran on this source' });
  });

  it('filters by virtual or real server address', async () => {
    const view = buildIpvsView(await ipvsSnapshot(), '185.5:');
    expect(view.status === 'ready' && view.virtualServers.map((v) => v.service)).toEqual(['TCP  10.101.177.188:443']);
  });
});

describe('IPVS pane in the App', () => {
  it('is pane 8 in the tabs, the help and on its key; j moves to the next virtual server', async () => {
    const r = await renderApp(<App session={staticSession(await ipvsSnapshot())} lang="en" width={120} height={30} />, 120, 30);
    expect(r.frame()).toMatch(/ 7 Modes +8 IPVS$/m);
    await r.press('8');
    expect(r.frame()).toContain('IPVS 1.2.1 (size=4096) · 7 virtual servers');
    await r.press('j', 'j');
    expect(r.frame()).toContain('TCP 10.100.49.21:80 · rr · 3 real servers');
    await r.press('?');
    expect(r.frame()).toContain('1-8  Tab');
    await r.press(KEYS.escape, KEYS.tab);
    expect(r.frame()).toContain('NAMESPACE'); // Tab from the last pane wraps to Services
    r.unmount();
  });
});

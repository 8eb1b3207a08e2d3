/**
 * The header names Cilium from the light probes before the LB maps are read (issue 23 item 1):
 * `cilium? (LB maps pinned; reading them…)` once the rulesets are parsed and the pinned
 * listing names a Cilium LB map, replaced by the full evidence when the maps are parsed; the
 * old "reading rules" whenever the cheap probes cannot decide. And the session's load leaves
 * the LB table's join to the first view that reads it (the LB pane), with the same frames.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { act } from 'react';
import React from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWorld, writeModeBundle } from '../../bench/gen/capture.js';
import { EAGER_SERVICES } from '../../src/ui/diagnosis-view.js';
import { buildFirstSnapshot, buildSnapshot, completeSnapshot, ParseCache, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { lazyLbJoins } from '../../src/collect/lb-lazy.js';
import { pinnedCiliumLbMaps } from '../../src/collect/probe-plan.js';
import { Session, staticSession } from '../../src/collect/session.js';
import { earlyProxyMode } from '../../src/analysis/early-mode.js';
import { detectProxyMode } from '../../src/analysis/proxy-mode.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { cellWidth } from '../../src/text/cells.js';
import { t, tf, type Lang } from '../../src/text/i18n.js';
import { App } from '../../src/ui/App.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';
import { withPinnedListing } from '../helpers/pinned-listing.js';

const PINNED = ['cilium_ct4_global', 'cilium_lb4_backends_v3', 'cilium_lb4_reverse_nat', 'cilium_lb4_services_v2', 'cilium_lb6_backends_v3', 'cilium_lb6_reverse_nat', 'cilium_lb6_services_v2', 'cilium_policy_00123'];
const LB_MAPS = PINNED.filter((n) => n.startsWith('cilium_lb'));

async function inputOf(name: string): Promise<SnapshotInput> {
  const transport = new ReplayTransport(fixtureDir(name));
  const runs = await runProbes(transport, {});
  return { runs, apiText: transport.apiText()!, source: { kind: 'replay', label: name, live: false }, capturedAt: runs[0]!.result.startedAt };
}

/** The staged load's snapshots of a capture: the first, then each one `onProgress` publishes, then the whole. */
async function stagedSnapshots(input: SnapshotInput): Promise<NodeSnapshot[]> {
  // With a parse cache, as a live load: the conntrack table is parsed in-thread (no worker).
  const staged = { ...input, cache: new ParseCache() };
  const first = buildFirstSnapshot(staged);
  const got: NodeSnapshot[] = [first];
  got.push(await completeSnapshot(staged, first, { onProgress: (s) => got.push(s) }));
  return got;
}

/** The staged snapshot with the rulesets parsed and the LB maps not yet. */
async function rulesStage(name: string): Promise<NodeSnapshot> {
  const staged = await stagedSnapshots(await inputOf(name));
  const s = staged.find((x) => x.pending?.includes('lb') && !x.pending.includes('iptables'));
  expect(s).toBeDefined();
  return s!;
}

const line2 = (frame: string) => frame.split('\n')[1]!;
const earlyText = (lang: Lang) => `${t(lang, 'header.mode')}: ${tf(lang, 'header.modeEarly', { mode: 'cilium' })}`;

function pinnedRun(status: ProbeRun['status'], stdout: string, extra: Partial<ProbeRun['result']> = {}): ProbeRun {
  return { id: 'bpf-pinned', argv: ['ls', '/sys/fs/bpf/tc/globals'], status, result: { stdout, stderr: '', exitCode: status === 'ok' ? 0 : 2, durationMs: 1, startedAt: '2026-12-06T00:00:00.000Z', ...extra } } as ProbeRun;
}

describe('pinnedCiliumLbMaps', () => {
  it('names the pinned Cilium LB maps, [] when none, null when the listing was not read', () => {
    expect(pinnedCiliumLbMaps(pinnedRun('ok', `${PINNED.join('\n')}\n`))).toEqual(LB_MAPS);
    expect(pinnedCiliumLbMaps(pinnedRun('ok', 'cilium_ct4_global\ncilium_policy_00123\n'))).toEqual([]);
    expect(pinnedCiliumLbMaps(pinnedRun('ok', ''))).toEqual([]);
    expect(pinnedCiliumLbMaps(pinnedRun('failed', ''))).toBeNull();
    expect(pinnedCiliumLbMaps(pinnedRun('timeout', 'cilium_lb4_services_v2\n'))).toBeNull();
    expect(pinnedCiliumLbMaps(pinnedRun('missing', '', { missing: true }))).toBeNull();
    expect(pinnedCiliumLbMaps(pinnedRun('missing', '', { missing: true, notCaptured: true }))).toBeNull();
    expect(pinnedCiliumLbMaps(undefined)).toBeNull();
  });
});

describe('earlyProxyMode', () => {
  it('names cilium on the Cilium lab once its rulesets are parsed, and agrees with the full detection', async () => {
    const staged = await stagedSnapshots(await inputOf('lab-cilium'));
    const rules = staged.find((x) => x.pending?.includes('lb') && !x.pending.includes('iptables'))!;
    expect(earlyProxyMode(rules, LB_MAPS)).toEqual({ mode: 'cilium', pinned: LB_MAPS });
    expect(detectProxyMode(staged[staged.length - 1]!).mode).toBe('cilium');
    // Before the rulesets are parsed, and once the LB part is: no early reading.
    expect(earlyProxyMode(staged[0]!, LB_MAPS)).toBeNull();
    for (const s of staged.filter((x) => !x.pending?.includes('lb'))) expect(earlyProxyMode(s, LB_MAPS)).toBeNull();
  });

  it('cannot decide without the pinned listing, without a Cilium LB map in it, or with no snapshot', async () => {
    const rules = await rulesStage('lab-cilium');
    expect(earlyProxyMode(rules, null)).toBeNull();
    expect(earlyProxyMode(rules, undefined)).toBeNull();
    expect(earlyProxyMode(rules, [])).toBeNull();
    expect(earlyProxyMode(null, LB_MAPS)).toBeNull();
  });

  it('cannot decide with KUBE- chains (kube-proxy beside Cilium), a kube-proxy table, kube-ipvs0, unread interfaces or a failed ruleset', async () => {
    // kube-proxy's iptables mode beside pinned Cilium maps (Cilium without kube-proxy replacement).
    expect(earlyProxyMode(await rulesStage('lab-iptables'), LB_MAPS)).toBeNull();
    expect(earlyProxyMode(await rulesStage('lab-nftables'), LB_MAPS)).toBeNull();
    const rules = await rulesStage('lab-cilium');
    const addrs = rules.addrs!;
    const ipvs0 = { ...addrs, value: [...addrs.value!, { ...addrs.value![0]!, ifname: 'kube-ipvs0' }] };
    expect(earlyProxyMode({ ...rules, addrs: ipvs0 }, LB_MAPS)).toBeNull();
    expect(earlyProxyMode({ ...rules, addrs: null }, LB_MAPS)).toBeNull();
    expect(earlyProxyMode({ ...rules, nft: null, nftTableNames: ['ip kube-proxy'] }, LB_MAPS)).toBeNull();
    expect(earlyProxyMode({ ...rules, nft: null, nftTableNames: ['ip filter'] }, LB_MAPS)).toEqual({ mode: 'cilium', pinned: LB_MAPS });
    const failed = { value: null, diagnostics: [], probe: null, error: 'iptables-legacy-save: timeout' };
    expect(earlyProxyMode({ ...rules, iptablesLegacy: failed }, LB_MAPS)).toBeNull();
    expect(earlyProxyMode({ ...rules, pending: [...rules.pending!, 'iptables'] }, LB_MAPS)).toBeNull();
  });
});

describe.each(FRAME_WIDTHS)('the early mode in the header at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('says it is read from the pinned maps, then gives the full evidence (%s)', async (lang) => {
    const input = await inputOf('lab-cilium');
    const rules = await rulesStage('lab-cilium');
    const early = await renderApp(<App session={staticSession(rules, { pinnedLbMaps: LB_MAPS })} lang={lang} width={width} height={20} now={() => 0} />, width, 20);
    expect(line2(early.frame())).toBe(earlyText(lang));
    expect(cellWidth(line2(early.frame()))).toBeLessThanOrEqual(width);
    expect(early.frame()).toMatchSnapshot();
    early.unmount();
    const unread = await renderApp(<App session={staticSession(rules, { pinnedLbMaps: null })} lang={lang} width={width} height={20} now={() => 0} />, width, 20);
    expect(line2(unread.frame())).toBe(`${t(lang, 'header.mode')}: ${t(lang, 'header.modeReading')}`);
    unread.unmount();
    const whole = await renderApp(<App session={staticSession(buildSnapshot(input), { pinnedLbMaps: LB_MAPS })} lang={lang} width={width} height={20} now={() => 0} />, width, 20);
    expect(line2(whole.frame())).toMatch(new RegExp(`^${t(lang, 'header.mode')}: cilium — `));
    expect(line2(whole.frame())).not.toContain('?');
    whole.unmount();
  });
});

describe('a staged session on a Cilium capture with its pinned listing', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  /** A generated Cilium capture past the eager diagnosis' size (src/ui/diagnosis-view.ts `EAGER_SERVICES`), so no view reads the LB table at load. */
  function generatedCilium(): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-early-gen-'));
    dirs.push(dir);
    const world = generateWorld({ services: EAGER_SERVICES + 100, endpoints: 2, seed: 'early-mode', modes: ['cilium'], conntrack: 10 });
    writeModeBundle(world, 'cilium', dir);
    return withPinnedListing(dir, PINNED, dirs);
  }

  // `big`: past the eager diagnosis' size, and without rules dumps.
  const SOURCES = [
    ['lab-cilium', () => withPinnedListing(fixtureDir('lab-cilium'), PINNED, dirs), false],
    ['a generated capture', generatedCilium, true],
  ] as const;

  describe.each(SOURCES)('on %s', (_name, make, big) => {
    let dir: string;
    beforeAll(() => {
      dir = make();
    });

    it.each(['en', 'ja'] as const)('names the mode early only when the light probes decide it, then the full evidence; the LB pane as an eager build shows it (%s)', async (lang) => {
      const transport = new ReplayTransport(dir);
      const session = new Session({ transport, live: false, apiText: transport.apiText()! });
      const r = await renderApp(<App session={session} lang={lang} width={120} height={24} now={() => 0} />, 120, 24);
      // The header on screen when the first LB map dump is asked for (an order, not a time).
      let atFirstDump: string | null = null;
      const seeDump = (argv: readonly string[]) => {
        if (atFirstDump === null && argv.some((a) => a.includes('cilium_lb'))) atFirstDump = line2(r.frame());
      };
      const [exec, execInPieces] = [transport.exec.bind(transport), transport.execInPieces.bind(transport)];
      transport.exec = (argv, options) => (seeDump(argv), exec(argv, options));
      transport.execInPieces = (argv, options) => (seeDump(argv), execInPieces(argv, options));
      const lines: string[] = [];
      session.subscribe(() => lines.push(line2(r.frame())));
      const joins = lazyLbJoins.count;
      await act(async () => {
        await session.start();
      });
      lines.push(line2(r.frame()));
      expect(session.getState().pinnedLbMaps).toEqual(LB_MAPS);
      const fullAt = lines.findIndex((l) => new RegExp(`^${t(lang, 'header.mode')}: cilium — `).test(l));
      if (big) {
        // The generated capture holds no iptables or nftables dump ("not in this capture"): the rules
        // are not known, so the light probes cannot decide and the header says it reads them.
        expect(atFirstDump).toBe(`${t(lang, 'header.mode')}: ${t(lang, 'header.modeReading')}`);
        expect(lines).not.toContain(earlyText(lang));
      } else {
        expect(atFirstDump).toBe(earlyText(lang));
        expect(fullAt).toBeGreaterThan(lines.indexOf(earlyText(lang)));
      }
      expect(fullAt).toBeGreaterThanOrEqual(0);
      expect(lines.at(-1)).toMatch(new RegExp(`^${t(lang, 'header.mode')}: cilium — `));
      // Past the eager diagnosis' size, the header's counts and the Services pane need no join; the LB pane makes it, once.
      if (big) expect(lazyLbJoins.count).toBe(joins);
      await r.press('3');
      expect(lazyLbJoins.count).toBe(joins + 1);
      const shown = r.frame();
      const services = (await r.press('1'), r.frame());
      r.unmount();
      await session.stop();
      const eagerTransport = new ReplayTransport(dir);
      const runs = await runProbes(eagerTransport, {});
      const eager = buildSnapshot({ runs, apiText: eagerTransport.apiText()!, source: { kind: 'replay', label: 'x', live: false }, capturedAt: runs[0]!.result.startedAt });
      const ref = await renderApp(<App session={staticSession(eager)} lang={lang} width={120} height={24} now={() => 0} />, 120, 24);
      await ref.press('3');
      // Below the header (its first line names the source), the same panes.
      expect(shown.split('\n').slice(2)).toEqual(ref.frame().split('\n').slice(2));
      await ref.press('1');
      expect(services.split('\n').slice(2)).toEqual(ref.frame().split('\n').slice(2));
      ref.unmount();
    });
  });
});

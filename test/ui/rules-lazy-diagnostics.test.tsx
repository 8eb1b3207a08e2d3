/**
 * The Rules pane on an iptables ruleset parsed on first read (src/parsers/iptables-save.ts
 * `parseIptablesSaveLazyPieces`) opens without parsing every chain: it shows the diagnostics
 * known so far and says how many chains' rule diagnostics are not read yet; once every chain is
 * read it shows what the eagerly parsed snapshot shows. Work is counted (chains whose `rules` is
 * an own field, i.e. parsed), never timed.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildFirstSnapshot, buildSnapshot, completeSnapshot, piecedProbes } from '../../src/collect/build-snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import type { IptablesRuleset } from '../../src/model/iptables.js';
import { rulesetReadState } from '../../src/model/iptables-facts.js';
import { nftReadState } from '../../src/model/nft-facts.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseIptablesSaveLazyPieces } from '../../src/parsers/iptables-save.js';
import { catalog, fillArgv, probe } from '../../src/sources/catalog.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';
import type { Lang } from '../../src/text/i18n.js';
import { RulesPane } from '../../src/ui/panes/RulesPane.js';
import { initialUiState, type UiState } from '../../src/ui/state.js';
import { rulesView } from '../../src/ui/views.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

const onList: UiState = { ...initialUiState, pane: 'rules' };
const HEIGHT = 14;

/**
 * A generated kube-proxy dump with two faults: a rule for a chain never declared (found by
 * pass 1: `undeclared-chain`) and, inside KUBE-SERVICES, a jump to no chain (found only when
 * KUBE-SERVICES' rules are parsed: `unknown-target`).
 */
function generated(): { runs: ProbeRun[]; text: string; apiText: string } {
  const world = generateWorld({ services: 40, endpoints: 3, seed: 'rules-lazy-diag', modes: ['iptables'], conntrack: 10 });
  const outputs = modeOutputs(world, 'iptables');
  const lines = outputs.get('iptables-save')!.split('\n');
  // `iptables-save -c` lines: `[packets:bytes] -A CHAIN …`.
  const at = lines.findIndex((l) => /^\[\d+:\d+\] -A KUBE-SERVICES /.test(l));
  expect(at).toBeGreaterThan(0);
  lines.splice(at + 1, 0, '[0:0] -A KUBE-SERVICES -j NO-SUCH-CHAIN');
  const commit = lines.indexOf('COMMIT', at);
  lines.splice(commit, 0, '[0:0] -A UNDECLARED-X -j ACCEPT');
  const text = lines.join('\n');
  outputs.set('iptables-save', text);
  const runs: ProbeRun[] = [...outputs].map(([id, stdout]) => {
    const argv = fillArgv(probe(id).argv, catalog().params, {});
    return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-02-02T11:00:00.000Z', durationMs: 1 } };
  });
  return { runs, text, apiText: world.apiText };
}

/** The text in line-aligned pieces of about `size` characters. */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (from < text.length) {
    const nl = text.indexOf('\n', Math.min(text.length - 1, from + size));
    const to = nl < 0 ? text.length : nl + 1;
    out.push(text.slice(from, to));
    from = to;
  }
  return out;
}

/** `eager` with its iptables part parsed on first read, as a replay's staged load gives it (build-snapshot's parsePieces). */
async function lazySnapshot(eager: NodeSnapshot, text: string): Promise<NodeSnapshot> {
  const list = pieces(text, 2000);
  const result = await parseIptablesSaveLazyPieces(() => list, 'iptables-save', { family: 'ipv4' }, 500, async () => {});
  const part = eager.iptables!;
  return {
    ...eager,
    iptables: {
      value: result.value,
      get diagnostics() {
        return result.diagnostics;
      },
      probe: part.probe,
      error: part.error,
    },
  };
}

function chains(ruleset: IptablesRuleset) {
  return ruleset.tables.flatMap((t) => t.chains);
}

/** Chains whose rules are built (an own `rules` field). */
const parsedChains = (ruleset: IptablesRuleset): number => chains(ruleset).filter((c) => Object.hasOwn(c, 'rules')).length;

function frame(snapshot: NodeSnapshot, width: number, lang: Lang): string {
  const data = rulesView(snapshot, staticSession(snapshot).getState(), onList, '', lang);
  const r = renderAt(<RulesPane data={data} cursor={0} width={width} height={HEIGHT} focused lang={lang} />, width);
  const text = r.frame();
  r.unmount();
  return text;
}

describe('Rules pane on an iptables ruleset parsed on first read', () => {
  const { runs, text, apiText } = generated();
  const eager = buildSnapshot({ runs, apiText, source: { kind: 'replay', label: 'gen', live: false }, capturedAt: '2026-02-02T11:00:00.000Z' });
  const eagerCodes = eager.iptables!.diagnostics.map((d) => d.code);

  it('the generated dump has a pass-1 and a rule-level diagnostic (the eager parse lists both)', () => {
    expect(eagerCodes).toEqual(expect.arrayContaining(['undeclared-chain', 'unknown-target']));
    expect(eager.iptables!.value!.tables.length).toBeGreaterThan(0);
  });

  it.each(FRAME_WIDTHS)('opens at %i columns parsing only the chains in view, says how many are not read, en and ja; all read: as the eager pane', async (width) => {
    const lazy = await lazySnapshot(eager, text);
    const ruleset = lazy.iptables!.value!;
    const total = chains(ruleset).length;
    const before = parsedChains(ruleset);
    const state = rulesetReadState(ruleset);
    expect(state).toBeDefined();
    const deferred = total - before;
    expect(state!.unreadChains).toBe(deferred);
    expect(deferred).toBeGreaterThan(100);

    const data = rulesView(lazy, staticSession(lazy).getState(), onList, '', 'en');
    expect(data.unreadChains).toBe(deferred);
    expect(data.diagnostics.map((d) => d.code)).toContain('undeclared-chain');
    expect(data.diagnostics.map((d) => d.code)).not.toContain('unknown-target');

    // The note counts the chains not read when the pane's data was made (rows then parse as they are drawn).
    const en = frame(lazy, width, 'en');
    const jaUnread = rulesetReadState(ruleset)!.unreadChains;
    const ja = frame(lazy, width, 'ja');
    // Only the rows in view were parsed (their counts and totals), not every chain.
    const opened = parsedChains(ruleset) - before;
    expect(opened).toBeGreaterThan(0);
    expect(opened).toBeLessThanOrEqual(2 * HEIGHT);
    expect(rulesetReadState(ruleset)!.unreadChains).toBe(total - parsedChains(ruleset));
    expect(en).toContain(`rule diagnostics of ${deferred} chains not read yet`);
    expect(en).toContain('1 line(s) not understood so far');
    expect(ja).toContain(`${jaUnread}個のチェーンのルール診断は未読です`);
    expect(ja).toContain('これまでに解釈できない行が1行あります');
    expect(en).not.toContain('not understood\n');

    // Every chain read (as `show`, a filter or opening them does): the full list, no note.
    for (const c of chains(ruleset)) void c.rules;
    expect(rulesetReadState(ruleset)).toBeUndefined();
    const done = rulesView(lazy, staticSession(lazy).getState(), onList, '', 'en');
    expect(done.unreadChains).toBeUndefined();
    expect(done.diagnostics).toEqual(eager.iptables!.diagnostics);
    for (const lang of ['en', 'ja'] as const) {
      const after = frame(lazy, width, lang);
      expect(after).toBe(frame(eager, width, lang));
      expect(after).not.toContain(lang === 'en' ? 'not read yet' : '未読');
      expect(after).toContain(lang === 'en' ? '2 line(s) not understood' : '解釈できない行が2行あります');
    }
  });

  it('the eager ruleset has no read state and its pane data no note', () => {
    expect(rulesetReadState(eager.iptables!.value!)).toBeUndefined();
    const data = rulesView(eager, staticSession(eager).getState(), onList, '', 'en');
    expect('unreadChains' in data).toBe(false);
    expect(data.diagnostics).toEqual(eager.iptables!.diagnostics);
  });
});

describe('Rules pane on a lab replay loaded in stages (the app path)', () => {
  it('lab-iptables: the note counts the chains not read; all read, the note is gone and the data is the one-shot snapshot\'s', async () => {
    const transport = new ReplayTransport(fixtureDir('lab-iptables'));
    const runs = await runProbes(transport, { stdoutAsPieces: piecedProbes() });
    const base = { apiText: transport.apiText()!, source: { kind: 'replay' as const, label: 'lab-iptables', live: false }, capturedAt: runs[0]!.result.startedAt };
    const pieced = { ...base, runs };
    const done = await completeSnapshot(pieced, buildFirstSnapshot(pieced), { chunkChars: 300 });
    const once = buildSnapshot({ ...base, runs: await runProbes(transport, {}) });
    const ruleset = done.iptables!.value!;
    const unread = chains(ruleset).length - parsedChains(ruleset);
    expect(unread).toBeGreaterThan(0);
    // The capture's nft -j ruleset is read on first read too (src/model/nft-facts.ts): its chains count as well.
    const nft = done.nft!.value!;
    const nftUnread = nftReadState(nft)?.unreadChains ?? 0;
    const data = rulesView(done, staticSession(done).getState(), onList, '', 'en');
    expect(data.unreadChains).toBe(unread + nftUnread);
    for (const c of chains(ruleset)) void c.rules;
    for (const c of nft.tables.flatMap((t) => t.chains)) void c.rules;
    const after = rulesView(done, staticSession(done).getState(), onList, '', 'en');
    expect(after.unreadChains).toBeUndefined();
    expect(after.diagnostics).toEqual(rulesView(once, staticSession(once).getState(), onList, '', 'en').diagnostics);
    for (const width of FRAME_WIDTHS) expect(frame(done, width, 'ja')).toBe(frame(once, width, 'ja'));
  });
});

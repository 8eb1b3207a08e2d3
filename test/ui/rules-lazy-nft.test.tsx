/**
 * The Rules pane on an nftables ruleset whose chains' rules are built on first read (a
 * replay's `nft -j`, src/parsers/nft-json.ts `parseNftJsonLazyPieces`): it opens without
 * building every chain, says how many chains are not read yet and shows the diagnostics known
 * so far (src/model/nft-facts.ts `nftReadState`), as it does for iptables; once every chain
 * is read, its data and frames are the eager snapshot's.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildFirstSnapshot, buildSnapshot, completeSnapshot, piecedProbes } from '../../src/collect/build-snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import { nftReadState } from '../../src/model/nft-facts.js';
import type { NftRuleset } from '../../src/model/nftables.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseNftJsonLazyPieces } from '../../src/parsers/nft-json.js';
import { catalog, fillArgv, probe } from '../../src/sources/catalog.js';
import { runProbes, type ProbeRun } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { Lang } from '../../src/text/i18n.js';
import { RulesPane } from '../../src/ui/panes/RulesPane.js';
import { initialUiState, type UiState } from '../../src/ui/state.js';
import { rulesView } from '../../src/ui/views.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

const onList: UiState = { ...initialUiState, pane: 'rules' };
const HEIGHT = 14;
const ODD = '{"match": {"op": "~", "left": {"meta": {"key": "mark"}}, "right": 1}}';

/**
 * A generated kube-proxy nftables capture with two faults: an item that is not an object of
 * one kind (said by pass 1: `bad-object`) and, in the last rule, a statement not modelled
 * (said only when that rule's chain is read: `unknown-statement`).
 */
function generated(): { runs: ProbeRun[]; text: string; apiText: string } {
  const world = generateWorld({ services: 40, endpoints: 3, seed: 'rules-lazy-nft', modes: ['nftables'], conntrack: 10 });
  const outputs = modeOutputs(world, 'nftables');
  let text = outputs.get('nft-json')!;
  const last = text.lastIndexOf('{"rule": ');
  const expr = text.indexOf('"expr": [', last) + '"expr": ['.length;
  text = `${text.slice(0, expr)}${ODD}, ${text.slice(expr)}`;
  const meta = text.indexOf('}}, ') + 4;
  text = `${text.slice(0, meta)}{"chain": 5}, ${text.slice(meta)}`;
  outputs.set('nft-json', text);
  const runs: ProbeRun[] = [...outputs].map(([id, stdout]) => {
    const argv = fillArgv(probe(id).argv, catalog().params, {});
    return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-02-02T11:00:00.000Z', durationMs: 1 } };
  });
  return { runs, text, apiText: world.apiText };
}

/** `eager` with its nftables part read lazily, as a replay's staged load gives it (build-snapshot's parsePieces). */
async function lazySnapshot(eager: NodeSnapshot, text: string): Promise<NodeSnapshot> {
  const list = Array.from({ length: Math.ceil(text.length / 2000) }, (_, i) => text.slice(i * 2000, (i + 1) * 2000));
  const result = await parseNftJsonLazyPieces(() => list, 'nft-json', 500, async () => {});
  const part = eager.nft!;
  return {
    ...eager,
    nft: {
      value: result.value,
      get diagnostics() {
        return result.diagnostics;
      },
      probe: part.probe,
      error: part.error,
    },
  };
}

const chains = (ruleset: NftRuleset) => ruleset.tables.flatMap((t) => t.chains);
/** Chains whose rules are built (a data field, not the getter). */
const builtChains = (ruleset: NftRuleset): number => chains(ruleset).filter((c) => Object.getOwnPropertyDescriptor(c, 'rules')?.get === undefined).length;

function frame(snapshot: NodeSnapshot, width: number, lang: Lang): string {
  const data = rulesView(snapshot, staticSession(snapshot).getState(), onList, '', lang);
  const r = renderAt(<RulesPane data={data} cursor={0} width={width} height={HEIGHT} focused lang={lang} />, width);
  const text = r.frame();
  r.unmount();
  return text;
}

describe('Rules pane on an nftables ruleset read on first read', () => {
  const { runs, text, apiText } = generated();
  const eager = buildSnapshot({ runs, apiText, source: { kind: 'replay', label: 'gen', live: false }, capturedAt: '2026-02-02T11:00:00.000Z' });

  it('the generated capture has a pass-1 and a rule-level diagnostic (the eager read lists both)', () => {
    expect(eager.nft!.diagnostics.map((d) => d.code)).toEqual(['bad-object', 'unknown-statement']);
  });

  it.each(FRAME_WIDTHS)('opens at %i columns without reading every chain, says how many are not read, en and ja; all read: as the eager pane', async (width) => {
    const lazy = await lazySnapshot(eager, text);
    const ruleset = lazy.nft!.value!;
    const total = chains(ruleset).length;
    const unread = nftReadState(ruleset)!.unreadChains;
    expect(unread).toBe(total - builtChains(ruleset));
    expect(unread).toBeGreaterThan(100);

    const data = rulesView(lazy, staticSession(lazy).getState(), onList, '', 'en');
    expect(data.unreadChains).toBe(unread);
    expect(data.diagnostics.map((d) => d.code)).toEqual(['bad-object']);
    const en = frame(lazy, width, 'en');
    const jaUnread = nftReadState(ruleset)!.unreadChains;
    const ja = frame(lazy, width, 'ja');
    expect(total - builtChains(ruleset)).toBeGreaterThan(total - 2 * HEIGHT);
    expect(en).toContain(`rule diagnostics of ${unread} chains not read yet`);
    expect(en).toContain('1 line(s) not understood so far');
    expect(ja).toContain(`${jaUnread}個のチェーンのルール診断は未読です`);

    for (const c of chains(ruleset)) void c.rules;
    expect(nftReadState(ruleset)).toBeUndefined();
    const done = rulesView(lazy, staticSession(lazy).getState(), onList, '', 'en');
    expect(done.unreadChains).toBeUndefined();
    expect(done.diagnostics).toEqual(eager.nft!.diagnostics);
    for (const lang of ['en', 'ja'] as const) expect(frame(lazy, width, lang)).toBe(frame(eager, width, lang));
  });

  it('the eager ruleset has no read state and its pane data no note', () => {
    expect(nftReadState(eager.nft!.value!)).toBeUndefined();
    expect('unreadChains' in rulesView(eager, staticSession(eager).getState(), onList, '', 'en')).toBe(false);
  });
});

describe('Rules pane on the lab-nftables replay loaded in stages (the app path)', () => {
  it('the note counts the chains not read; all read, the note is gone and the data and frames are the one-shot snapshot\'s', async () => {
    const transport = new ReplayTransport(fixtureDir('lab-nftables'));
    const pieced = await runProbes(transport, { stdoutAsPieces: piecedProbes() });
    const base = { apiText: transport.apiText()!, source: { kind: 'replay' as const, label: 'lab-nftables', live: false }, capturedAt: pieced[0]!.result.startedAt };
    const input = { ...base, runs: pieced };
    const done = await completeSnapshot(input, buildFirstSnapshot(input), { chunkChars: 300 });
    const once = buildSnapshot({ ...base, runs: await runProbes(transport, {}) });
    const ruleset = done.nft!.value!;
    const unread = nftReadState(ruleset)?.unreadChains ?? 0;
    expect(unread).toBeGreaterThan(0);
    expect(rulesView(done, staticSession(done).getState(), onList, '', 'en').unreadChains).toBe(unread);
    for (const c of chains(ruleset)) void c.rules;
    const after = rulesView(done, staticSession(done).getState(), onList, '', 'en');
    expect(after.unreadChains).toBeUndefined();
    expect(after.diagnostics).toEqual(rulesView(once, staticSession(once).getState(), onList, '', 'en').diagnostics);
    expect(done.nft!.value).toEqual(once.nft!.value);
    for (const width of FRAME_WIDTHS) expect(frame(done, width, 'ja')).toBe(frame(once, width, 'ja'));
  });
});

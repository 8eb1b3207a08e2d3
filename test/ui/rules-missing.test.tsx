/**
 * The Rules pane on a chain the snapshot does not hold says where it is missing from:
 * the node (a live source, read again each refresh) or the capture (a replay).
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import type { Lang } from '../../src/text/i18n.js';
import { RulesPane } from '../../src/ui/panes/RulesPane.js';
import { initialUiState, type RulesLocation, type UiState } from '../../src/ui/state.js';
import { rulesView } from '../../src/ui/views.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

/** The snapshot as a live source would have read it (same data, `live: true`). */
const asLive = (s: NodeSnapshot): NodeSnapshot => ({ ...s, meta: { ...s.meta, source: { kind: 'netns', label: 'netns:ns-node', live: true } } });

/** UI state with the Rules pane opened on `location`. */
const openedOn = (location: RulesLocation): UiState => ({ ...initialUiState, pane: 'rules', rulesStack: [{ kind: 'chains' }, location] });

function frame(snapshot: NodeSnapshot, location: RulesLocation, width: number, lang: Lang = 'en'): string {
  const data = rulesView(snapshot, staticSession(snapshot).getState(), openedOn(location), '', lang);
  const r = renderAt(<RulesPane data={data} cursor={0} width={width} height={10} focused lang={lang} />, width);
  const text = r.frame();
  r.unmount();
  return text;
}

const gone: RulesLocation = { kind: 'chain', ruleset: 'iptables', table: 'nat', chain: 'KUBE-SVC-GONE' };

describe.each(FRAME_WIDTHS)('Rules pane on a chain that is not there, at %i columns', (width) => {
  it('says "not in this capture" on a replay and "not on this node" on a live source', async () => {
    const replay = await snapshotOf('lab-iptables');
    expect(replay.meta.source.live).toBe(false);
    expect(frame(replay, gone, width)).toContain('nat KUBE-SVC-GONE: not in this capture (iptables)');
    const live = frame(asLive(replay), gone, width);
    expect(live).toContain('nat KUBE-SVC-GONE: not on this node now (iptables)');
    expect(live).not.toContain('capture');
  });

  it('words it by source in Japanese too', async () => {
    const replay = await snapshotOf('lab-iptables');
    expect(frame(replay, gone, width, 'ja')).toContain('nat KUBE-SVC-GONE: このキャプチャにはありません（iptables）');
    expect(frame(asLive(replay), gone, width, 'ja')).toContain('nat KUBE-SVC-GONE: 現在このノードにはありません（iptables）');
  });

  it('does the same for an nft set', async () => {
    const nft = await snapshotOf('lab-nftables');
    const set: RulesLocation = { kind: 'set', ruleset: 'nft', table: 'ip kube-proxy', set: 'no-such-set' };
    expect(frame(nft, set, width)).toContain('@no-such-set: not in this capture (nft)');
    expect(frame(asLive(nft), set, width)).toContain('@no-such-set: not on this node now (nft)');
  });
});

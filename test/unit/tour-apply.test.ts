import { describe, expect, it } from 'vitest';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import { applyTourStep, uiAfterStep } from '../../src/ui/tour-apply.js';
import type { TourPane, TourStep, TourTarget } from '../../src/tour/model.js';
import { resolveStep } from '../../src/tour/resolve.js';
import { cursorOf, currentRules, filterOf, initialUiState, uiReducer, type UiAction, type UiState } from '../../src/ui/state.js';
import { rulesView, servicesView } from '../../src/ui/views.js';
import { snapshotOf } from '../helpers/fixtures.js';

/** A step on `capture` showing `target` on `pane`. */
function step(pane: TourPane, target: TourTarget, capture = 'lab-iptables'): TourStep {
  return { capture, pane, target, narration: { en: 'n', ja: 'ナ' }, optional: false, line: 1 };
}

const webChain = (hop: 'services' | 'service' | 'endpoint', endpoint: string | null = null): TourTarget => ({ kind: 'serviceChain', service: 'default/web', hop, endpoint, port: null });

const snapshots = new Map<string, Promise<NodeSnapshot>>();
const snap = (name: string) => {
  if (!snapshots.has(name)) snapshots.set(name, snapshotOf(name));
  return snapshots.get(name)!;
};

/** The row the Rules pane highlights in `ui` (its target and label). */
function highlightedRule(snapshot: NodeSnapshot, ui: UiState) {
  const data = rulesView(snapshot, staticSession(snapshot).getState(), ui, filterOf(ui), 'en');
  if (data.kind === 'message') throw new Error(data.text);
  return data.kind === 'chains' ? { name: data.rows.at(cursorOf(ui))!.name, target: '' } : { name: data.chain, target: data.rows.at(cursorOf(ui))!.target, label: data.rows.at(cursorOf(ui))!.label, matches: data.rows.at(cursorOf(ui))!.matches };
}

const press = (ui: UiState, ...actions: UiAction[]) => actions.reduce(uiReducer, ui);

describe('a Services step', () => {
  it('selects the Service and puts the Services cursor on its row', async () => {
    const s = await snap('lab-iptables');
    const ui = uiAfterStep(initialUiState, step('services', { kind: 'service', service: 'default/web' }), s, 'en');
    expect(ui.pane).toBe('services');
    expect(ui.selectedService).toBe('default/web');
    const rows = servicesView(s, '').rows!;
    expect(`${rows[cursorOf(ui)]!.namespace}/${rows[cursorOf(ui)]!.name}`).toBe('default/web');
  });
});

describe.each([
  ['lab-iptables', ['KUBE-SERVICES', /^KUBE-SVC-/, /^KUBE-SEP-/], /^DNAT --to-destination 10\.244\.0\.23:8080$/],
  ['lab-nftables', ['@service-ips', /^service-.*default\/web\/tcp\/http$/, /^endpoint-.*__10\.244\.0\.23\/8080$/], /^dnat to 10\.244\.0\.23:8080$/],
] as const)('an endpoint-chain step on %s', (capture, path, dnat) => {
  it('opens the chains a reader follows, with the cursor on the DNAT to the endpoint', async () => {
    const s = await snap(capture);
    const ui = uiAfterStep(initialUiState, step('rules', webChain('endpoint', '10.244.0.23'), capture), s, 'en');
    expect(ui.pane).toBe('rules');
    const names = ui.rulesStack.slice(1).map((l) => (l.kind === 'chain' ? l.chain : l.kind === 'set' ? `@${l.set}` : ''));
    expect(names).toHaveLength(3);
    names.forEach((n, i) => expect(n).toMatch(path[i]!));
    expect(highlightedRule(s, ui).target).toMatch(dnat);
  });

  it('Esc walks back along the same path', async () => {
    const s = await snap(capture);
    let ui = uiAfterStep(initialUiState, step('rules', webChain('endpoint', '10.244.0.23'), capture), s, 'en');
    ui = press(ui, { type: 'back' });
    expect(highlightedRule(s, ui).name).toMatch(path[1]!);
    // the cursor still stands on the branch that leads to the endpoint
    expect(JSON.stringify(highlightedRule(s, ui))).toContain('10.244.0.23');
  });

  it('lands in the same state from anywhere the user wandered (the . key)', async () => {
    const s = await snap(capture);
    const target = step('rules', webChain('endpoint', '10.244.0.23'), capture);
    const fresh = uiAfterStep(initialUiState, target, s, 'en');
    const wandered = press(
      fresh,
      { type: 'back' },
      { type: 'openRules', location: { kind: 'chains' } },
      { type: 'filterStart' },
      { type: 'filterInput', text: 'KUBE' },
      { type: 'filterEnd', keep: true },
      { type: 'toggleHelp' },
      { type: 'switchPane', pane: 'conntrack' },
      { type: 'filterInput', text: 'udp' },
    );
    const back = uiAfterStep(wandered, target, s, 'en');
    expect(back.pane).toBe(fresh.pane);
    expect(back.rulesStack).toEqual(fresh.rulesStack);
    expect(cursorOf(back)).toBe(cursorOf(fresh));
    expect(filterOf(back)).toBe('');
    expect(back.help).toBe(false);
  });
});

describe('other targets', () => {
  it('a services-hop step stands on the KUBE-SERVICES rule of the Service', async () => {
    const s = await snap('lab-iptables');
    const ui = uiAfterStep(initialUiState, step('rules', webChain('services')), s, 'en');
    expect(currentRules(ui)).toMatchObject({ kind: 'chain', chain: 'KUBE-SERVICES', from: 'services' });
    expect(highlightedRule(s, ui).label).toBe('default/web:http cluster IP');
  });

  it('a named chain with a match stands on the first rule containing it', async () => {
    const s = await snap('lab-iptables');
    const ui = uiAfterStep(initialUiState, step('rules', { kind: 'chain', chain: 'KUBE-SERVICES', table: 'filter', ruleset: 'iptables', match: 'default/empty' }), s, 'en');
    expect(highlightedRule(s, ui).target).toMatch(/^REJECT/);
  });

  it('a conntrack flow step filters the Conntrack pane by its words and selects the Service', async () => {
    const s = await snap('lab-iptables');
    const st = step('conntrack', { kind: 'flow', words: '10.244.0.9:32982', service: 'default/web' });
    const ui = uiAfterStep(initialUiState, st, s, 'en');
    expect(ui.pane).toBe('conntrack');
    expect(filterOf(ui)).toBe('10.244.0.9:32982');
    expect(ui.selectedService).toBe('default/web');
    expect(resolveStep(s, st, 'en').focus[0]!.text).toContain('10.244.0.9:32982 → 10.96.12.34:80 ⇒ 10.244.0.23:8080');
  });

  it('a second-packet walk focuses the NAT station that reuses the stored DNAT', async () => {
    const s = await snap('lab-iptables');
    const st = step('step', { kind: 'packet', from: '10.244.0.9:32982', to: '10.96.12.34:80/tcp', flags: 'ack', entry: null, focus: 'nat' });
    const { actions, resolution } = applyTourStep(initialUiState, st, s, 'en');
    const ui = actions.reduce(uiReducer, initialUiState);
    expect(ui.pane).toBe('step');
    expect(ui.step).toEqual({ from: '10.244.0.9:32982', to: '10.96.12.34:80/tcp', branch: 0, flags: 'ack' });
    expect(cursorOf(ui)).toBe(resolution.cursor!.index);
    expect(resolution.focus.map((f) => f.text).join('\n')).toMatch(/nat chains skipped .*10\.96\.12\.34:80 → 10\.244\.0\.23:8080/);
  });

  it('a compare step opens the Modes pane with the Service selected, the counts in the focus', async () => {
    const s = await snap('lab-iptables');
    const st = step('compare', { kind: 'compare', service: 'default/web' });
    const { actions, resolution } = applyTourStep(initialUiState, st, s, 'ja');
    const ui = actions.reduce(uiReducer, initialUiState);
    expect(ui.pane).toBe('compare');
    expect(ui.selectedService).toBe('default/web');
    expect(resolution.focus.some((f) => f.text.includes('生成結果と一致'))).toBe(true);
  });
});

describe('objects a capture does not have', () => {
  it.each([
    ['a kube-proxy chain on the Cilium capture', 'lab-cilium', step('rules', webChain('service'), 'lab-cilium')],
    ['an LB entry on the iptables capture', 'lab-iptables', step('lb', { kind: 'lbEntry', frontend: '10.96.12.34:80/TCP' })],
    ['a Service that does not exist', 'lab-iptables', step('services', { kind: 'service', service: 'default/nope' })],
    ['a rule match that no rule has', 'lab-iptables', step('rules', { kind: 'chain', chain: 'KUBE-SERVICES', table: 'nat', ruleset: null, match: 'no such text' })],
    ['an endpoint the Service does not have', 'lab-iptables', step('rules', webChain('endpoint', '10.1.2.3'))],
    ['a flow that is not in the table', 'lab-iptables', step('conntrack', { kind: 'flow', words: '10.9.9.9:1', service: null })],
  ])('%s is a problem naming the capture, not an exception', async (_what, capture, st) => {
    const s = await snap(capture);
    const { actions, resolution } = applyTourStep(initialUiState, st, s, 'en');
    expect(resolution.problem).toContain(capture);
    expect(() => actions.reduce(uiReducer, initialUiState)).not.toThrow();
  });
});

describe('a step on another capture than the last step\'s', () => {
  it('leaves the Rules stack, the list cursors and filters of the last capture', async () => {
    const nft = await snap('lab-nftables');
    const ipt = await snap('lab-iptables');
    const onNft = press(uiAfterStep(initialUiState, step('rules', webChain('endpoint', '10.244.0.23'), 'lab-nftables'), nft, 'en'), { type: 'switchPane', pane: 'lb' }, { type: 'jumpTo', index: 3, count: 9 });
    expect(onNft.rulesStack.length).toBeGreaterThan(1);
    const compareStep = step('compare', { kind: 'compare', service: 'default/web' }, 'lab-iptables');
    const kept = uiAfterStep(onNft, compareStep, ipt, 'en', 'lab-nftables');
    expect(kept.rulesStack).toEqual([{ kind: 'chains' }]);
    expect(press(kept, { type: 'switchPane', pane: 'lb' }).cursors['lb'] ?? 0).toBe(0);
    // The same capture keeps what the user opened: only a change of capture leaves it.
    const same = uiAfterStep(onNft, { ...compareStep, capture: 'lab-nftables' }, nft, 'en', 'lab-nftables');
    expect(same.rulesStack.length).toBe(onNft.rulesStack.length);
  });
});

/**
 * Frames of the Step pane at 80 and 120 columns: a NodePort packet walked through the lab
 * node (iptables and nftables rules as kube-proxy writes them), with the cursor on the
 * random choice (branches and probabilities), on a rule that did not match, and on the
 * final step (conntrack entry and reply); plus the empty and failed states, and Japanese.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { walkPacket } from '../../src/trace/engine.js';
import type { TraceResult } from '../../src/trace/types.js';
import type { Lang } from '../../src/text/i18n.js';
import { StepPane, type StepPaneData } from '../../src/ui/panes/StepPane.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';
import { labInput, labPod, packet } from '../unit/trace-builders.js';

const web = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const nodeIP = LAB_SCENARIO.nodeIPs[0]!;
const endpoint = `${labPod('web-3').ip}:${web.ports[0]!.targetPort}`;

function nodePortWalk(mode: 'iptables' | 'nftables'): TraceResult {
  return walkPacket(labInput(mode), packet({ from: `${LAB_SCENARIO.outsideIP}:40000`, to: `${nodeIP}:${web.ports[0]!.nodePort}/tcp` }), { branch: { kind: 'endpoint', endpoint } });
}

function frame(data: StepPaneData, width: number, cursor: number, lang: Lang = 'en', height = 24): string {
  const r = renderAt(<StepPane data={data} width={width} height={height} focused cursor={cursor} lang={lang} />, width);
  const text = r.frame();
  r.unmount();
  return text;
}

describe.each(FRAME_WIDTHS)('Step pane at %i columns', (width) => {
  const result = nodePortWalk('iptables');
  const data: StepPaneData = { kind: 'result', result };
  const branchStep = result.steps.findIndex((s) => s.branches && s.matched);
  const missStep = result.steps.findIndex((s) => s.kind === 'rule' && s.matched === false);
  const last = result.steps.length - 1;

  it('shows the packet, the verdict, the steps around the cursor and the random choice with its probabilities', () => {
    const f = frame(data, width, branchStep);
    const lines = f.split('\n');
    expect(lines[0]).toContain(`${LAB_SCENARIO.outsideIP}:40000 → ${nodeIP}:${web.ports[0]!.nodePort}`);
    expect(lines[1]).toContain(`forwarded → ${endpoint}`);
    expect(f).toMatch(/branches\s+1\s+33\.3%/);
    expect(f).toMatch(new RegExp(`→ 3\\s+33\\.3%\\s+KUBE-SEP-[A-Z2-7]{16}\\s+${endpoint.replace(/\./g, '\\.')}`));
    expect(f).toContain(`step ${branchStep + 1} of ${result.steps.length}`);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
    expect(lines).toHaveLength(24);
    expect(f).toMatchSnapshot();
  });

  it('explains a rule that did not match and shows the header at that point', () => {
    const f = frame(data, width, missStep);
    const s = result.steps[missStep]!;
    expect(f).toContain('✗');
    expect(f).toContain(s.reason.slice(0, 30));
    expect(f).toMatch(new RegExp(`packet\\s+tcp ${LAB_SCENARIO.outsideIP.replace(/\./g, '\\.')}:40000`));
    expect(f).toMatchSnapshot();
  });

  it('ends with the packet as it leaves, the conntrack entry and the reply', () => {
    const f = frame(data, width, last);
    expect(f).toMatch(/leaves as\s+tcp 192\.168\.49\.2:<random> →/);
    expect(f).toMatch(/conntrack\s+tcp\s+6 120 SYN_SENT/);
    expect(f).toMatch(/reply\s+10\.244\.1\.15:8080 → 192\.168\.49\.2:<random> ⇒/);
    expect(f).toMatchSnapshot();
  });
});

describe('Step pane states', () => {
  it('says how to start when nothing was walked, and why a walk failed', () => {
    expect(frame({ kind: 'none' }, 80, 0)).toContain('press t');
    expect(frame({ kind: 'failed', reason: '--to: tcp needs a destination port' }, 80, 0)).toContain('cannot walk this packet: --to: tcp needs a destination port');
  });

  it('renders nft walks with family and table, and in Japanese', () => {
    const result = nodePortWalk('nftables');
    const at = result.steps.findIndex((s) => s.branches && s.matched);
    const f = frame({ kind: 'result', result }, 120, at, 'ja');
    expect(f).toContain('ip kube-proxy/service-');
    expect(f).toContain('分岐');
    expect(f).toContain('転送');
    expect(f).toMatchSnapshot();
  });

  it('keeps the cursor inside the walk', () => {
    const result = nodePortWalk('iptables');
    const f = frame({ kind: 'result', result }, 80, 10_000);
    expect(f).toContain(`step ${result.steps.length} of ${result.steps.length}`);
  });
});

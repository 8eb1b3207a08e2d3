/** The header names the dumps the probe plan skipped, when the rules were last read whole and a refresh stretched by its node CPU; `?` lists each probe's cost and why one was skipped (issue 23). */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { Header, type HeaderProps } from '../../src/ui/components/Header.js';
import { Help, helpProbeRows } from '../../src/ui/components/Help.js';
import { cellWidth } from '../../src/text/cells.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

function props(width: number, lang: 'en' | 'ja', patch: Partial<HeaderProps> = {}): HeaderProps {
  return { node: 'vm', live: true, sourceLabel: 'netns:nsx', capturedAt: null, mode: 'iptables', evidence: 'iptables (nf_tables): 12 KUBE- chains', ageSeconds: 1, error: null, refreshing: false, pane: 'rules', width, lang, ...patch };
}

const probes = [
  { id: 'iptables-save', status: 'ok', durationMs: 3210.4, cpuMs: 2980 },
  { id: 'ip-addr', status: 'ok', durationMs: 4 },
];
const skipped = [{ id: 'nft-json', reason: 'nftables holds only iptables-nft tables, which iptables-save reads (--probe nft-json)' }];

describe.each(FRAME_WIDTHS)('probe plan in the frames at %i columns', (width) => {
  it.each(['en', 'ja'] as const)('names the skipped dumps and the last whole read in the mode line (%s)', (lang) => {
    const fullReadAt = Date.UTC(2026, 11, 5, 10, 30, 7);
    const frame = renderAt(<Header {...props(width, lang, { skipped: ['nft-json', 'nft-text'], fullReadAt })} />, width).frame();
    const line = frame.split('\n')[1]!;
    expect(cellWidth(line)).toBeLessThanOrEqual(width);
    expect(line).toContain('nft-json, nft-text');
    expect(frame).toMatchSnapshot();
  });

  it.each(['en', 'ja'] as const)('says when the refresh is stretched by its node CPU (%s)', (lang) => {
    const frame = renderAt(<Header {...props(width, lang, { stretched: { everyMs: 4400, nodeCpuMs: 220 } })} />, width).frame();
    const line = frame.split('\n')[1]!;
    expect(cellWidth(line)).toBeLessThanOrEqual(width);
    expect(line).toContain(lang === 'en' ? 'refresh every 4.4 s (a read costs the node 0.22 s CPU)' : '更新は 4.4 秒ごと（1 回の読み込みでノードの CPU 0.22 秒）');
    expect(renderAt(<Header {...props(width, lang)} />, width).frame()).not.toContain('4.4');
  });

  it.each(['en', 'ja'] as const)('lists wall and node CPU per probe under ?, unknown CPU as ?, and why a dump was skipped (%s)', (lang) => {
    const rows = helpProbeRows(probes, skipped);
    expect(rows.map((r) => r.id)).toEqual(['iptables-save', 'ip-addr', 'nft-json']);
    const frame = renderAt(<Help lang={lang} width={width} height={40} probes={rows} />, width).frame();
    const ok = lang === 'en' ? 'ok' : '成功';
    expect(frame).toMatch(new RegExp(`iptables-save\\s+3210 / 2980\\s+${ok}`));
    expect(frame).toMatch(new RegExp(`ip-addr\\s+4 / \\?\\s+${ok}`));
    expect(frame).toContain('nft-json');
    expect(frame).toMatchSnapshot();
  });
});

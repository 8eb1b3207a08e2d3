import { describe, expect, it } from 'vitest';
import { iptablesRates } from '../../src/analysis/rates.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';

/** A nat table whose KUBE-SVC-A rules have the given packet counters and DNAT targets. */
function natWith(rules: readonly { packets: number; to: string }[]) {
  const lines = ['*nat', ':KUBE-SVC-A - [0:0]', ...rules.map((r, i) => `[${r.packets}:${r.packets * 60}] -A KUBE-SVC-A -m comment --comment "rule ${i}" -j DNAT --to-destination ${r.to}`), 'COMMIT', ''];
  return parseIptablesSave(lines.join('\n'), 'test', { family: 'ipv4' }).value;
}

describe('iptablesRates', () => {
  it('gives packets per second per unchanged rule, none for a rewritten rule or a counter that went down', () => {
    const before = natWith([
      { packets: 10, to: '10.0.0.1:80' },
      { packets: 5, to: '10.0.0.2:80' },
      { packets: 50, to: '10.0.0.3:80' },
      { packets: 7, to: '10.0.0.4:80' },
    ]);
    const after = natWith([
      { packets: 30, to: '10.0.0.1:80' }, // +20 in 2 s
      { packets: 5, to: '10.0.0.2:80' }, // unchanged
      { packets: 1, to: '10.0.0.3:80' }, // reset
      { packets: 9, to: '10.0.0.9:80' }, // another endpoint: not the same rule
    ]);
    const rates = iptablesRates(before, after, 2);
    // One rule asked for (the Rules pane's way), then all of them.
    expect(rates.get('nat/KUBE-SVC-A#1')).toBe(10);
    expect(rates.get('nat/KUBE-SVC-A#3')).toBeUndefined();
    expect(rates.get('filter/KUBE-SVC-A#1')).toBeUndefined();
    expect(rates.size).toBe(2);
    expect([...rates.entries()].sort()).toEqual([
      ['nat/KUBE-SVC-A#1', 10],
      ['nat/KUBE-SVC-A#2', 0],
    ]);
    expect(iptablesRates(before, after, 0).size).toBe(0);
  });
});

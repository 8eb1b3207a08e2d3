/**
 * iptables-save parser: the shortcuts taken for speed give what the plain route gives —
 * chain headers read in place, a table's rules kept as runs of one list (chains whose
 * rules are interleaved or inserted get lists of their own), the chain looked up by
 * declaration order, jump targets with options settled once per name, and `raw` kept
 * for lines with a backslash or a CR in a bare word.
 */
import { describe, expect, it } from 'vitest';
import { findChain } from '../../src/model/iptables.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { saveBlock } from './builders/iptables.js';

const codes = (r: { diagnostics: readonly { code: string; line: number }[] }) => r.diagnostics.map((d) => `${d.code}@${d.line}`);

/** Deterministic pseudo-random numbers in [0, 1). */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
}

/**
 * The rules' texts each chain must end up with, by a plain reading of `-A`/`-I`/`-X`
 * lines (the reference the parser is checked against).
 */
function expectedChains(lines: readonly string[]): Map<string, string[]> {
  const chains = new Map<string, string[]>();
  for (const l of lines) {
    const w = l.split(' ');
    if (l.startsWith(':')) chains.set(w[0]!.slice(1), []);
    else if (w[0] === '-X') chains.delete(w[1]!);
    else if (w[0] === '-A') chains.get(w[1]!)!.push(l);
    else if (w[0] === '-I') {
      const list = chains.get(w[1]!)!;
      const at = /^[0-9]+$/.test(w[2]!) ? Number(w[2]) : 1;
      list.splice(Math.min(at - 1, list.length), 0, l);
    }
  }
  return chains;
}

describe('chain rules as runs of the table list', () => {
  it('keeps each chain in order when chains interleave, rules are inserted and chains deleted', () => {
    const rnd = random(42);
    const names = Array.from({ length: 12 }, (_, i) => `KUBE-SEP-${String(i).padStart(16, 'X')}`);
    const lines: string[] = [':KUBE-MARK-MASQ - [0:0]', ...names.map((n) => `:${n} - [0:0]`)];
    const deleted = new Set<string>();
    for (let k = 0; k < 400; k++) {
      const live = names.filter((n) => !deleted.has(n));
      // Runs of a few rules for one chain, then another chain: some runs resume a chain seen before.
      const chain = live[Math.floor(rnd() * live.length)]!;
      const run = 1 + Math.floor(rnd() * 4);
      for (let r = 0; r < run; r++) {
        const x = rnd();
        const body = `-s 10.0.${k}.${r}/32 -j KUBE-MARK-MASQ`;
        if (x < 0.1) lines.push(`-I ${chain} ${1 + Math.floor(rnd() * 5)} ${body}`);
        else if (x < 0.15) lines.push(`-I ${chain} ${body}`);
        else lines.push(`-A ${chain} ${body}`);
      }
      if (k % 150 === 149) {
        deleted.add(chain);
        lines.push(`-X ${chain}`);
      }
    }
    const r = parseIptablesSave(saveBlock('nat', lines), 't');
    const table = r.value.tables[0]!;
    const want = expectedChains(lines);
    expect(table.chains.map((c) => c.name)).toEqual([...want.keys()]);
    for (const [name, raws] of want) {
      const chain = findChain(r.value, 'nat', name)!;
      expect(chain.rules.map((x) => x.raw)).toEqual(raws);
      expect(chain.rules.map((x) => x.index)).toEqual(raws.map((_, i) => i + 1));
    }
    expect(codes(r)).toEqual([]);
  });

  it('finds a rule chain declared out of order, used before declared, and a built-in one', () => {
    const lines = [':B - [0:0]', ':A - [0:0]', '-A A -j B', '-A B -j RETURN', '-A PREROUTING -j A', '-A C -j B', '-A A -j RETURN'];
    const r = parseIptablesSave(saveBlock('nat', lines), 't');
    const byName = Object.fromEntries(r.value.tables[0]!.chains.map((c) => [c.name, c.rules.map((x) => x.raw)]));
    expect(byName).toEqual({
      B: ['-A B -j RETURN'],
      A: ['-A A -j B', '-A A -j RETURN'],
      PREROUTING: ['-A PREROUTING -j A'],
      C: ['-A C -j B'],
    });
    expect(codes(r)).toEqual(['undeclared-chain@7']);
  });
});

describe('chain headers read in place', () => {
  const header = (line: string) => {
    const r = parseIptablesSave(saveBlock('filter', [line]), 't');
    return { chains: r.value.tables[0]!.chains, codes: codes(r) };
  };

  it('reads name, policy and counters, with tabs and repeated blanks', () => {
    for (const line of [':INPUT ACCEPT [3:4]', ':INPUT\tACCEPT\t[3:4]', ':INPUT  ACCEPT   [3:4]']) {
      const { chains, codes: c } = header(line);
      expect(chains.map((x) => [x.name, x.policy, x.builtin, x.counters])).toEqual([['INPUT', 'ACCEPT', true, { packets: 3n, bytes: 4n }]]);
      expect(c).toEqual([]);
    }
    const drop = header(':FORWARD DROP [0:0]').chains[0]!;
    expect([drop.policy, drop.counters]).toEqual(['DROP', { packets: 0n, bytes: 0n }]);
    const user = header(':KUBE-SERVICES - [0:0]').chains[0]!;
    expect([user.policy, user.builtin]).toEqual([null, false]);
  });

  it('reports what is wrong and keeps what it can', () => {
    expect(header(':').codes).toEqual(['bad-chain-header@2']);
    expect(header(': - [0:0]').codes).toEqual(['bad-chain-header@2']);
    const noPolicy = header(':INPUT');
    expect(noPolicy.codes).toEqual(['unknown-policy@2']);
    expect([noPolicy.chains[0]!.builtin, noPolicy.chains[0]!.counters]).toEqual([true, null]);
    const odd = header(':X QUEUE [1:2]');
    expect(odd.codes).toEqual(['unknown-policy@2']);
    expect(odd.chains[0]!.counters).toEqual({ packets: 1n, bytes: 2n });
    expect(header(':X - [1:x]').codes).toEqual(['bad-counters@2']);
    expect(header(':X - [1:2] more').codes).toEqual(['bad-chain-header@2']);
    expect(header(':X - [1:2] more').chains[0]!.counters).toEqual({ packets: 1n, bytes: 2n });
    const bare = header(':X -');
    expect([bare.chains[0]!.counters, bare.codes]).toEqual([null, []]);
  });
});

describe('raw and target kinds', () => {
  it('keeps a line whose bare word holds a backslash or a CR as it was', () => {
    const lines = [':X - [0:0]', '-A X -m comment --comment a\\b -j ACCEPT', '-A X -s 10.0.0.1\r2 -j ACCEPT', '-A X -m mark --mark 0x1\\ -j ACCEPT'];
    const r = parseIptablesSave(saveBlock('filter', lines), 't');
    const rules = r.value.tables[0]!.chains[0]!.rules;
    expect(rules.map((x) => x.raw)).toEqual(lines.slice(1));
    for (const rule of rules) expect(Object.hasOwn(rule, 'raw')).toBe(true);
  });

  it('settles jump targets with options by name, goto targets on their own', () => {
    const lines = [
      ':DNAT2 - [0:0]',
      ':X - [0:0]',
      '-A X -p tcp -m tcp -j DNAT --to-destination 10.0.0.1:80',
      '-A X -p tcp -m tcp -j DNAT --to-destination 10.0.0.2:80',
      '-A X -g DNAT2 --opt 1',
      '-A X -g NOWHERE --opt 1',
      '-A X -j DNAT2 --opt 1',
      '-A X -j DNAT --to-destination 10.0.0.3:80',
      '-A X -j DNAT2 --opt 2',
    ];
    const r = parseIptablesSave(saveBlock('nat', lines), 't');
    const kinds = findChain(r.value, 'nat', 'X')!.rules.map((x) => `${x.target!.name}:${x.target!.kind}`);
    expect(kinds).toEqual(['DNAT:extension', 'DNAT:extension', 'DNAT2:goto', 'NOWHERE:goto', 'DNAT2:jump', 'DNAT:extension', 'DNAT2:jump']);
    expect(codes(r)).toEqual(['unknown-target@7']);
  });
});

/**
 * The open chain's refresh without parsing its rules (src/collect/chain-refresh.ts
 * `spliceIptablesChain`): for an unchanged chain it equals the reference that parses the
 * listing whole (`spliceIptablesChainWhole`) — the ruleset, the chain's rules as plain data,
 * `changed`, and the rates — on the lab capture, generated captures and edited listings, and
 * for refresh after refresh; any other listing takes the reference itself.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { oneChainRates, spliceIptablesChain, spliceIptablesChainWhole, spliceUnchangedListing } from '../../src/collect/chain-refresh.js';
import { findChain, type IptablesChain, type IptablesRuleset, type IptablesTableKey } from '../../src/model/iptables.js';
import { toPlain } from '../../src/model/plain.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';

/**
 * What `iptables -t T -S CHAIN -v` prints for `chain` (iptables 1.8.9: `-N CHAIN`, then each
 * rule with `-c P B` before its target, or last), the counters from `count(i)`.
 */
function listingOf(chain: IptablesChain, count: (i: number, packets: bigint) => bigint): string {
  const lines = chain.rules.map((r, i) => {
    // The shown rule's text from a full read (`[p:b] -A …`) or from the last listing (`… -c P B …`).
    const text = r.raw.replace(/^\[\d+:\d+\]\s*/, '').replace(/ -c \d+ \d+(?= |$)/, '');
    const p = count(i, r.counters?.packets ?? 0n);
    const words = ` -c ${p} ${p * 60n}`;
    const j = r.target ? text.lastIndexOf(` -${r.target.kind === 'goto' ? 'g' : 'j'} ${r.target.name}`) : -1;
    return j < 0 ? `${text}${words}` : `${text.slice(0, j)}${words}${text.slice(j)}`;
  });
  return [`-N ${chain.name}`, ...lines, ''].join('\n');
}

const plainChain = (c: IptablesChain) => ({ ...toPlain(c), rules: c.rules.map((r) => toPlain(r)) });

/** Fast and reference splices of `text` into `ruleset` agree in every way the refresh uses; returns both. */
function agree(ruleset: IptablesRuleset, table: IptablesTableKey, chain: string, text: string) {
  const fast = spliceIptablesChain(ruleset, table, chain, text, 'iptables-chain');
  const whole = spliceIptablesChainWhole(ruleset, table, chain, text, 'iptables-chain');
  expect(fast === null).toBe(whole === null);
  if (!fast || !whole) return null;
  expect(fast.changed).toBe(whole.changed);
  expect(plainChain(fast.chain)).toEqual(plainChain(whole.chain));
  const json = (x: unknown) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  expect(json(fast.chain)).toBe(json(whole.chain));
  const old = findChain(ruleset, table, chain)!;
  expect(oneChainRates(table, old, fast.chain, 2)).toEqual(oneChainRates(table, old, whole.chain, 2));
  // Every other chain is the very object shown before, in both.
  for (const t of ruleset.tables) for (const c of t.chains) if (!(t.name === table && c.name === chain)) expect(findChain(fast.ruleset, t.name, c.name)).toBe(c);
  return { fast, whole };
}

function userChains(ruleset: IptablesRuleset, table: IptablesTableKey): IptablesChain[] {
  return ruleset.tables.find((t) => t.name === table)!.chains.filter((c) => !c.builtin && c.rules.length > 0);
}

describe('the open chain read without parsing its rules', () => {
  const lab = parseIptablesSave(readFileSync('fixtures/lab-iptables/probes/iptables-save.stdout', 'utf8'), 'iptables-save', { family: 'ipv4' }).value!;

  it('equals the whole parse for every user chain of the lab capture, counters moved, and takes the fast path', () => {
    const chains = [...userChains(lab, 'nat'), ...userChains(lab, 'filter')];
    expect(chains.length).toBeGreaterThan(10);
    for (const c of chains) {
      const table = lab.tables.find((t) => t.chains.includes(c))!.name;
      const text = listingOf(c, (i, p) => p + BigInt(i * 7 + 3));
      expect(spliceUnchangedListing(c, text)).not.toBeNull();
      const got = agree(lab, table, c.name, text)!;
      expect(got.fast.changed).toBe(false);
    }
  });

  it('equals it on generated captures (KUBE-SERVICES of 300 Services, KUBE-SVC chains), refresh after refresh', () => {
    for (const [services, endpoints] of [
      [300, 3],
      [40, 1],
    ] as const) {
      const world = generateWorld({ services, endpoints, seed: `chain-fast-${services}`, modes: ['iptables'], conntrack: 10 });
      const ruleset = parseIptablesSave(modeOutputs(world, 'iptables').get('iptables-save')!, 'iptables-save', { family: 'ipv4' }).value!;
      for (const c of userChains(ruleset, 'nat').filter((x) => x.name === 'KUBE-SERVICES' || x.name.startsWith('KUBE-SVC-')).slice(0, 40)) agree(ruleset, 'nat', c.name, listingOf(c, (i, p) => p + BigInt(i)));
      // Three refreshes of KUBE-SERVICES: each fast result is the next one's shown chain, as in a session.
      let fast = ruleset;
      let whole = ruleset;
      for (let round = 1; round <= 3; round++) {
        const text = listingOf(findChain(fast, 'nat', 'KUBE-SERVICES')!, (i, p) => p + BigInt(round * (i % 5)));
        const f = spliceIptablesChain(fast, 'nat', 'KUBE-SERVICES', text, 'iptables-chain')!;
        const w = spliceIptablesChainWhole(whole, 'nat', 'KUBE-SERVICES', text, 'iptables-chain')!;
        expect(spliceUnchangedListing(findChain(fast, 'nat', 'KUBE-SERVICES')!, text)).not.toBeNull();
        expect(plainChain(f.chain)).toEqual(plainChain(w.chain));
        expect(oneChainRates('nat', findChain(fast, 'nat', 'KUBE-SERVICES')!, f.chain, 2)).toEqual(oneChainRates('nat', findChain(whole, 'nat', 'KUBE-SERVICES')!, w.chain, 2));
        [fast, whole] = [f.ruleset, w.ruleset];
      }
    }
  });

  it('leaves a changed, cut or odd listing to the whole parse, with the same answer', () => {
    const svc = findChain(lab, 'nat', 'KUBE-SERVICES')!;
    const text = listingOf(svc, (_i, p) => p + 1n);
    const lines = text.trimEnd().split('\n');
    const edits: Record<string, string> = {
      'a rule added': `${text}-A KUBE-SERVICES -d 10.96.99.99/32 -p tcp -m tcp --dport 80 -c 0 0 -j KUBE-SVC-NEWNEWNEWNEWNEW1\n`,
      'a rule gone': [...lines.slice(0, 2), ...lines.slice(3), ''].join('\n'),
      'a rule rewritten': text.replace(/--dport (\d+)/, (_m, p: string) => `--dport ${Number(p) + 1}`),
      'two rules swapped': [lines[0], lines[2], lines[1], ...lines.slice(3), ''].join('\n'),
      'no -c words (a listing without -v)': text.replace(/ -c \d+ \d+/g, ''),
      'counters twice': text.replace(/ -c (\d+) (\d+)/, ' -c $1 $2 -c $1 $2'),
      'the header of a builtin chain': text.replace('-N KUBE-SERVICES', '-P KUBE-SERVICES ACCEPT -c 1 2'),
      'another chain named': text.replace('-N KUBE-SERVICES', '-N KUBE-OTHER'),
      'CRLF line ends': text.replace(/\n/g, '\r\n'),
      'cut short': text.slice(0, Math.floor(text.length / 2)),
      empty: '',
    };
    for (const [what, edited] of Object.entries(edits)) {
      expect(spliceUnchangedListing(svc, edited), what).toBeNull();
      agree(lab, 'nat', 'KUBE-SERVICES', edited);
    }
    expect(spliceIptablesChain(lab, 'nat', 'KUBE-SERVICES', edits['a rule added']!, 'iptables-chain')!.changed).toBe(true);
  });

  it('reads counters as the parser does (leading zeros, past 2^64) and never counter words inside a quoted comment', () => {
    const svc = findChain(lab, 'nat', 'KUBE-SERVICES')!;
    const text = listingOf(svc, (_i, p) => p);
    const zeros = text.replace(/ -c (\d+) (\d+)/g, ' -c 007 0$2');
    expect(spliceUnchangedListing(svc, zeros)).not.toBeNull();
    agree(lab, 'nat', 'KUBE-SERVICES', zeros);
    const huge = text.replace(/ -c (\d+) (\d+)/, ' -c 18446744073709551616 99999999999999999999999');
    expect(spliceUnchangedListing(svc, huge)).not.toBeNull();
    agree(lab, 'nat', 'KUBE-SERVICES', huge);
    // A chain whose rule's comment holds `-c 1 2` and no counter words: the whole parse decides (no counters there).
    const quoted = parseIptablesSave(['*nat', ':KUBE-Q - [0:0]', '[3:180] -A KUBE-Q -m comment --comment "a -c 1 2 b" -j RETURN', 'COMMIT', ''].join('\n'), 'save', { family: 'ipv4' }).value!;
    const q = findChain(quoted, 'nat', 'KUBE-Q')!;
    const bare = '-N KUBE-Q\n-A KUBE-Q -m comment --comment "a -c 1 2 b" -j RETURN\n';
    expect(spliceUnchangedListing(q, bare)).toBeNull();
    const got = agree(quoted, 'nat', 'KUBE-Q', bare)!;
    expect(got.fast.chain.rules[0]!.counters).toBe(got.whole.chain.rules[0]!.counters);
    const both = '-N KUBE-Q\n-A KUBE-Q -m comment --comment "a -c 1 2 b" -c 5 300 -j RETURN\n';
    expect(spliceUnchangedListing(q, both)).toBeNull();
    agree(quoted, 'nat', 'KUBE-Q', both);
    const escaped = parseIptablesSave(['*nat', ':KUBE-Q - [0:0]', '[3:180] -A KUBE-Q -m comment --comment "say \\"hi\\"" -j RETURN', 'COMMIT', ''].join('\n'), 'save', { family: 'ipv4' }).value!;
    const e = '-N KUBE-Q\n-A KUBE-Q -m comment --comment "say \\"hi\\"" -c 5 300 -j RETURN\n';
    agree(escaped, 'nat', 'KUBE-Q', e);
  });
});

/**
 * `parseIptablesSaveLazy` (src/parsers/iptables-save.ts): a dump held whole, each chain's
 * rules parsed on first read — what `trace` parses (src/cli/trace-load.ts). Equal to the
 * one-pass parse (the reference, `parseIptablesSave`) in the whole model, the diagnostics
 * (read first or last) and the JSON text, on the lab captures, the shared corpus, generated
 * captures and edited and odd texts; it leaves chains unparsed until read, and any shape
 * pass 1 does not locate is parsed in one pass. A chain read rule by rule (`chainRuleAt`,
 * what the trace walk does) parses only up to the rule asked, and its rules, once all read,
 * are those objects and equal the one-pass parse's.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { chainLineFacts, chainRuleAt, rulesetReadState } from '../../src/model/iptables-facts.js';
import type { IptablesRuleset } from '../../src/model/iptables.js';
import { parseIptablesSave, parseIptablesSaveLazy } from '../../src/parsers/iptables-save.js';
import { fixtureDir } from '../helpers/fixtures.js';

const corpusDir = path.resolve(import.meta.dirname, '../../../shared/corpus/iptables');
const haveCorpus = existsSync(corpusDir);
if (!haveCorpus) console.warn(`skipping the iptables corpus in the whole-text lazy parse: ${corpusDir} is absent`);

/** Chains whose rules are not built yet. */
function unparsed(ruleset: IptablesRuleset): number {
  let n = 0;
  for (const t of ruleset.tables) for (const c of t.chains) if (chainLineFacts(c) !== undefined) n++;
  return n;
}

/** Every iptables dump of the lab captures, the corpus (when present) and generated captures. */
function dumps(): { label: string; text: string }[] {
  const out: { label: string; text: string }[] = [];
  for (const lab of ['lab-iptables', 'lab-nftables', 'lab-cilium']) {
    for (const f of readdirSync(path.join(fixtureDir(lab), 'probes')).filter((x) => /tables.*save.*\.stdout$/.test(x))) {
      const text = readFileSync(path.join(fixtureDir(lab), 'probes', f), 'utf8');
      if (text.length > 0) out.push({ label: `${lab}/${f}`, text });
    }
  }
  if (haveCorpus) for (const f of readdirSync(corpusDir)) out.push({ label: `corpus/${f}`, text: readFileSync(path.join(corpusDir, f), 'utf8') });
  for (const [services, endpoints] of [[80, 3], [300, 1]] as const) {
    const world = generateWorld({ services, endpoints, seed: `ipt-lazy-whole-${services}`, modes: ['iptables'], conntrack: 10 });
    out.push({ label: `generated ${services}x${endpoints}`, text: modeOutputs(world, 'iptables').get('iptables-save')! });
  }
  return out;
}

const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));

/** The lazy parse of `text` against the one-pass parse: chains in reverse order (or the diagnostics first), then everything. */
function expectEqual(label: string, text: string, diagnosticsFirst: boolean, family: 'ipv4' | 'ipv6' = 'ipv4'): void {
  const whole = parseIptablesSave(text, 'iptables-save', { family });
  const lazy = parseIptablesSaveLazy(text, 'iptables-save', { family });
  if (diagnosticsFirst) {
    expect(lazy.diagnostics, label).toEqual(whole.diagnostics);
    expect(unparsed(lazy.value), label).toBe(0);
  } else {
    for (const t of [...lazy.value.tables].reverse()) for (const c of [...t.chains].reverse()) void c.rules;
  }
  expect(lazy.value, label).toEqual(whole.value);
  expect(json(lazy.value), label).toBe(json(whole.value));
  expect(lazy.diagnostics, label).toEqual(whole.diagnostics);
  expect(unparsed(lazy.value), label).toBe(0);
}

/**
 * The lazy parse of `text` read as the trace walk reads it: every chain's first rules one by
 * one through `chainRuleAt` (a chain of more than `upTo` rules stays unparsed), each equal to
 * the one-pass parse's rule; then every chain whole (the rules read first are the same
 * objects) and the whole model, JSON text and diagnostics equal to the one-pass parse's.
 */
function expectEqualRuleByRule(label: string, text: string, upTo: number, family: 'ipv4' | 'ipv6' = 'ipv4'): void {
  const whole = parseIptablesSave(text, 'iptables-save', { family });
  const lazy = parseIptablesSaveLazy(text, 'iptables-save', { family });
  const firsts = new Map<string, unknown[]>();
  lazy.value.tables.forEach((t, i) =>
    t.chains.forEach((c, j) => {
      const want = whole.value.tables[i]!.chains[j]!.rules;
      const deferred = chainLineFacts(c) !== undefined;
      const read: unknown[] = [];
      for (let k = 0; k < upTo; k++) {
        const rule = chainRuleAt(c, k);
        expect(rule, `${label} ${t.name}/${c.name} #${k}`).toEqual(want[k]);
        expect(chainRuleAt(c, k), `${label} ${t.name}/${c.name} #${k} again`).toBe(rule);
        if (rule !== undefined) read.push(rule);
      }
      expect(chainRuleAt(c, -1), label).toBeUndefined();
      expect(chainRuleAt(c, want.length), label).toBeUndefined();
      // Only the rules asked for were parsed: a longer chain is still unparsed.
      if (deferred && want.length > upTo) expect(chainLineFacts(c), `${label} ${t.name}/${c.name}`).toBeDefined();
      firsts.set(`${t.name}/${c.name}`, read);
    }),
  );
  if (rulesetReadState(lazy.value) !== undefined) {
    const soFar = rulesetReadState(lazy.value)!.diagnosticsSoFar;
    expect(soFar.map((d) => d.line), label).toEqual([...soFar.map((d) => d.line)].sort((a, b) => a - b));
  }
  for (const t of [...lazy.value.tables].reverse()) {
    for (const c of [...t.chains].reverse()) {
      const read = firsts.get(`${t.name}/${c.name}`)!;
      read.forEach((r, k) => expect(c.rules[k], `${label} ${t.name}/${c.name} #${k} kept`).toBe(r));
    }
  }
  expect(lazy.value, label).toEqual(whole.value);
  expect(json(lazy.value), label).toBe(json(whole.value));
  expect(lazy.diagnostics, label).toEqual(whole.diagnostics);
  expect(unparsed(lazy.value), label).toBe(0);
}

const ODD = [
  '# Generated by iptables-save v1.8.9 (nf_tables) on Sat Mar  9 17:33:03 2024',
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':KUBE-SERVICES - [0:0]',
  ':KUBE-SVC-A - [0:0]',
  '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m tcp --dport 443 -j KUBE-SVC-A',
  '-A KUBE-SVC-A -j KUBE-MARK-MASQ',
  'COMMIT',
  '*filter',
  ':INPUT ACCEPT [0:0]',
  '-A INPUT -m conntrack --ctstate INVALID -j DROP',
  'COMMIT',
  '',
].join('\n');

describe('iptables-save held whole, parsed per chain on first read', () => {
  const all = dumps();

  it('defers the chains of the labs and the generated captures', () => {
    expect(all.filter((d) => d.label.startsWith('lab-')).length).toBeGreaterThanOrEqual(2);
    for (const d of all.filter((x) => x.label.startsWith('generated') || x.label.startsWith('lab-iptables'))) {
      const { value } = parseIptablesSaveLazy(d.text, 'iptables-save', { family: 'ipv4' });
      expect(unparsed(value), d.label).toBeGreaterThan(5);
    }
  });

  it.each([false, true])('equals the one-pass parse (diagnostics first: %s)', (diagnosticsFirst) => {
    for (const d of all) expectEqual(d.label, d.text, diagnosticsFirst);
  });

  it('edited and odd texts: CRLF with a BOM, a chain in two places, an -I command, no table, the legacy warning, garbage, empty', () => {
    const generated = all.find((d) => d.label.startsWith('generated 80'))!.text;
    const crlf = '\ufeff' + generated.replaceAll('--comment "', '--comment "ノ😀é ').replaceAll('\n', '\r\n');
    const texts: [string, string][] = [
      ['odd', ODD],
      ['CRLF + BOM', crlf],
      ['split chain', ODD.replace('-A KUBE-SVC-A -j KUBE-MARK-MASQ', '-A KUBE-SVC-A -j KUBE-MARK-MASQ\n-A KUBE-SERVICES -j RETURN')],
      ['-I command', ODD.replace('-A KUBE-SVC-A', '-I KUBE-SVC-A')],
      ['no table', '-A INPUT -j ACCEPT\n-A FORWARD -j DROP\n'],
      ['legacy warning', `${ODD}# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n`],
      ['no COMMIT', ODD.replace('COMMIT\n*filter', '*filter')],
      ['bad counters', ODD.replace('-A KUBE-SVC-A', '[x:1] -A KUBE-SVC-A')],
      ['garbage', '\u0000\u0001 not iptables\n*nat\n-A\n'],
      ['empty', ''],
    ];
    for (const [label, text] of texts) for (const first of [false, true]) expectEqual(label, text, first);
    expectEqual('ipv6', ODD.replace('10.96.0.1/32', 'fd00::1/128'), false, 'ipv6');
    // Lazy where pass 1 locates every line; one pass (every chain built) where it does not.
    expect(unparsed(parseIptablesSaveLazy(ODD, 'x').value)).toBeGreaterThan(0);
    expect(unparsed(parseIptablesSaveLazy(texts[3]![1], 'x').value)).toBe(0);
  });

  it.each([1, 2, 5])('read rule by rule (the first %i of each chain), then whole, equals the one-pass parse', (upTo) => {
    for (const d of all) expectEqualRuleByRule(d.label, d.text, upTo);
    const generated = all.find((x) => x.label.startsWith('generated 80'))!.text;
    // Rules with problems and unknown targets (late diagnostics) before, at and after the cut.
    const faulty = ODD.replace(
      '-A KUBE-SERVICES -d 10.96.0.1/32',
      '-A KUBE-SERVICES -j NO-SUCH-CHAIN\n-A KUBE-SERVICES --bogus 1 -j KUBE-SVC-A\n-A KUBE-SERVICES -j NO-SUCH-CHAIN\n-A KUBE-SERVICES -d 10.96.0.1/32',
    );
    const texts: [string, string][] = [
      ['odd', ODD],
      ['faulty', faulty],
      ['faulty CRLF + BOM', '\ufeff' + faulty.replaceAll('\n', '\r\n')],
      ['CRLF + BOM', '\ufeff' + generated.replaceAll('--comment "', '--comment "ノ😀é ').replaceAll('\n', '\r\n')],
      ['-I command', ODD.replace('-A KUBE-SVC-A', '-I KUBE-SVC-A')],
      ['bad counters', ODD.replace('-A KUBE-SVC-A', '[x:1] -A KUBE-SVC-A')],
      ['garbage', '\u0000\u0001 not iptables\n*nat\n-A\n'],
      ['empty', ''],
    ];
    for (const [label, text] of texts) expectEqualRuleByRule(label, text, upTo);
    expectEqualRuleByRule('ipv6', ODD.replace('10.96.0.1/32', 'fd00::1/128'), upTo, 'ipv6');
  });

  it('a chain read up to its first rule parses no more of it; reading it whole then parses the rest', () => {
    const text = all.find((x) => x.label.startsWith('generated 300'))!.text;
    const { value } = parseIptablesSaveLazy(text, 'iptables-save', { family: 'ipv4' });
    const services = value.tables.find((t) => t.name === 'nat')!.chains.find((c) => c.name === 'KUBE-SERVICES')!;
    const before = unparsed(value);
    const first = chainRuleAt(services, 0)!;
    expect(first.index).toBe(1);
    expect(chainLineFacts(services)?.ruleCount).toBeGreaterThan(300);
    expect(unparsed(value)).toBe(before);
    expect(services.rules[0]).toBe(first);
    expect(chainLineFacts(services)).toBeUndefined();
    expect(unparsed(value)).toBe(before - 1);
  });
});

/**
 * iptables-save with each chain's rules parsed on first read (issue 23 item 4: a replay of a
 * 25,000-Service node's first frame needs the proxy mode, not 800,000 rules): the lazy model
 * equals the one-pass parse (the reference, `parseIptablesSave`) in every chain's rules, the
 * diagnostics, `show rules -o json` and the proxy mode, on the lab captures, the shared corpus,
 * generated captures and edited, cut and odd texts; the line facts the mode reads before any
 * rule is built equal what the rules say, and reading the mode builds no chain's rules.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildFirstSnapshot, buildSnapshot, completeSnapshot, piecedProbes } from '../../src/collect/build-snapshot.js';
import { countLeftoverChains, detectProxyMode, ipsetMatchesIn } from '../../src/analysis/proxy-mode.js';
import { plainIptablesChain, type IptablesChain, type IptablesRuleset } from '../../src/model/iptables.js';
import { chainLineFacts, chainMayHold, chainRuleCount } from '../../src/model/iptables-facts.js';
import { iptablesDumpNotes, rulesMissingTheirMark, staleRejectsOnIpvs } from '../../src/analysis/iptables-faults.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { lineWordsIrregular, parseIptablesSave, parseIptablesSaveLazyPieces, type IptablesParseOptions } from '../../src/parsers/iptables-save.js';
import { tokenizeRange, TokenBuffer } from '../../src/parsers/iptables-rule.js';
import { showRules } from '../../src/report/rules.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';

const corpusDir = path.resolve(import.meta.dirname, '../../../shared/corpus/iptables');
const haveCorpus = existsSync(corpusDir);
if (!haveCorpus) console.warn(`skipping the iptables corpus in the lazy parse: ${corpusDir} is absent`);

/** `text` in pieces of about `size` characters, each ending a line (as the bundle reader cuts). */
function lineCut(text: string, size: number): string[] {
  const out: string[] = [];
  let from = 0;
  while (from < text.length) {
    const nl = text.indexOf('\n', from + size);
    const to = nl < 0 ? text.length : nl + 1;
    out.push(text.slice(from, to));
    from = to;
  }
  return out;
}

/** `text` cut every `size` characters (anywhere). */
function cut(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function lazy(pieces: string[], options: IptablesParseOptions = { family: 'ipv4' }) {
  return parseIptablesSaveLazyPieces(() => pieces, 'iptables-save', options, 500, async () => {});
}

/** Chains whose rules are not built yet. */
function unparsed(ruleset: IptablesRuleset): number {
  let n = 0;
  for (const t of ruleset.tables) for (const c of t.chains) if (chainLineFacts(c) !== undefined) n++;
  return n;
}

/** A snapshot holding only `ruleset` as its iptables part: what mode detection reads. */
function snapshotOf(ruleset: IptablesRuleset): NodeSnapshot {
  return { iptables: { value: ruleset, diagnostics: [], probe: null, error: null } } as unknown as NodeSnapshot;
}

/** Every one-word field of a chain's rules: module, option names and values, comments, target, generic values. */
function words(c: IptablesChain): string[] {
  const out: string[] = [];
  for (const r of c.rules) {
    for (const g of [r.source, r.destination, r.inInterface, r.outInterface, r.protocol]) if (g) out.push(g.value);
    for (const m of r.matches) {
      out.push(m.module);
      for (const o of m.options) out.push(o.name, ...o.values);
    }
    if (r.target) {
      out.push(r.target.name);
      for (const o of r.target.options) out.push(o.name, ...o.values);
    }
    if (r.comment !== null) out.push(...r.comment.split(' | '));
  }
  return out;
}

/** Words the readers look for, and some of every dump. */
const LITERALS = ['kubernetes ', 'match-set', 'KUBE-CLUSTER-IP', 'recent', 'kubernetes service traffic requiring SNAT', 'kubernetes forwarding rules', 'kubernetes firewall for dropping marked packets', 'DNAT', 'KUBE-MARK-MASQ', 'default/', 'tcp', '0x4000'];

/** Plain data of a ruleset: every table's fields and every chain with its rules in plain form. */
function plain(ruleset: IptablesRuleset) {
  return { ...ruleset, tables: ruleset.tables.map((t) => ({ ...t, chains: t.chains.map(plainIptablesChain) })) };
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
    const world = generateWorld({ services, endpoints, seed: `ipt-lazy-${services}`, modes: ['iptables'], conntrack: 10 });
    out.push({ label: `generated ${services}x${endpoints}`, text: modeOutputs(world, 'iptables').get('iptables-save')! });
  }
  return out;
}

/**
 * The lazy parse of `pieces` against the one-pass parse of their text: the mode's readers
 * first (no rule built for them unless a line may hold `--match-set`), then every chain in
 * reverse order (or the diagnostics first), then the whole model, the diagnostics and
 * `show rules -o json`.
 */
async function expectEqual(label: string, pieces: string[], options: IptablesParseOptions = { family: 'ipv4' }, diagnosticsFirst = false): Promise<void> {
  const text = pieces.join('');
  const whole = parseIptablesSave(text, 'iptables-save', options);
  const result = await lazy(pieces, options);
  const value = result.value;
  const before = unparsed(value);
  // The facts, before any rule is built.
  whole.value.tables.forEach((t, i) => t.chains.forEach((c, j) => expect(chainRuleCount(value.tables[i]!.chains[j]!), `${label} ${t.name}/${c.name}`).toBe(c.rules.length)));
  expect(countLeftoverChains(value), label).toBe(countLeftoverChains(whole.value));
  expect(unparsed(value), `${label}: rule counts build no rule`).toBe(before);
  expect(ipsetMatchesIn(value), label).toEqual(ipsetMatchesIn(whole.value));
  expect(detectProxyMode(snapshotOf(value)), label).toEqual(detectProxyMode(snapshotOf(whole.value)));
  expect(rulesMissingTheirMark(value), label).toEqual(rulesMissingTheirMark(whole.value));
  expect(staleRejectsOnIpvs(snapshotOf(value)), label).toEqual(staleRejectsOnIpvs(snapshotOf(whole.value)));
  // A word the facts say is absent is in no one-word field of the rules.
  whole.value.tables.forEach((t, i) =>
    t.chains.forEach((c, j) => {
      const lazyChain = value.tables[i]!.chains[j]!;
      if (chainLineFacts(lazyChain) === undefined) return;
      const all = words(c);
      for (const literal of LITERALS) if (!chainMayHold(lazyChain, literal)) expect(all.some((w) => w.includes(literal)), `${label} ${c.name} ${literal}`).toBe(false);
    }),
  );
  if (diagnosticsFirst) {
    expect(result.diagnostics, label).toEqual(whole.diagnostics);
    expect(unparsed(value), `${label}: diagnostics read parse every chain`).toBe(0);
  } else {
    for (const t of [...value.tables].reverse()) for (const c of [...t.chains].reverse()) void c.rules;
  }
  expect(plain(value), label).toEqual(plain(whole.value));
  expect(value, label).toEqual(whole.value);
  const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  expect(json(value), label).toBe(json(whole.value));
  expect(result.diagnostics, label).toEqual(whole.diagnostics);
  expect(unparsed(value), label).toBe(0);
}

describe('iptables-save parsed per chain on first read', () => {
  const all = dumps();

  it('covers the labs and the generated captures, and defers their chains', async () => {
    expect(all.filter((d) => d.label.startsWith('lab-')).length).toBeGreaterThanOrEqual(2);
    for (const d of all.filter((x) => x.label.startsWith('generated') || x.label.startsWith('lab-iptables'))) {
      const { value } = await lazy(lineCut(d.text, 1 << 20));
      const withRules = value.tables.flatMap((t) => t.chains).filter((c) => chainRuleCount(c) > 0).length;
      expect(withRules, d.label).toBeGreaterThan(5);
      expect(unparsed(value), d.label).toBe(withRules);
    }
  });

  it.each([300, 1 << 20])('line-aligned pieces of about %i characters: the one-pass parse, facts first', async (size) => {
    for (const d of all) await expectEqual(d.label, lineCut(d.text, size));
  });

  it('diagnostics read before any rule: complete, every chain parsed', async () => {
    for (const d of all) await expectEqual(d.label, lineCut(d.text, 4096), { family: 'ipv4' }, true);
  });

  it('reading the proxy mode and the header notes of a kube-proxy dump builds no per-Service chain', async () => {
    for (const d of all.filter((x) => x.label.startsWith('generated'))) {
      const { value } = await lazy(lineCut(d.text, 4096));
      const before = unparsed(value);
      expect(detectProxyMode(snapshotOf(value)).mode, d.label).toBe('iptables');
      expect(unparsed(value), d.label).toBe(before);
      expect(staleRejectsOnIpvs(snapshotOf(value)), d.label).toEqual([]);
      rulesMissingTheirMark(value);
      // Only the chains holding kube-proxy's marked-rule comments (KUBE-POSTROUTING, KUBE-FORWARD, …) are parsed.
      expect(before - unparsed(value), d.label).toBeLessThanOrEqual(4);
      const parsed = value.tables.flatMap((t) => t.chains).filter((c) => chainLineFacts(c) === undefined && chainRuleCount(c) > 0);
      expect(parsed.every((c) => !/^KUBE-(SVC|SEP|SVL|EXT|FW)-/.test(c.name)), d.label).toBe(true);
    }
  });

  it("a chain's line facts are one object kept by the chain till its rules are built, then let go", async () => {
    const d = all.find((x) => x.label.startsWith('generated'))!;
    const { value } = await lazy(lineCut(d.text, 4096));
    const reference = parseIptablesSave(d.text, 'iptables-save', { family: 'ipv4' }).value;
    const chains = value.tables.flatMap((t) => t.chains).filter((c) => chainLineFacts(c) !== undefined);
    expect(chains.length).toBeGreaterThan(100);
    // What the chain keeps besides its fields: symbol-keyed, not enumerable (spread, keys and deep equality do not see it).
    const slotValues = (c: IptablesChain) => Object.getOwnPropertySymbols(c).map((s) => (c as unknown as Record<symbol, unknown>)[s]);
    for (const c of chains.slice(0, 50)) {
      const facts = chainLineFacts(c)!;
      expect(chainLineFacts(c)).toBe(facts);
      expect(slotValues(c)).toEqual([facts]);
      expect(Object.getOwnPropertySymbols(c).some((s) => Object.prototype.propertyIsEnumerable.call(c, s))).toBe(false);
      const table = value.tables.find((t) => t.chains.includes(c))!.name;
      const eager = reference.tables.find((t) => t.name === table)!.chains.find((x) => x.name === c.name)!;
      expect(facts.ruleCount).toBe(eager.rules.length);
      expect(c.rules).toEqual(eager.rules);
      expect(chainLineFacts(c)).toBeUndefined();
      expect(slotValues(c)).toEqual([undefined]);
      expect(c).toEqual(eager);
    }
    // Rules assigned before any read: the chain keeps them and lets its source go too.
    const assigned = chains[50]!;
    (assigned as { rules: IptablesChain['rules'] }).rules = [];
    expect(chainLineFacts(assigned)).toBeUndefined();
    expect(slotValues(assigned)).toEqual([undefined]);
    expect(assigned.rules).toEqual([]);
  });

  it('pieces cut anywhere, a CRLF dump with a BOM and multi-byte comments', async () => {
    const generated = all.find((d) => d.label.startsWith('generated 80'))!.text;
    for (const size of [7, 1000]) await expectEqual(`cut every ${size}`, cut(generated, size));
    const crlf = '\ufeff' + generated.replaceAll('--comment "', '--comment "ノ😀é ').replaceAll('\n', '\r\n');
    for (const size of [64, 4096]) await expectEqual(`CRLF + BOM in ${size}`, lineCut(crlf, size));
    // The first pass stays lazy on CRLF lines.
    expect(unparsed((await lazy(lineCut(crlf, 4096))).value)).toBeGreaterThan(5);
  });

  const block = [
    '# Generated by iptables-save v1.8.9 (nf_tables) on Sat Mar  9 17:33:03 2024',
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-SVC-A - [0:0]',
    ':KUBE-SEP-A - [0:0]',
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A KUBE-SERVICES -d 10.96.0.1/32 -p tcp -m comment --comment "default/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-A',
    '-A KUBE-SVC-A -m comment --comment "default/a:http -> 10.244.0.5:80" -j KUBE-SEP-A',
    '-A KUBE-SEP-A -p tcp -m comment --comment "default/a:http" -m tcp -j DNAT --to-destination 10.244.0.5:80',
    'COMMIT',
    '*filter',
    ':INPUT ACCEPT [5:300]',
    ':KUBE-FIREWALL - [0:0]',
    '-A INPUT -j KUBE-FIREWALL',
    '-A KUBE-FIREWALL -m mark --mark 0x8000/0x8000 -j DROP',
    'COMMIT',
    '',
  ].join('\n');
  const edit = (from: string, to: string) => block.replace(from, to);
  const shapes: [string, string, IptablesParseOptions?][] = [
    ['the plain block', block],
    ['counters on rules (-c)', block.replaceAll('\n-A ', '\n[12:3456] -A ')],
    ['a counter above 2^64−1 (a late warning)', edit('-A KUBE-SVC-A', '[99999999999999999999999:1] -A KUBE-SVC-A')],
    ['non-canonical counters [01:0]', edit('-A KUBE-SVC-A', '[01:0] -A KUBE-SVC-A')],
    ['bad counters on a rule (an unknown line, one pass)', edit('-A KUBE-SVC-A', '[x:1] -A KUBE-SVC-A')],
    ['an unknown option (a late warning)', edit('--dport 80', '--dport 80 --bogus 1')],
    ['a jump to a chain that does not exist (unknown-target, late)', edit('-j KUBE-SEP-A', '-j KUBE-SEP-MISSING')],
    ['a garbage line inside a table', edit('COMMIT\n*filter', 'garbage here\nCOMMIT\n*filter')],
    ['a shell prompt line', edit('COMMIT\n*filter', 'root@node:~# iptables-save\nCOMMIT\n*filter')],
    ['an undeclared chain', edit(':KUBE-SEP-A - [0:0]\n', '')],
    ['a chain declared twice', edit(':KUBE-SEP-A - [0:0]', ':KUBE-SEP-A - [0:0]\n:KUBE-SEP-A - [0:0]')],
    ['a per-Service chain left empty', edit(':KUBE-SEP-A - [0:0]', ':KUBE-SEP-A - [0:0]\n:KUBE-SVC-EMPTY - [0:0]')],
    ['an -I line (one pass)', edit('-A KUBE-SVC-A', '-I KUBE-SVC-A 1 -j RETURN\n-A KUBE-SVC-A')],
    ['-N / -X lines (one pass)', block + '-N X\n-X X\n'],
    ['a rule outside any table (one pass)', block + '-A KUBE-SVC-A -j RETURN\n'],
    ['a chain whose rules are split (one pass)', edit('-A KUBE-SEP-A', '-A KUBE-SERVICES -j RETURN\n-A KUBE-SEP-A')],
    ['a quoted chain name (one pass)', edit('-A KUBE-SVC-A -m', '-A "KUBE-SVC-A" -m')],
    ['two spaces after -A (one pass)', edit('-A KUBE-SVC-A -m', '-A  KUBE-SVC-A -m')],
    ['a tab after the chain name', edit('-A KUBE-SVC-A -m', '-A KUBE-SVC-A\t-m')],
    ['an indented rule (one pass)', edit('-A KUBE-SVC-A -m', '  -A KUBE-SVC-A -m')],
    ['--match-set in a comment', edit('"default/a:http -> 10.244.0.5:80"', '"--match-set KUBE-X dst"')],
    ['marked-rule comments, one without its mark', edit(':KUBE-SEP-A - [0:0]', ':KUBE-SEP-A - [0:0]\n:KUBE-POSTROUTING - [0:0]').replace('COMMIT\n*filter', '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE\nCOMMIT\n*filter')],
    ['an affinity rule', edit('-A KUBE-SVC-A -m comment', '-A KUBE-SVC-A -m comment --comment "default/a:http -> 10.244.0.5:80" -m recent --name KUBE-SEP-A --mask 255.255.255.255 --rsource --rcheck --seconds 60 --reap -j KUBE-SEP-A\n-A KUBE-SVC-A -m comment')],
    ['IPVS mode: KUBE-CLUSTER-IP and a stale REJECT', edit('-A KUBE-SERVICES -d', '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT\n-A KUBE-SERVICES -d').replace(':KUBE-FIREWALL - [0:0]', ':KUBE-FIREWALL - [0:0]\n:KUBE-SERVICES - [0:0]').replace('COMMIT\n', 'COMMIT\n').replace('-A KUBE-FIREWALL -m mark', '-A KUBE-SERVICES -d 10.96.0.9/32 -p tcp -m comment --comment "default/x:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable\n-A KUBE-FIREWALL -m mark')],
    ['an IPVS-mode set match', edit('-A KUBE-SERVICES -d', '-A KUBE-SERVICES -m set --match-set KUBE-CLUSTER-IP dst,dst -j KUBE-MARK-MASQ\n-A KUBE-SERVICES -d')],
    ['a set match glued by quotes', edit('-A KUBE-SERVICES -d', '-A KUBE-SERVICES -m set --match"-set" KUBE-CLUSTER-IP dst,dst -j ACCEPT\n-A KUBE-SERVICES -d')],
    ['a set match behind an escape', edit('-A KUBE-SERVICES -d', '-A KUBE-SERVICES -m set "--match\\-set" KUBE-CLUSTER-IP dst,dst -j ACCEPT\n-A KUBE-SERVICES -d')],
    ['an unterminated quote', edit('"default/a:http"', '"default/a:http')],
    ['no COMMIT at the end', block.slice(0, block.lastIndexOf('COMMIT'))],
    ['a table started before COMMIT', edit('COMMIT\n*filter', '*filter')],
    ['an unknown table', block.replace('*filter', '*bogus')],
    ['stderr\'s legacy warning on its own line (one pass)', block + '# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n'],
    ['stderr\'s legacy warning cutting a line (one pass)', edit('-A KUBE-SVC-A -m comment', '-A KUBE-SVC-A -m # Warning: iptables-legacy tables present, use iptables-legacy-save to see them\ncomment')],
    ['a BOM', '\ufeff' + block],
    ['CRLF', block.replaceAll('\n', '\r\n')],
    ['empty', ''],
    ['list-rules (-S) (one pass)', '-P INPUT ACCEPT\n-N KUBE-X\n-A KUBE-X -j DROP\n', { table: 'filter' }],
    ['a fragment, no *table line (one pass)', '-A KUBE-SVC-A -j KUBE-SEP-A\n', { table: 'nat' }],
    ['over 1,000 diagnostics, late ones among them', block.replace('COMMIT\n*filter', 'garbage\n'.repeat(600) + '-A KUBE-SEP-A -j RETURN --bogus 1\n'.repeat(3) + 'garbage\n'.repeat(600) + 'COMMIT\n*filter')],
    ['over 1,000 diagnostics, none late', block.replace('COMMIT\n*filter', 'garbage\n'.repeat(1200) + 'COMMIT\n*filter')],
  ];

  it.each(shapes)('%s: the one-pass parse', async (_label, text, options) => {
    for (const size of [1, 40, 1 << 20]) {
      await expectEqual(`${_label} in ${size}`, lineCut(text, size), options ?? { family: 'ipv4' });
      await expectEqual(`${_label} in ${size}, diagnostics first`, lineCut(text, size), options ?? { family: 'ipv4' }, true);
    }
  });

  it('stays lazy on the shapes it knows, and hands the others to the one-pass parse', async () => {
    const deferred = async (text: string) => unparsed((await lazy(lineCut(text, 1 << 20))).value) > 0;
    for (const [label, text] of shapes) {
      const expected = !/one pass/.test(label) && label !== 'empty';
      expect(await deferred(text), label).toBe(expected);
    }
  });

  it('a line whose words are regular: every word the tokenizer reads is plain text of the line', () => {
    const lines = [
      '-A X -m set --match-set KUBE-A dst -j ACCEPT',
      '-A X -m set --match"-set" KUBE-A dst',
      '-A X -m set "--match-set" KUBE-A dst',
      '-A X -m set "--matc"h-set KUBE-A dst',
      '-A X -m set "--match\\-set" KUBE-A dst',
      '-A X -m set "--match-set',
      '-A X -m comment --comment "a b" -j ACCEPT',
      '-A X -m comment --comment "a" -m comment --comment "b"',
      '-A X -m comment --comment ""  -j DROP',
      '-A X\t-m comment --comment "x\ty" -j DROP',
      '-A X -j DROP',
    ];
    const buf = new TokenBuffer();
    let regular = 0;
    for (const line of lines) {
      const count = tokenizeRange(line, 0, line.length, line, buf);
      const plainText = buf.words.slice(0, count).every((w) => line.includes(w));
      if (!lineWordsIrregular(line)) {
        regular++;
        expect(plainText, line).toBe(true);
      }
    }
    expect(regular).toBe(7);
    for (const i of [1, 3, 4, 5]) expect(lineWordsIrregular(lines[i]!), lines[i]).toBe(true);
  });
});

describe('a replay reads iptables-save per chain', () => {
  it.each(['lab-iptables', 'lab-cilium'])('%s: the staged load equals the one-shot snapshot, show rules -o json the same', async (lab) => {
    expect(piecedProbes()).toEqual(expect.arrayContaining(['iptables-save']));
    const transport = new ReplayTransport(fixtureDir(lab));
    const runs = await runProbes(transport, { stdoutAsPieces: piecedProbes() });
    const base = { apiText: transport.apiText()!, source: { kind: 'replay' as const, label: lab, live: false }, capturedAt: runs[0]!.result.startedAt };
    const pieced = { ...base, runs };
    const done = await completeSnapshot(pieced, buildFirstSnapshot(pieced), { chunkChars: 300 });
    const once = buildSnapshot({ ...base, runs: await runProbes(transport, {}) });
    const lazyRules = done.iptables?.value;
    expect(lazyRules?.tables.length).toBeGreaterThan(0);
    expect(detectProxyMode(done)).toEqual(detectProxyMode(once));
    expect(iptablesDumpNotes(done)).toEqual(iptablesDumpNotes(once));
    if (lab === 'lab-iptables') expect(unparsed(lazyRules!)).toBeGreaterThan(0);
    for (const format of ['json', 'text'] as const) expect(showRules(done, format), format).toBe(showRules(once, format));
    expect(done).toEqual(once);
  });
});

/**
 * The Rules pane's virtualised rows (rules-view's chainListIndex/chainRowIndex, filteredRows,
 * lazyRows, and rulesView on top of them) answer exactly what eagerly built rows filtered by
 * `text.toLowerCase().includes(filter.toLowerCase())` would: same rows, same order, for any
 * filter, including narrowing and widening sequences and non-ASCII or regex-special text.
 */
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { chainRowIndex, describeMatches, describeTarget, filteredRows, lazyRows, type RowIndex } from '../../src/analysis/rules-view.js';
import { countByReplySource } from '../../src/analysis/conntrack-nat.js';
import { iptablesNftTables, nftChainRows, nftEndpointCountLookup, nftEndpointCounts, nftSetRows, tableLabel } from '../../src/analysis/nft-view.js';
import { findChain, type IptablesRuleset, type IptablesTableKey } from '../../src/model/iptables.js';
import { chainsByHook, findChain as findNftChain } from '../../src/model/nftables.js';
import { formatExpr } from '../../src/parsers/nft-format-expr.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { rowMatcher } from '../../src/text/row-filter.js';
import { staticSession } from '../../src/collect/session.js';
import { initialUiState, type RulesLocation, type UiState } from '../../src/ui/state.js';
import { rulesList, rulesView } from '../../src/ui/views.js';
import { catalog, fillArgv, probe } from '../../src/sources/catalog.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';

function generatedSnapshot(services: number, seed: string) {
  const world = generateWorld({ services, endpoints: 3, seed, modes: ['iptables'], conntrack: 10 });
  const runs: ProbeRun[] = [...modeOutputs(world, 'iptables')].map(([id, stdout]) => {
    const argv = fillArgv(probe(id).argv, catalog().params, {});
    return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-02-02T11:00:00.000Z', durationMs: 1 } };
  });
  return buildSnapshot({ runs, apiText: world.apiText, source: { kind: 'replay', label: 'gen', live: false }, capturedAt: '2026-02-02T11:00:00.000Z' });
}

const naive = (text: string, filter: string) => text.toLowerCase().includes(filter.toLowerCase());
const all = <T>(rows: { readonly length: number; slice(start?: number, end?: number): T[] }) => rows.slice(0, rows.length);
const openedOn = (location: RulesLocation): UiState => ({ ...initialUiState, pane: 'rules', rulesStack: [{ kind: 'chains' }, location] });
const onList: UiState = { ...initialUiState, pane: 'rules' };

describe('Rules pane chain list, virtualised', () => {
  const snapshot = generatedSnapshot(30, 'lazy');
  const session = staticSession(snapshot).getState();
  const ruleset = snapshot.iptables!.value!;
  // What the pane listed when it built every row: every chain of every table, with totals.
  const expected = ruleset.tables.flatMap((t) =>
    t.chains.map((c) => ({
      ruleset: 'iptables',
      kind: 'chain',
      table: t.name,
      name: c.name,
      detail: '',
      policy: c.policy,
      count: c.rules.length,
      packets: c.rules.reduce((s, r) => s + (r.counters?.packets ?? 0n), 0n),
      bytes: c.rules.reduce((s, r) => s + (r.counters?.bytes ?? 0n), 0n),
    })),
  );

  it('holds every chain, in dump order, with rule counts and counter totals', () => {
    const view = rulesView(snapshot, session, onList, '', 'en');
    if (view.kind !== 'chains') throw new Error(`expected the chain list, got ${view.kind}`);
    expect(expected.length).toBeGreaterThan(100);
    expect(all(view.rows)).toEqual(expected);
    expect(view.rows.at(expected.length - 1)).toEqual(expected[expected.length - 1]);
    expect(view.rows.at(expected.length)).toBeUndefined();
  });

  // What a chain holds, as its rules show inside it (comment, matches, target).
  const heldText = (table: string, chain: string) =>
    findChain(ruleset, table as IptablesTableKey, chain)!.rules.map((r) => `${r.comment ?? ''} ${describeMatches(r)} ${describeTarget(r)}`);

  it('filters on `table chain` or what the chain holds, like a case-insensitive substring, while typing and deleting', () => {
    for (const filter of ['K', 'KU', 'kube-svc', 'kube-sv', 'nat kube-sep', 'NAT KUBE-SEP', 'at k', '', 'zzz', 'filter', 'kube-svc', '10.244.', 'DNAT --to', 'svc-x']) {
      const view = rulesView(snapshot, session, onList, filter, 'en');
      if (view.kind !== 'chains') throw new Error(`expected the chain list, got ${view.kind}`);
      const want = expected.filter((r) => naive(`${r.table} ${r.name}`, filter) || heldText(r.table, r.name).some((t) => naive(t, filter)));
      expect(all(view.rows), filter).toEqual(want);
    }
  });

  it('takes a regex and ! over names and held text: the inverse keeps the chains that hold no match at all', () => {
    for (const filter of ['-d 10\\.96\\.\\d+', 'tcp dpt|--dport', '!KUBE-SEP', '!10\\.244\\.', '!^$']) {
      const view = rulesView(snapshot, session, onList, filter, 'en');
      if (view.kind !== 'chains') throw new Error(`expected the chain list, got ${view.kind}`);
      const inverse = filter.startsWith('!');
      const { test } = rowMatcher(inverse ? filter.slice(1) : filter);
      const want = expected.filter((r) => (test(`${r.table} ${r.name}`) || heldText(r.table, r.name).some(test)) !== inverse);
      expect(want.length, filter).toBeGreaterThan(0);
      expect(all(view.rows), filter).toEqual(want);
    }
  });
});

describe('Rules pane chain view, virtualised', () => {
  const snapshot = generatedSnapshot(30, 'lazy-chain');
  const session = staticSession(snapshot).getState();
  const ruleset = snapshot.iptables!.value!;
  const services = findChain(ruleset, 'nat', 'KUBE-SERVICES')!;
  const svcChain = ruleset.tables.find((t) => t.name === 'nat')!.chains.find((c) => c.name.startsWith('KUBE-SVC-') && c.rules.length > 2)!;

  it('builds each rule row from the model when asked: label, matches, target, jump, line', () => {
    const view = rulesView(snapshot, session, openedOn({ kind: 'chain', ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' }), '', 'en');
    if (view.kind !== 'chain') throw new Error(`expected a chain, got ${view.kind}`);
    expect(view.rows.length).toBe(services.rules.length);
    all(view.rows).forEach((row, i) => {
      const rule = services.rules[i]!;
      expect(row).toMatchObject({ index: rule.index, label: rule.comment ?? '', matches: describeMatches(rule), target: describeTarget(rule), line: rule.line, raw: rule.raw });
      expect(row.jumpTo).toBe(rule.target && findChain(ruleset, 'nat', rule.target.name) ? rule.target.name : null);
    });
  });

  it('gives a KUBE-SVC chain branch probabilities that add up to 1', () => {
    const view = rulesView(snapshot, session, openedOn({ kind: 'chain', ruleset: 'iptables', table: 'nat', chain: svcChain.name }), '', 'en');
    if (view.kind !== 'chain') throw new Error(`expected a chain, got ${view.kind}`);
    const rows = all(view.rows);
    const probs = rows.map((r) => r.probability).filter((p): p is number => p !== null);
    expect(probs.length).toBeGreaterThan(1);
    expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });

  it('filters on `label matches target` as the eager rows did, and the cursor row is the filtered one', () => {
    const full = rulesView(snapshot, session, openedOn({ kind: 'chain', ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' }), '', 'en');
    if (full.kind !== 'chain') throw new Error('expected a chain');
    const eager = all(full.rows);
    for (const filter of ['svc', 'SVC-1', 'svc-', 'kube-mark', '-d 10.', 'tcp', 'zzz', '']) {
      const view = rulesView(snapshot, session, openedOn({ kind: 'chain', ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES' }), filter, 'en');
      if (view.kind !== 'chain') throw new Error('expected a chain');
      const want = eager.filter((r) => naive(`${r.label} ${r.matches} ${r.target}`, filter));
      expect(all(view.rows), filter).toEqual(want);
      expect(view.rows.at(0)).toEqual(want[0]);
    }
  });

  it('says a chain is missing as before', () => {
    const view = rulesView(snapshot, session, openedOn({ kind: 'chain', ruleset: 'iptables', table: 'nat', chain: 'KUBE-NOPE' }), '', 'en');
    expect(view.kind).toBe('message');
    expect(chainRowIndex(ruleset, 'nat', 'KUBE-NOPE')).toBeNull();
    expect(chainRowIndex(ruleset, 'raw', 'PREROUTING')).toBeNull();
  });
});

/** An iptables-save nat table with `names` as chains and `rules` (`-A …` lines). */
function natRuleset(names: readonly string[], rules: readonly string[]): IptablesRuleset {
  const text = ['*nat', ...names.map((n) => `:${n} - [0:0]`), ...rules, 'COMMIT', ''].join('\n');
  return parseIptablesSave(text, 'test').value!;
}

describe('chain lookup by name', () => {
  const names = Array.from({ length: 40 }, (_, i) => `CHAIN-${i}`);

  it('finds the chain the model finds, for small and large tables, and only jumps to chains that exist', () => {
    for (const n of [3, 40]) {
      const ruleset = natRuleset(names.slice(0, n), ['-A CHAIN-0 -j CHAIN-2', '-A CHAIN-0 -j NOT-A-CHAIN', '-A CHAIN-0 -j RETURN']);
      for (const name of [...names.slice(0, n), 'CHAIN-99', '']) expect(chainRowIndex(ruleset, 'nat', name)?.chain ?? null).toBe(findChain(ruleset, 'nat', name) ?? null);
      const index = chainRowIndex(ruleset, 'nat', 'CHAIN-0')!;
      expect(Array.from({ length: index.length }, (_, i) => index.row(i).jumpTo)).toEqual(['CHAIN-2', null, null]);
    }
  });
});

describe('filteredRows and lazyRows', () => {
  const texts = ['İstanbul', 'Kelvin \u212a', 'a.b', 'a(b', 'x[y]z', 'back\\slash', 'cost $5', 'ÄÖ', 'plain PLAIN', 'star*', 'Straße', 'ΣΑΣ'];
  const index: RowIndex<string> = { length: texts.length, row: (i) => texts[i]!, text: (i) => texts[i]! };

  it('matches as the / language says (src/text/row-filter.ts): plain text like toLowerCase().includes, expressions as a case-insensitive RegExp, invalid ones literally', () => {
    const filters = ['i', 'I', 'k', 'K', '.', 'a(', '[y]', '\\', '$5', '\\$5', 'ä', 'ÄÖ', 'plain', 'PLAIN', '*', 'ß', 'σας', 'ς', 'i̇', '^', 'a.b', '!plain'];
    const key = {};
    for (const filter of filters) expect(all(filteredRows(index, key, filter)), filter).toEqual(texts.filter((t) => rowMatcher(filter).test(t)));
    // The matcher itself, on the cases a user types: literal text, a cut expression, an expression, an escape.
    expect(texts.filter((t) => rowMatcher('a(').test(t))).toEqual(['a(b']);
    expect(texts.filter((t) => rowMatcher('\\$5').test(t))).toEqual(['cost $5']);
    expect(texts.filter((t) => rowMatcher('^st').test(t))).toEqual(['star*', 'Straße']);
    expect(texts.filter((t) => rowMatcher('plain').test(t))).toEqual(texts.filter((t) => naive(t, 'plain')));
  });

  it('matches texts given as prefix and name like the joined text, for needles within or across the parts', () => {
    const prefixes = ['nat', 'ip kube-proxy', 'inet a b', 'İx', 'x \u212a', 'ΑΣ'];
    const names = ['KUBE-SERVICES', 'services', 'service-ips', 'b c d', 'İ', 's.x', 'ς', ''];
    const pairs = prefixes.flatMap((p) => names.map((n) => [p, n] as const));
    const split: RowIndex<string> = {
      length: pairs.length,
      row: (i) => `${pairs[i]![0]} ${pairs[i]![1]}`,
      text: (i) => `${pairs[i]![0]} ${pairs[i]![1]}`,
      parts: { prefix: (i) => pairs[i]![0], name: (i) => pairs[i]![1] },
    };
    const needles = ['nat k', 'proxy serv', 'ip kube-proxy s', 'y s', ' s', 'proxy ', 'p k', 'a b c', 'b c', ' b c d', 'i̇x', 'i̇', 'x i̇', 'x k', 'k', 'x', 'σ ς', 'ας', 's.x', 'b s.', 'nat kube-services ', ' ', 'zz z'];
    const key = {};
    for (const needle of needles) expect(all(filteredRows(split, key, needle)), needle).toEqual(pairs.map(([p, n]) => `${p} ${n}`).filter((t) => naive(t, needle)));
  });

  it('lazyRows answers at() and slice() as an array does', () => {
    const arr = ['a', 'b', 'c', 'd', 'e'];
    const lazy = lazyRows(arr.length, (i) => arr[i]!);
    for (const i of [0, 4, 5, -1, -5, -6, 1.7, -1.2, Number.NaN]) expect(lazy.at(i), String(i)).toBe(arr.at(i));
    const cuts: [number?, number?][] = [[], [2], [-3], [1, -1], [4, 2], [-100, 100], [0, 0], [Number.NaN, 2]];
    for (const [a, b] of cuts) expect(lazy.slice(a, b), `${a},${b}`).toEqual(arr.slice(a, b));
  });
});

describe('nftables chain list, set view and endpoint counts, virtualised', () => {
  const world = generateWorld({ services: 20, endpoints: 3, seed: 'lazy-nft', modes: ['nftables'], conntrack: 200 });
  const runs: ProbeRun[] = [...modeOutputs(world, 'nftables')].map(([id, stdout]) => {
    const argv = fillArgv(probe(id).argv, catalog().params, {});
    return { id, argv, status: 'ok', result: { argv, stdout, stderr: '', exitCode: 0, startedAt: '2026-02-02T11:00:00.000Z', durationMs: 1 } };
  });
  const snapshot = buildSnapshot({ runs, apiText: world.apiText, source: { kind: 'replay', label: 'gen', live: false }, capturedAt: '2026-02-02T11:00:00.000Z' });
  const session = staticSession(snapshot).getState();
  const nft = snapshot.nft!.value!;
  const skip = iptablesNftTables(snapshot);
  // No rule with a counter statement: no count (null), not 0 (kube-proxy's nft chains keep few counters).
  const sum = (rules: readonly { counters?: { packets: bigint; bytes: bigint } | null }[], k: 'packets' | 'bytes') =>
    rules.some((r) => r.counters) ? rules.reduce((s, r) => s + (r.counters?.[k] ?? 0n), 0n) : null;
  // The list as the pane built it eagerly: base chains in hook order, then per table its regular chains and sets.
  const expected = [
    ...chainsByHook(nft)
      .filter((h) => !skip.has(tableLabel(h.table)))
      .map(({ table, chain, base }) => ({ ruleset: 'nft', kind: 'chain', table: tableLabel(table), name: chain.name, detail: `${base.type} ${base.hook} ${base.priorityText}`, policy: base.policy, count: chain.rules.length, packets: sum(chain.rules, 'packets'), bytes: sum(chain.rules, 'bytes') })),
    ...nft.tables
      .filter((t) => !skip.has(tableLabel(t)))
      .flatMap((t) => [
        ...t.chains.filter((c) => !c.base).map((c) => ({ ruleset: 'nft', kind: 'chain', table: tableLabel(t), name: c.name, detail: '', policy: null, count: c.rules.length, packets: sum(c.rules, 'packets'), bytes: sum(c.rules, 'bytes') })),
        ...t.sets.map((s) => ({ ruleset: 'nft', kind: s.kind, table: tableLabel(t), name: s.name, detail: s.mapType ? `${s.type} : ${s.mapType}` : s.type, policy: null, count: s.elements.length, packets: null, bytes: null })),
      ]),
  ];
  const ipCount = (snapshot.iptables?.value?.tables ?? []).reduce((n, t) => n + t.chains.length, 0);

  it('splits each list text into its table and name parts, which filters without a space test separately', () => {
    for (const snap of [snapshot, generatedSnapshot(5, 'parts')]) {
      const list = rulesList(snap);
      expect(list.length).toBeGreaterThan(10);
      for (let i = 0; i < list.length; i++) expect(`${list.parts!.prefix(i)} ${list.parts!.name(i)}`).toBe(list.text(i));
    }
  });

  it('lists base chains in hook order, then each table’s chains and sets, and filters them like before', () => {
    expect(expected.length).toBeGreaterThan(60);
    for (const filter of ['', 'service-', 'SERVICE-ips', 'endpoint-', 'ip kube-proxy serv', 'kube-proxy', 'zzz', 'nat', '10.244.', 'dnat to']) {
      const view = rulesView(snapshot, session, onList, filter, 'en');
      if (view.kind !== 'chains') throw new Error(`expected the chain list, got ${view.kind}`);
      const nftRows = all(view.rows).filter((r) => r.ruleset === 'nft');
      // A chain or set is kept by its name or by a row it shows inside (label, matches, target).
      const inside = (r: (typeof expected)[number]) =>
        (r.kind === 'chain' ? nftChainRows(nft, r.table, r.name) : nftSetRows(nft, r.table, r.name))!.some((x) => naive(`${x.label} ${x.matches} ${x.target}`, filter));
      expect(nftRows, filter).toEqual(expected.filter((r) => naive(`${r.table} ${r.name}`, filter) || inside(r)));
      if (!filter) expect(view.rows.length).toBe(ipCount + expected.length);
    }
  });

  it('shows a map’s elements by position and filters on `comment key verdict`', () => {
    const table = nft.tables.find((t) => t.sets.some((s) => s.name === 'service-ips'))!;
    const set = table.sets.find((s) => s.name === 'service-ips')!;
    const at = openedOn({ kind: 'set', ruleset: 'nft', table: tableLabel(table), set: 'service-ips' });
    const view = rulesView(snapshot, session, at, '', 'en');
    if (view.kind !== 'chain') throw new Error(`expected a set view, got ${view.kind}`);
    const rows = all(view.rows);
    expect(rows.map((r) => r.matches)).toEqual(set.elements.map((e) => formatExpr(e.key)));
    expect(rows.every((r) => r.jumpTo !== null && findNftChain(table, r.jumpTo))).toBe(true);
    for (const filter of ['goto', 'SERVICE-', '10.', 'tcp', 'zzz']) {
      const filtered = rulesView(snapshot, session, at, filter, 'en');
      if (filtered.kind !== 'chain') throw new Error('expected a set view');
      expect(all(filtered.rows), filter).toEqual(rows.filter((r) => naive(`${r.label} ${r.matches} ${r.target}`, filter)));
    }
  });

  it('answers endpoint counts per chain as the whole-table count does', () => {
    const counts = countByReplySource(snapshot.conntrack!.value!.entries);
    for (const table of nft.tables) {
      const whole = nftEndpointCounts(table, counts);
      const lookup = nftEndpointCountLookup(table, counts);
      for (const chain of table.chains) expect(lookup.get(chain.name), chain.name).toBe(whole.get(chain.name));
      expect(lookup.get('endpoint-NOT-THERE/tcp/x')).toBeUndefined();
    }
    expect([...nft.tables].some((t) => nftEndpointCounts(t, counts).size > 0)).toBe(true);
  });
});

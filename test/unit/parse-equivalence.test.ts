/**
 * The speed-ups of the parsers (shared objects, caches, fast paths) change no value.
 * On captures from the generator (`npm run gen`, bench/gen), each parser's output is
 * compared with a reference built another way:
 * - the formatter prints the parsed model back to the very text it came from;
 * - iptables-save: the rules of the whole dump equal the rules of the same dump parsed
 *   in small pieces by fresh parsers (so nothing shared between rules or remembered
 *   from earlier lines leaks into a value);
 * - nft: `nft -j` and `nft list` of one ruleset give equal models.
 */
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import type { IptablesRule } from '../../src/model/iptables.js';
import type { NftRuleset } from '../../src/model/nftables.js';
import { formatIptablesSave } from '../../src/parsers/iptables-format.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { formatNftText } from '../../src/parsers/nft-format.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';

const SEEDS = ['s9', 'equiv-2'];

function outputs(seed: string, mode: 'iptables' | 'nftables'): Map<string, string> {
  return modeOutputs(generateWorld({ services: 60, endpoints: 3, seed, modes: [mode], conntrack: 10 }), mode);
}

/** A rule without its line number (a piece of the dump puts it on another line). */
function content(r: IptablesRule): Omit<IptablesRule, 'line'> {
  const { line: _line, ...rest } = r;
  return rest;
}

/**
 * The dump cut into pieces of `size` rules, each a complete dump of its own: the
 * header, every chain declaration of its table, the rules, COMMIT.
 */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  let head: string[] = [];
  let rules: string[] = [];
  const flush = () => {
    if (rules.length > 0) out.push([...head, ...rules, 'COMMIT', ''].join('\n'));
    rules = [];
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) head = [line];
    else if (line.startsWith(':')) head.push(line);
    else if (line.startsWith('[') || line.startsWith('-A')) {
      rules.push(line);
      if (rules.length === size) flush();
    } else if (line === 'COMMIT') flush();
  }
  return out;
}

describe('iptables-save: generated captures', () => {
  it.each(SEEDS)('format(parse(text)) is the text (seed %s)', (seed) => {
    const text = outputs(seed, 'iptables').get('iptables-save')!;
    const parsed = parseIptablesSave(text, 'gen', { family: 'ipv4' });
    expect(parsed.diagnostics).toEqual([]);
    expect(formatIptablesSave(parsed.value, { counters: true })).toBe(text);
  });

  it.each(SEEDS)('every rule equals the rule parsed in a small piece by a fresh parser (seed %s)', (seed) => {
    const text = outputs(seed, 'iptables').get('iptables-save')!;
    const whole = parseIptablesSave(text, 'gen', { family: 'ipv4' }).value;
    const wholeRules = whole.tables.flatMap((t) => t.chains.flatMap((c) => c.rules.map((r) => ({ table: t.name, r }))));
    const byRaw = new Map(wholeRules.map(({ table, r }) => [`${table} ${r.raw}`, r]));
    let compared = 0;
    for (const piece of pieces(text, 7)) {
      const part = parseIptablesSave(piece, 'piece', { family: 'ipv4' });
      expect(part.diagnostics).toEqual([]);
      for (const t of part.value.tables) {
        for (const c of t.chains) {
          for (const r of c.rules) {
            const w = byRaw.get(`${t.name} ${r.raw}`);
            expect(w, r.raw).toBeDefined();
            // The index differs when the piece starts mid-chain; everything else must not.
            expect({ ...content(w!), index: 0 }).toStrictEqual({ ...content(r), index: 0 });
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(wholeRules.length);
  });
});

/**
 * What `nft -j` and `nft list` of one ruleset both say: without handles (`nft list`
 * prints them only with `-a`) and without table and chain comments (nft 1.0.6's JSON
 * has none).
 */
function common(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(common);
  if (x === null || typeof x !== 'object') return x;
  const container = 'chains' in x || 'rules' in x;
  return Object.fromEntries(
    Object.entries(x)
      .filter(([k]) => k !== 'handle' && !(container && k === 'comment'))
      .map(([k, v]) => [k, common(v)]),
  );
}

describe('nft: generated captures', () => {
  it.each(SEEDS)('format(parse(text)) is the text (seed %s)', (seed) => {
    const text = outputs(seed, 'nftables').get('nft-text')!;
    const parsed = parseNftText(text, 'gen');
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.value.tables[0]!.chains.length).toBeGreaterThan(100);
    expect(formatNftText(parsed.value)).toBe(text);
  });

  it.each(SEEDS)('the JSON and the text of one ruleset give equal models (seed %s)', (seed) => {
    const out = outputs(seed, 'nftables');
    const fromText = parseNftText(out.get('nft-text')!, 'text');
    const fromJson = parseNftJson(out.get('nft-json')!, 'json');
    expect(fromJson.diagnostics).toEqual([]);
    // JSON rules carry handles: the model really holds them (so `common` strips something).
    expect(fromJson.value.tables[0]!.chains.some((c) => c.rules.some((r) => r.handle !== undefined))).toBe(true);
    expect(common(fromJson.value)).toStrictEqual(common(fromText.value as NftRuleset));
  });
});

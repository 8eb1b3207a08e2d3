/**
 * The compact nft model (issue 10, src/parsers/nft-share.ts): equal statements of
 * different rules are one frozen object, a rule's `raw` is printed on demand when it is
 * the formatter's text, and none of this changes what a reader of the model sees (own
 * enumerable `raw`, spread, JSON, deep equality, the formatter's text).
 */
import { describe, expect, it } from 'vitest';
import type { NftRule, NftRuleset } from '../../src/model/nftables.js';
import { formatRuleText } from '../../src/parsers/nft-format-expr.js';
import { formatNftText } from '../../src/parsers/nft-format.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { randomRuleset } from './nft-builders.js';

/** `nft list` text of one chain holding `rules` (one a line). */
function chainText(rules: readonly string[]): string {
  return `table ip t {\n\tchain c {\n${rules.map((r) => `\t\t${r}\n`).join('')}\t}\n}\n`;
}

function rulesOf(rs: NftRuleset): readonly NftRule[] {
  return rs.tables[0]!.chains[0]!.rules;
}

describe('nft model sharing', () => {
  it('equal statements of different rules are one frozen object; different ones are not', () => {
    const { value, diagnostics } = parseNftText(
      chainText([
        'ip saddr 10.0.0.1 meta l4proto tcp jump mark-for-masquerade',
        'ip saddr 10.0.0.2 meta l4proto tcp jump mark-for-masquerade',
        'meta l4proto tcp dnat to 10.0.0.1:80',
      ]),
      't',
    );
    expect(diagnostics).toEqual([]);
    const [a, b, c] = rulesOf(value) as [NftRule, NftRule, NftRule];
    expect(a.statements[1]).toBe(b.statements[1]); // meta l4proto tcp
    expect(a.statements[2]).toBe(b.statements[2]); // jump mark-for-masquerade
    expect(a.statements[0]).not.toBe(b.statements[0]);
    expect(Object.isFrozen(a.statements[1])).toBe(true);
    // The address value of the match is the one of the dnat.
    const match = a.statements[0]!;
    const nat = c.statements[1]!;
    expect(match.kind === 'match' && nat.kind === 'nat' && match.right === nat.addr).toBe(true);
  });

  it('a rule printed as nft prints it has its raw as an own enumerable property equal to the text', () => {
    const lines = ['ip daddr 10.96.0.1 tcp dport 443 counter packets 3 bytes 180 accept comment "x y"', 'ip saddr != 10.128.0.0/9 jump mark-for-masquerade'];
    const rules = rulesOf(parseNftText(chainText(lines), 't').value);
    rules.forEach((rule, i) => {
      expect(rule.raw).toBe(lines[i]);
      expect(Object.keys(rule)).toContain('raw');
      expect({ ...rule }.raw).toBe(lines[i]);
      expect(JSON.parse(JSON.stringify(rule, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).raw).toBe(lines[i]);
      expect(Object.getPrototypeOf(rule)).toBe(Object.prototype);
    });
    expect(rules[0]).toEqual({ ...rules[0] });
    expect(rules[0]!.counters).toEqual({ packets: 3n, bytes: 180n });
  });

  it('a rule whose text differs from the printed one keeps the text as read', () => {
    const rules = rulesOf(parseNftText(chainText(['iifname lo   accept']), 't').value);
    expect(formatRuleText(rules[0]!)).toBe('iifname "lo" accept');
    expect(rules[0]!.raw).toBe('iifname lo accept');
  });

  it('JSON rules print the raw the formatter writes, and models round-trip through text', () => {
    const ruleset = randomRuleset(7);
    const text = formatNftText(ruleset);
    const parsed = parseNftText(text, 't');
    expect(parsed.diagnostics).toEqual([]);
    expect(formatNftText(parsed.value)).toBe(text);
    for (const t of parsed.value.tables) for (const c of t.chains) for (const r of c.rules) expect(r.raw).toBe(formatRuleText(r));
    const json = JSON.stringify({
      nftables: [
        { metainfo: { version: '1.0.6', json_schema_version: 1 } },
        { table: { family: 'ip', name: 't', handle: 1 } },
        { chain: { family: 'ip', table: 't', name: 'c', handle: 2 } },
        ...[1, 2].map((h) => ({
          rule: { family: 'ip', table: 't', chain: 'c', handle: 2 + h, expr: [{ match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } }, { counter: { packets: 0, bytes: 0 } }, { accept: null }] },
        })),
      ],
    });
    const rules = rulesOf(parseNftJson(json, 'j').value);
    expect(rules.map((r) => r.raw)).toEqual(['meta l4proto tcp counter packets 0 bytes 0 accept', 'meta l4proto tcp counter packets 0 bytes 0 accept']);
    expect(rules[0]!.statements).toEqual(rules[1]!.statements);
    expect(rules[0]!.statements[0]).toBe(rules[1]!.statements[0]);
    expect(rules.map((r) => r.handle)).toEqual([3, 4]);
    expect(rules[0]!.counters).toEqual({ packets: 0n, bytes: 0n });
  });

  it('jump targets and chain names are one string; equal element values are one object', () => {
    const text = [
      'table ip t {',
      '\tmap m {',
      '\t\ttype ipv4_addr : verdict',
      '\t\telements = { 10.0.0.1 : goto endpoint-AAAAAAAA-ns/svc/tcp/http__10.1.0.1/80, 10.0.0.2 : goto endpoint-AAAAAAAA-ns/svc/tcp/http__10.1.0.1/80 }',
      '\t}',
      '\tchain endpoint-AAAAAAAA-ns/svc/tcp/http__10.1.0.1/80 {',
      '\t\tmeta l4proto tcp dnat to 10.1.0.1:80',
      '\t}',
      '}',
      '',
    ].join('\n');
    const { value, diagnostics } = parseNftText(text, 't');
    expect(diagnostics).toEqual([]);
    const [e1, e2] = value.tables[0]!.sets[0]!.elements;
    expect(e1!.value).toBe(e2!.value);
    expect(e1!.value).toEqual({ kind: 'verdict', verdict: 'goto', target: value.tables[0]!.chains[0]!.name });
    expect(formatNftText(value)).toContain('10.0.0.1 : goto endpoint-AAAAAAAA-ns/svc/tcp/http__10.1.0.1/80, 10.0.0.2 : goto');
  });
});

/**
 * The cursor lexer of nft text (src/parsers/nft-lexer.ts) against a plain reference
 * tokenizer written from the lexer's documented rules (one token object per token, as the
 * lexer was before it became a cursor), on corpus, generated and odd inputs; its look-ahead;
 * and the compacted rules' `raw` (nft-share.ts compares statement texts piece by piece).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { formatRuleText } from '../../src/parsers/nft-format-expr.js';
import { formatNftText } from '../../src/parsers/nft-format.js';
import { EOF, NftLexer, STRING, WORD, type NftToken } from '../../src/parsers/nft-lexer.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { randomRuleset, rng } from './nft-builders.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpusDir = path.resolve(repoRoot, '../shared/corpus/nft');

/** The reference: nft's word/punctuation/string/comment rules, one object per token. */
function referenceTokens(text: string): NftToken[] {
  const out: NftToken[] = [];
  const space = (c: string | undefined) => c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v';
  const stop = (c: string | undefined) => c === undefined || space(c) || '{};,\n"#'.includes(c);
  let p = 0;
  let line = 1;
  for (;;) {
    const c = text[p];
    if (c === undefined) {
      out.push({ type: 'eof', value: '', line, start: p, end: p });
      return out;
    }
    if (space(c)) p++;
    else if (c === '\\' && text[p + 1] === '\n') {
      p += 2;
      line++;
    } else if (c === '\n') {
      out.push({ type: 'nl', value: '\n', line, start: p, end: p + 1 });
      p++;
      line++;
    } else if (c === '#') {
      let end = text.indexOf('\n', p);
      if (end < 0) end = text.length;
      const handle = /^#\s*handle\s+(\d+)/.exec(text.slice(p, Math.min(end, p + 40)));
      if (handle?.[1]) {
        out.push({ type: 'handle', value: handle[1], line, start: p, end });
        p = end;
      } else if (text.startsWith('# xt_', p)) {
        let q = p + 5;
        while (q < end && !space(text[q])) q++;
        out.push({ type: 'xt', value: text.slice(p + 5, q), line, start: p, end: q });
        p = q;
      } else p = end;
    } else if ('{};,'.includes(c)) {
      out.push({ type: 'punct', value: c, line, start: p, end: p + 1 });
      p++;
    } else if (c === '"') {
      let q = p + 1;
      let value = '';
      for (;;) {
        const ch = text[q];
        if (ch === undefined || ch === '\n') {
          out.push({ type: 'string', value, line, start: p, end: q, unterminated: true });
          break;
        }
        if (ch === '\\' && q + 1 < text.length && text[q + 1] !== '\n') {
          value += text[q + 1];
          q += 2;
        } else if (ch === '"') {
          q++;
          out.push({ type: 'string', value, line, start: p, end: q });
          break;
        } else {
          value += ch;
          q++;
        }
      }
      p = q;
    } else {
      let q = p + 1;
      while (!stop(text[q])) q++;
      out.push({ type: 'word', value: text.slice(p, q), line, start: p, end: q });
      p = q;
    }
  }
}

/**
 * Every token of `text` as the cursor lexer reports it, peeking at each one first; a
 * look-ahead that moved the cursor, or saw another token than `next` then gives, is thrown.
 */
function lexerTokens(text: string): NftToken[] {
  const lex = new NftLexer(text);
  const out: NftToken[] = [];
  for (;;) {
    const kind = lex.kind;
    const token = lex.token();
    const aheadKind = kind === EOF ? EOF : lex.peekKind();
    const aheadText = lex.peekText();
    if (JSON.stringify(lex.token()) !== JSON.stringify(token)) throw new Error(`look-ahead moved the cursor at ${token.start}`);
    out.push(token);
    if (kind === EOF) return out;
    lex.next();
    if (lex.kind !== aheadKind || text.slice(lex.start, lex.end) !== aheadText) throw new Error(`look-ahead saw another token at ${lex.start}`);
  }
}

const ODD_INPUTS = [
  'add rule ip t c tcp dport 80 accept # handle 12\n',
  'add rule ip t c accept #\thandle\t\t7 trailing\n',
  'add rule ip t c accept #handle 9\n',
  'add rule ip t c accept # handle x\n# handle\n',
  'meta l4proto tcp # xt_conntrack counter accept\n# xt_\n',
  'ip saddr 10.0.0.1 \\\n  jump x\n',
  'comment "a \\" b" comment "c\\\\" "unterminated\n"also \\\nnot',
  'elements = {a,b;c}{}\r\n\f\v\tword',
  'ünïcödé wörd 🚀 "ü" \u00a0x\u00a0 \u0000nul',
  '#!/usr/sbin/nft -f\n# a comment line\n\n\nflush ruleset',
  'trailing\\',
  '',
];

function corpusTexts(): [string, string][] {
  try {
    return readdirSync(corpusDir).map((f) => [f, readFileSync(path.join(corpusDir, f), 'utf8')]);
  } catch {
    console.log(`nft corpus not found at ${corpusDir}: corpus inputs skipped`);
    return [];
  }
}

describe('nft cursor lexer', () => {
  it('gives the reference tokens on odd inputs', () => {
    for (const text of ODD_INPUTS) expect(lexerTokens(text), JSON.stringify(text)).toEqual(referenceTokens(text));
  });

  it('gives the reference tokens on corpus and generated rulesets', () => {
    const texts: string[] = corpusTexts().map(([, t]) => t);
    for (const seed of [1, 2, 3, 4, 5]) texts.push(formatNftText(randomRuleset(seed)));
    texts.push(modeOutputs(generateWorld({ services: 20, endpoints: 2, seed: 'lex', modes: ['nftables'], conntrack: 1 }), 'nftables').get('nft-text')!);
    for (const text of texts) expect(lexerTokens(text)).toEqual(referenceTokens(text));
  });

  it('gives the reference tokens on damaged text', () => {
    const random = rng(11);
    const base = formatNftText(randomRuleset(3));
    const bits = ['{', '}', '"', ';', '#', '\n', '\\\n', ' ', '# handle 5', '# xt_x', '\\', '\t'];
    for (let i = 0; i < 60; i++) {
      let text = base;
      for (let j = 0; j < 3; j++) {
        const at = Math.floor(random() * text.length);
        text = text.slice(0, at) + bits[Math.floor(random() * bits.length)]! + text.slice(at + Math.floor(random() * 5));
      }
      expect(lexerTokens(text)).toEqual(referenceTokens(text));
    }
  });

  it('compares words in place, hands out common words equal to their text, and records an unterminated string once', () => {
    const lex = new NftLexer('ip saddr "open\nmark-for-masquerade x');
    expect(lex.is('ip')).toBe(true);
    expect(lex.is('i')).toBe(false);
    expect(lex.peekIs('saddr')).toBe(true);
    expect(lex.peekValue()).toBe('saddr');
    expect(lex.value()).toBe('ip');
    lex.next();
    expect(lex.value()).toBe('saddr');
    // Looking at the unterminated string twice records it once.
    expect(lex.peekKind()).toBe(STRING);
    expect(lex.peekKind()).toBe(STRING);
    lex.next();
    expect(lex.value()).toBe('open');
    expect(lex.unterminatedStrings.map((t) => [t.value, t.line, t.start])).toEqual([['open', 1, 9]]);
    lex.next();
    lex.next();
    expect([lex.kind, lex.value(), lex.line]).toEqual([WORD, 'mark-for-masquerade', 2]);
    expect(lex.isPunct(0x7b)).toBe(false);
  });
});

describe('compacted rules keep raw as read unless it is the printed text', () => {
  const ODD_RULES = [
    'comment "only a comment"',
    'accept comment "x y"',
    'iifname lo   accept',
    'ip saddr 10.0.0.1 jump mark-for-masquerade',
    'ip saddr 10.0.0.1 jump mark-for-masquerade',
    'meta l4proto tcp dnat to 10.0.0.1:80',
    'meta l4proto tcp  dnat to 10.0.0.1:80',
    'ct state established,related accept',
    'ct state { established, related } accept',
    'meta mark 0x4000 accept',
    'meta mark 0x00004000 accept',
    'tcp dport 80 counter packets 1 bytes 2 accept',
  ];

  it('raw is printed on demand exactly when the text read is the formatter text', () => {
    const texts = [`table ip t {\n\tchain c {\n${ODD_RULES.map((r) => `\t\t${r}\n`).join('')}\t}\n}\n`];
    for (const seed of [1, 2, 3]) texts.push(formatNftText(randomRuleset(seed)));
    const corpus = corpusTexts();
    for (const [, t] of corpus) texts.push(t);
    let printed = 0;
    let kept = 0;
    for (const text of texts) {
      for (const table of parseNftText(text, 't').value.tables) {
        for (const chain of table.chains) {
          for (const rule of chain.rules) {
            const onDemand = Object.getOwnPropertyDescriptor(rule, 'raw')?.get !== undefined;
            expect(onDemand, rule.raw).toBe(rule.raw === formatRuleText(rule));
            if (onDemand) printed++;
            else kept++;
          }
        }
      }
    }
    expect(printed).toBeGreaterThan(10);
    // The odd spellings above keep their text (two of them); the corpus, when present, adds more.
    expect(kept).toBeGreaterThan(corpus.length > 0 ? 2 : 1);
  });
});

describe('redeclared chains and sets, before and after the first nft -f command', () => {
  /** `code@line` of each `redeclared` diagnostic of `lines`. */
  function redeclared(lines: readonly string[]): string[] {
    return parseNftText(`${lines.join('\n')}\n`, 't')
      .diagnostics.filter((d) => d.code === 'redeclared')
      .map((d) => `${d.message.split(' declared')[0]}@${d.line}`);
  }
  const block = (items: string) => `table ip t { ${items} }`;

  it('block form only: a chain or set declared again is noted, in its own table only', () => {
    expect(redeclared([block('chain a { accept }'), block('chain a { drop } set s { type ipv4_addr; }'), block('set s { type ipv4_addr; }'), 'table ip6 t { chain a { accept } }'])).toEqual([
      'table ip t@2',
      'chain ip t a@2',
      'table ip t@3',
      'set ip t s@3',
    ]);
  });

  it('a chain deleted by a command and declared again is still noted; one only added or used by commands is not', () => {
    expect(
      redeclared([
        block('chain a { accept } chain b { accept }'),
        'delete chain ip t a',
        block('chain a { accept }'),
        'add chain ip t c',
        'add rule ip t d accept',
        block('chain c { accept } chain d { accept } chain b { accept }'),
      ]),
    ).toEqual(['table ip t@3', 'chain ip t a@3', 'table ip t@6', 'chain ip t b@6']);
  });
});

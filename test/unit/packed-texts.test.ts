/**
 * src/parsers/packed-texts.ts: texts kept deflated in blocks come back exactly as pushed —
 * Latin-1 and wider text (Japanese, an emoji, lone surrogates), empty texts, blocks of one
 * text and of many, read in any order — and only full blocks are deflated.
 */
import { describe, expect, it } from 'vitest';
import { PACK_BLOCK_CHARS, PackedTexts } from '../../src/parsers/packed-texts.js';

const SAMPLES = [
  '{"rule": {"family": "ip", "table": "kube-proxy", "chain": "service-X", "handle": 7, "expr": []}}',
  '',
  'Latin-1: café ÿ',
  'サービス の ルール',
  'emoji 🙂 and a lone high \ud83d and low \ude42 surrogate',
  'x'.repeat(5000),
];

describe('PackedTexts', () => {
  it.each([1, 7, 100, 4096, Infinity])('blocks of %s characters: every text back exactly, in any order', (blockChars) => {
    const texts = Array.from({ length: 60 }, (_, i) => `${SAMPLES[i % SAMPLES.length]!}#${i}`);
    const packed = new PackedTexts(blockChars);
    for (const t of texts) packed.push(t);
    expect(packed.length).toBe(texts.length);
    for (let k = texts.length - 1; k >= 0; k--) expect(packed.at(k)).toBe(texts[k]);
    for (let k = 0; k < texts.length; k += 7) expect(packed.at(k)).toBe(texts[k]);
    const total = texts.reduce((n, t) => n + t.length, 0);
    if (blockChars === Infinity) expect(packed.packedChars).toBe(0);
    else expect(packed.packedChars).toBeGreaterThan(total - blockChars - 5010);
    packed.clear();
    expect(packed.length).toBe(0);
  });

  it('texts below a block stay as they are; a full block is deflated and let go', () => {
    const packed = new PackedTexts();
    packed.push('a'.repeat(PACK_BLOCK_CHARS - 1));
    expect(packed.packedChars).toBe(0);
    packed.push('bc');
    expect(packed.packedChars).toBe(PACK_BLOCK_CHARS + 1);
    expect(packed.at(1)).toBe('bc');
    expect(packed.at(0)).toBe('a'.repeat(PACK_BLOCK_CHARS - 1));
    packed.push('tail');
    expect(packed.packedChars).toBe(PACK_BLOCK_CHARS + 1);
    expect(packed.at(2)).toBe('tail');
  });
});

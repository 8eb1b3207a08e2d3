/**
 * src/parsers/packed-texts.ts: texts kept deflated in blocks come back exactly as pushed —
 * Latin-1 and wider text (Japanese, an emoji, lone surrogates), empty texts, blocks of one
 * text and of many, read in any order — and only full blocks are deflated.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PENDING_BLOCKS, PACK_BLOCK_CHARS, PackedTexts } from '../../src/parsers/packed-texts.js';

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

describe('PackedTexts deflated on the thread pool', () => {
  const texts = Array.from({ length: 200 }, (_, i) => `${SAMPLES[i % SAMPLES.length]!}#${i}`);

  it.each(['pool', 'thread'] as const)('deflated %s: every text back exactly before and after the deflates come back', async (where) => {
    const packed = new PackedTexts(500, where);
    for (const t of texts) packed.push(t);
    // Before any turn of the event loop: blocks still held as text are read as text.
    for (let k = texts.length - 1; k >= 0; k--) expect(packed.at(k)).toBe(texts[k]);
    await packed.settled();
    expect(packed.textBlocks).toBe(0);
    for (let k = 0; k < texts.length; k++) expect(packed.at(k)).toBe(texts[k]);
    if (where === 'pool') expect(packed.packedOnPool).toBeGreaterThan(0);
    else expect(packed.packedOnPool).toBe(0);
    expect(packed.packedOnPool + packed.packedOnThread).toBeGreaterThan(10);
  });

  it('without a turn of the event loop, at most MAX_PENDING_BLOCKS blocks are held as text: the rest are deflated on the thread', async () => {
    const packed = new PackedTexts(500, 'pool');
    for (const t of texts) packed.push(t);
    expect(packed.packedOnPool).toBe(MAX_PENDING_BLOCKS);
    expect(packed.packedOnThread).toBeGreaterThan(0);
    expect(packed.textBlocks).toBe(MAX_PENDING_BLOCKS);
    await packed.settled();
    expect(packed.textBlocks).toBe(0);
    // Turns between pushes: the deflates come back and the pool takes the next blocks.
    const turned = new PackedTexts(500, 'pool');
    for (const t of texts) {
      turned.push(t);
      await turned.settled();
    }
    expect(turned.packedOnThread).toBe(0);
    for (let k = 0; k < texts.length; k++) expect(turned.at(k)).toBe(texts[k]);
  });

  it('clear while deflates run: the late deflates are dropped, new texts read exactly', async () => {
    const packed = new PackedTexts(500, 'pool');
    for (const t of texts.slice(0, 40)) packed.push(t);
    packed.clear();
    await packed.settled();
    expect(packed.length).toBe(0);
    for (const t of texts) packed.push(t);
    await packed.settled();
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (let k = 0; k < texts.length; k++) expect(packed.at(k)).toBe(texts[k]);
    expect(packed.textBlocks).toBe(0);
  });
});

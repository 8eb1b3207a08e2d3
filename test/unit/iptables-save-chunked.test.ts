/**
 * parseIptablesSaveChunked: the same result as parseIptablesSave whatever the chunk size
 * (chunks end mid-line, mid-table, on the last byte), with the diagnostics' line numbers,
 * on the lab capture, on every corpus file, and on damaged text (BOM, CRLF, garbage,
 * truncation); and it really yields between chunks.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseIptablesSave, parseIptablesSaveChunked } from '../../src/parsers/iptables-save.js';
import { copyFixture } from '../helpers/fixtures.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus/iptables');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping the iptables corpus part: ${corpus} is absent`);

const lab = readFileSync(path.join(copyFixture('lab-iptables'), 'probes', 'iptables-save.stdout'), 'utf8');

async function chunked(text: string, chunkChars: number): Promise<{ result: ReturnType<typeof parseIptablesSave>; turns: number }> {
  let turns = 0;
  const result = await parseIptablesSaveChunked(text, 'iptables-save', { family: 'ipv4' }, chunkChars, async () => {
    turns++;
  });
  return { result, turns };
}

describe('parseIptablesSaveChunked', () => {
  it.each([1, 7, 100, 4096, 1 << 30])('equals the one-shot parse of the lab capture in chunks of %i characters', async (size) => {
    const { result, turns } = await chunked(lab, size);
    expect(result).toEqual(parseIptablesSave(lab, 'iptables-save', { family: 'ipv4' }));
    // A turn between chunks (none when one chunk holds it all); a chunk holds at least one line.
    if (size >= lab.length) expect(turns).toBe(0);
    else expect(turns).toBeGreaterThanOrEqual(Math.min(Math.floor(lab.length / size), lab.split('\n').length) / 2);
    expect(turns).toBeLessThan(lab.split('\n').length);
  });

  it('keeps the diagnostics and their line numbers on damaged text', async () => {
    const body = lab.split('\n');
    const damaged = '\ufeff' + [...body.slice(0, 5), 'garbage here', '\u0000\u0001binary', ...body.slice(5, 40)].join('\r\n');
    const one = parseIptablesSave(damaged, 'iptables-save', { family: 'ipv4' });
    expect(one.diagnostics.length).toBeGreaterThan(0);
    for (const size of [3, 64, 999]) expect((await chunked(damaged, size)).result).toEqual(one);
  });

  it.skipIf(!haveCorpus)('equals the one-shot parse on every corpus file', async () => {
    const files = readdirSync(corpus).sort();
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const text = readFileSync(path.join(corpus, f), 'utf8');
      const one = parseIptablesSave(text, 'iptables-save', { family: 'ipv4' });
      const { result } = await chunked(text, 257);
      expect({ f, ...result }).toEqual({ f, ...one });
    }
  });
});

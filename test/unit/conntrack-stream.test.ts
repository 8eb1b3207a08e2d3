import { createReadStream, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConntrack, parseConntrackStream } from '../../src/parsers/conntrack.js';
import { conntrackCorpusDir, ctLine } from './conntrack-builders.js';

const work = mkdtempSync(path.join(tmpdir(), 'nodescope-ct-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A capture exercising every path of the line state machine. */
function mixedCapture(): string {
  const dir = conntrackCorpusDir();
  const corpus = dir === undefined ? [] : readdirSync(dir).sort().map((f) => readFileSync(path.join(dir, f), 'utf8'));
  const split = ctLine({ head: 'udp      17 24' });
  return [
    ...corpus,
    `${split.slice(0, 40)}conntrack v1.4.7 (conntrack-tools): 7 flow entries have been shown.\n${split.slice(40)}\n`,
    `${ctLine({ l3: 'ipv6     10', orig: 'src=fd00:0000:0000:0000:0000:0000:0000:0001 dst=fd00::2 sport=1 dport=2', reply: 'src=fd00::2 dst=fd00::1 sport=2 dport=1' })}\r\n`,
    `   12\t${ctLine({ l3: 'ipv4     2' })}\n`,
    'garbage line\n',
    `${ctLine({ afterReply: '[ASSURED] mark=0 use=1 vendor=x' })}\n`,
    `${ctLine({ reply: '' })}\n`,
    '\n\n',
    `${ctLine()}${'conntrack v1.4.7 (conntrack-tools): 9 flow entries have been shown.'}`,
  ].join('');
}

/** Parses `text` written to a file and read back through readline (chunks of `chunk` bytes). */
async function viaFile(text: string, name: string, chunk?: number) {
  const file = path.join(work, name);
  writeFileSync(file, text);
  const input = createReadStream(file, { encoding: 'utf8', highWaterMark: chunk });
  return parseConntrackStream(createInterface({ input, crlfDelay: Infinity }), 'same-origin');
}

const haveCorpus = conntrackCorpusDir() !== undefined;

describe('parseConntrackStream', () => {
  const text = mixedCapture();

  it('gives exactly what parseConntrack gives, reading a file through readline in small chunks', async () => {
    const fromString = parseConntrack(text, 'same-origin');
    expect(await viaFile(text, 'mixed.txt', 64)).toEqual(fromString);
    // The capture really exercises the paths: entries, trailers, and each kind of diagnostic.
    // Two trailers are written here; the corpus, when beside the checkout, adds its own.
    expect(fromString.value.trailers.length).toBeGreaterThanOrEqual(haveCorpus ? 3 : 2);
    expect(new Set(fromString.diagnostics.map((d) => d.code))).toEqual(
      new Set(['unrecognized-line', 'line-number-prefix', 'stderr-interleaved', 'unknown-field', 'truncated']),
    );
  });

  it('accepts a plain iterable of lines, and items that hold several lines', async () => {
    const fromString = parseConntrack(text, 'o');
    const lines: string[] = [];
    for (let pos = 0; pos < text.length; ) {
      let nl = text.indexOf('\n', pos);
      if (nl < 0) nl = text.length;
      lines.push(text.slice(pos, nl));
      pos = nl + 1;
    }
    expect(await parseConntrackStream(lines, 'o')).toEqual(fromString);
    // Groups of three lines per item, each group ending with its newline.
    const groups: string[] = [];
    for (let k = 0; k < lines.length; k += 3) groups.push(`${lines.slice(k, k + 3).join('\n')}\n`);
    expect(await parseConntrackStream(groups, 'o')).toEqual(fromString);
  });

  it('agrees with the string parser on a large generated table', async () => {
    const rows: string[] = [];
    for (let k = 0; k < 20_000; k++) {
      const port = 1024 + (k % 60000);
      rows.push(
        ctLine({
          l3: 'ipv4     2',
          orig: `src=10.244.${k % 250}.${(k >> 8) % 250} dst=10.96.0.10 sport=${port} dport=53`,
          afterOrig: `packets=${k} bytes=${k * 60}`,
          reply: `src=10.244.1.4 dst=10.244.${k % 250}.${(k >> 8) % 250} sport=53 dport=${port}`,
          afterReply: `packets=${k} bytes=${k * 90} [ASSURED] mark=0 zone=0 use=2`,
        }),
      );
    }
    const big = `${rows.join('\n')}\n`;
    const fromString = parseConntrack(big, 'same-origin');
    expect(fromString.diagnostics).toEqual([]);
    expect(fromString.value.entries).toHaveLength(20_000);
    expect(fromString.value.entries[19_999]!.orig.packets).toBe(19_999n);
    const t0 = performance.now();
    const fromStream = await viaFile(big, 'big.txt');
    const t1 = performance.now();
    expect(fromStream).toEqual(fromString);
    console.log(`stream parse ${Math.round(t1 - t0)} ms, compare ${Math.round(performance.now() - t1)} ms`);
  });

  it('rejects when the line source itself fails (an I/O error), not on bad text', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield ctLine();
      throw new Error('EIO');
    }
    await expect(parseConntrackStream(failing(), 'o')).rejects.toThrow('EIO');
    await expect(parseConntrackStream(['\u0000\u0001binary', 'x'.repeat(100_000)], 'o')).resolves.toMatchObject({
      value: { entries: [] },
    });
  });
});

/**
 * The conntrack parse alone, as the staged replay load parses it (`parseConntrackStream`
 * over `chunksOfPieces(readFilePieces(file))`, src/collect/parts.ts and build-snapshot.ts),
 * beside its floors in the same process, alternated: the file read, the read + decode
 * (`readFilePieces` alone), `split('\n')` of each piece, and one `indexOf(' ')` walk over
 * every piece; and the byte parse (`parseConntrackBytes` over `readFileLineChunks`, as the
 * replay load reads it now) beside its floor, the file's line-aligned byte chunks with one
 * `indexOf(10)` walk. Prints one JSON line per round and the medians: process CPU ms (user +
 * sys) per step, the entries, and a hash of the row columns of each parse (to compare the
 * two parses and two builds' answers).
 *
 * Usage: `node --expose-gc dist/bench/ct-parse.js FILE [--runs N] [--only parse|bytes]`
 * (FILE e.g. `/tmp/bn2-bench/huge-…/iptables/probes/conntrack.stdout`).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { chunksOfPieces } from '../src/collect/chunks.js';
import { conntrackRows } from '../src/model/conntrack-ids.js';
import * as conntrack from '../src/parsers/conntrack.js';
import { parseConntrackStream } from '../src/parsers/conntrack.js';
import * as bundle from '../src/sources/bundle.js';
import { readFilePieces } from '../src/sources/bundle.js';
import { statSync } from 'node:fs';

const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

async function step(f: () => unknown): Promise<number> {
  gc();
  const c0 = cpuMs();
  await f();
  return Math.round(cpuMs() - c0);
}

function readOnly(file: string): number {
  const fd = openSync(file, 'r');
  const b = Buffer.allocUnsafe(4 * 1024 * 1024);
  let total = 0;
  for (;;) {
    const n = readSync(fd, b, 0, b.length, null);
    if (n === 0) break;
    total += n;
  }
  closeSync(fd);
  return total;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const file = args[0];
  if (!file) throw new Error('usage: ct-parse FILE [--runs N] [--only parse]');
  const runsAt = args.indexOf('--runs');
  const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 5;
  const only = args.indexOf('--only') >= 0 ? args[args.indexOf('--only') + 1] : undefined;
  const all: Record<string, number[]> = {};
  let hash = '';
  let entries = 0;
  const note = (k: string, v: number) => (all[k] ??= []).push(v);
  for (let r = 0; r < runs; r++) {
    const row: Record<string, number> = {};
    if (only === undefined) {
      row.read = await step(() => readOnly(file));
      row.decode = await step(() => {
        let n = 0;
        for (const p of readFilePieces(file)) n += p.length;
        return n;
      });
      row.split = await step(() => {
        let n = 0;
        for (const p of readFilePieces(file)) n += p.split('\n').length;
        return n;
      });
      row.indexOf = await step(() => {
        let n = 0;
        for (const p of readFilePieces(file)) {
          let i = p.indexOf(' ');
          while (i >= 0) {
            n++;
            i = p.indexOf(' ', i + 1);
          }
        }
        return n;
      });
    }
    const hashes: string[] = [];
    const parsers: [string, () => Promise<Awaited<ReturnType<typeof parseConntrackStream>>>][] = [];
    if (only === undefined || only === 'parse') parsers.push(['parse', () => parseConntrackStream(chunksOfPieces(readFilePieces(file), 512 * 1024), 'conntrack')]);
    // Absent in a build before the byte parse (the bench is also run on main's build).
    const bytes = (conntrack as { parseConntrackBytes?: (c: Iterable<Uint8Array>, o: string, x: { totalBytes: number }) => ReturnType<typeof parseConntrackStream> }).parseConntrackBytes;
    const chunks = (bundle as { readFileLineChunks?: (f: string) => Iterable<Uint8Array> }).readFileLineChunks;
    if (bytes && chunks && (only === undefined || only === 'bytes')) {
      if (only === undefined) {
        row.lines = await step(() => {
          let n = 0;
          for (const c of chunks(file)) {
            let i = c.indexOf(10);
            while (i >= 0) {
              n++;
              i = c.indexOf(10, i + 1);
            }
          }
          return n;
        });
      }
      parsers.push(['bytes', () => bytes(chunks(file), 'conntrack', { totalBytes: statSync(file).size })]);
    }
    for (const [name, parse] of parsers) {
      let table: Awaited<ReturnType<typeof parseConntrackStream>> | undefined;
      row[name] = await step(async () => {
        table = await parse();
      });
      const rows = conntrackRows(table!.value)!;
      entries = rows.length;
      const h = createHash('sha256');
      for (let i = 0; i < rows.length; i++) {
        const e = `${rows.ids.origSrc[i]} ${rows.ids.origDst[i]} ${rows.ids.replySrc[i]} ${rows.ids.replyDst[i]} ${rows.origSport(i)} ${rows.origDport(i)} ${rows.replySport(i)} ${rows.replyDport(i)} ${rows.state(i)} ${rows.timeout(i)} ${rows.flags(i).join()} ${rows.mark(i)} ${rows.counterTotal(i, 'packets')} ${rows.counterTotal(i, 'bytes')}\n`;
        h.update(e);
      }
      h.update(rows.ids.addresses.join(','));
      hashes.push(`${name}:${h.digest('hex').slice(0, 16)}`);
      table = undefined;
    }
    hash = hashes.join(' ');
    for (const [k, v] of Object.entries(row)) note(k, v);
    console.log(JSON.stringify({ round: r, ...row, hash }));
  }
  const med: Record<string, number> = {};
  for (const [k, v] of Object.entries(all)) med[k] = median(v);
  console.log(JSON.stringify({ file, runs, entries, hash, medianCpuMs: med, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }));
}

await main();

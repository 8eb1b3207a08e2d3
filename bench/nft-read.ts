/**
 * The nft -j read alone, old readers against new (issue 23): `parseNftJsonPiecesViaTree`
 * (one `JSON.parse` per batch of items, then the walk), `parseNftJsonPieces` (the direct
 * reader, src/parsers/nft-json-direct.ts) and `parseNftJsonLazyPieces` (rules located, each
 * chain built on first read: the replay's reader), each from the bundle file in pieces as
 * a replay reads it, or from the whole text as a live read gives it (`--whole`; not lazy).
 *
 * `node dist/bench/nft-read.js --file F [--file F …] [--runs N] [--whole] [--readers tree,direct,lazy] [--equal]`:
 * runs every reader N times interleaved (old, new, old, new…), each in a fresh `node`,
 * and prints the CPU (user + system of the child's read; for `lazy` the first pass, then
 * the CPU of building every chain after it), wall and peak RSS (`lazy`: before building
 * the chains), with the medians. `--equal`: reads each file with the tree and direct
 * readers (and the lazy one, every chain built) in one process and checks the models are
 * deep-equal and print the same JSON (chain by chain, as hashes), and that the diagnostics
 * are equal; exits 1 when not.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import type { ParseResult } from '../src/model/diagnostics.js';
import type { NftRuleset } from '../src/model/nftables.js';
import { nftMetainfoOf, parseNftJson, parseNftJsonLazyPieces, parseNftJsonPieces, parseNftJsonPiecesViaTree, parseNftJsonViaTree } from '../src/parsers/nft-json.js';
import { readFilePieces } from '../src/sources/bundle.js';

type Reader = 'tree' | 'direct' | 'lazy';

const CHUNK_CHARS = 512 * 1024;

/** One read of `file` by `reader`: the result and the CPU (ms) of the read alone. */
async function read(file: string, reader: Reader, whole: boolean): Promise<{ result: ParseResult<NftRuleset>; cpuMs: number; ms: number }> {
  const text = whole ? readFileSync(file, 'latin1') : undefined;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let result: ParseResult<NftRuleset>;
  if (text !== undefined) result = reader === 'tree' ? parseNftJsonViaTree(text, 'nft-json') : parseNftJson(text, 'nft-json');
  else {
    const parse = reader === 'tree' ? parseNftJsonPiecesViaTree : reader === 'lazy' ? parseNftJsonLazyPieces : parseNftJsonPieces;
    result = await parse(() => readFilePieces(file), 'nft-json', CHUNK_CHARS, async () => {});
  }
  const c = process.cpuUsage(c0);
  return { result, cpuMs: Math.round((c.user + c.system) / 1000), ms: Math.round(performance.now() - t0) };
}

/** Hashes of the ruleset's parts as JSON text (bigints as text): equal hashes, equal text, keys in the same order. */
function jsonHashes(r: ParseResult<NftRuleset>): string[] {
  const json = (x: unknown) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
  const hash = (s: string) => createHash('sha256').update(s).digest('hex');
  const out = [hash(json({ metainfo: nftMetainfoOf(r.value), diagnostics: r.diagnostics }))];
  for (const t of r.value.tables) {
    out.push(hash(json({ ...t, chains: t.chains.length, sets: t.sets.length })));
    for (const c of t.chains) out.push(hash(json(c)));
    for (const s of t.sets) out.push(hash(json(s)));
  }
  return out;
}

async function child(file: string, reader: Reader, whole: boolean): Promise<void> {
  const { result, cpuMs, ms } = await read(file, reader, whole);
  const rssMb = Math.round(process.resourceUsage().maxRSS / 1024);
  const c0 = process.cpuUsage();
  const rules = result.value.tables.reduce((n, t) => n + t.chains.reduce((m, c) => m + c.rules.length, 0), 0);
  const c = process.cpuUsage(c0);
  const laterCpuMs = Math.round((c.user + c.system) / 1000);
  process.stdout.write(`${JSON.stringify({ cpuMs, ms, rssMb, rules, laterCpuMs, diagnostics: result.diagnostics.length })}\n`);
}

async function equal(file: string, whole: boolean): Promise<boolean> {
  const tree = (await read(file, 'tree', whole)).result;
  const treeHashes = jsonHashes(tree);
  const direct = (await read(file, 'direct', whole)).result;
  const same = isDeepStrictEqual(direct.value, tree.value) && isDeepStrictEqual(direct.diagnostics, tree.diagnostics);
  const sameJson = isDeepStrictEqual(jsonHashes(direct), treeHashes);
  let lazyOk = true;
  let lazyNote = '';
  if (!whole) {
    const lazy = (await read(file, 'lazy', whole)).result;
    const lazySame = isDeepStrictEqual(lazy.value, tree.value) && isDeepStrictEqual(lazy.diagnostics, tree.diagnostics);
    const lazyJson = isDeepStrictEqual(jsonHashes(lazy), treeHashes);
    lazyOk = lazySame && lazyJson;
    lazyNote = `; lazy: deep-equal ${lazySame}, same JSON ${lazyJson}`;
  }
  const rules = tree.value.tables.reduce((n, t) => n + t.chains.reduce((m, c) => m + c.rules.length, 0), 0);
  console.log(`${file}: ${rules} rules, ${tree.diagnostics.length} diagnostics; deep-equal ${same}, same JSON ${sameJson}${lazyNote}`);
  return same && sameJson && lazyOk;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      file: { type: 'string', multiple: true },
      runs: { type: 'string', default: '3' },
      whole: { type: 'boolean', default: false },
      equal: { type: 'boolean', default: false },
      readers: { type: 'string', default: 'tree,direct' },
      child: { type: 'string' },
    },
  });
  const files = values.file ?? [];
  if (values.child) return child(files[0]!, values.child as Reader, values.whole);
  if (values.equal) {
    let ok = true;
    for (const f of files) ok = (await equal(f, values.whole)) && ok;
    process.exitCode = ok ? 0 : 1;
    return;
  }
  const script = fileURLToPath(import.meta.url);
  const readers = values.readers.split(',') as Reader[];
  console.log(`| file | reader | CPU ms (runs) | median CPU ms | median wall ms | peak RSS MB | then every chain built, CPU ms |\n|---|---|---|--:|--:|--:|--:|`);
  for (const file of files) {
    const runs: Record<Reader, { cpuMs: number; ms: number; rssMb: number; laterCpuMs: number }[]> = { tree: [], direct: [], lazy: [] };
    for (let i = 0; i < Number(values.runs); i++) {
      for (const reader of readers) {
        const args = [script, '--child', reader, '--file', file, ...(values.whole ? ['--whole'] : [])];
        const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
        if (r.status !== 0) throw new Error(`${reader} on ${file}: ${r.stderr}`);
        runs[reader].push(JSON.parse(r.stdout) as { cpuMs: number; ms: number; rssMb: number; laterCpuMs: number });
      }
    }
    for (const reader of readers) {
      const rs = runs[reader];
      console.log(
        `| ${file.split('/').slice(-4, -3)[0]} | ${reader} | ${rs.map((r) => r.cpuMs).join(' / ')} | ${median(rs.map((r) => r.cpuMs))} | ${median(rs.map((r) => r.ms))} | ${Math.max(...rs.map((r) => r.rssMb))} | ${median(rs.map((r) => r.laterCpuMs))} |`,
      );
    }
  }
}

await main();

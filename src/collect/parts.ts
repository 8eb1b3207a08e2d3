/**
 * The probe → parser → snapshot-part table. `commands/probes.yaml` names, per probe, the
 * parser that reads its stdout (`parser:`) and the snapshot part the parse fills (`part:`);
 * {@link PARSERS} maps each parser name to the functions of src/parsers/. Adding a format
 * is a parser plus a catalog entry (and a line here naming it).
 *
 * Each parser's module is imported when a run of its probe is about to be parsed
 * ({@link loadParsers}), not when this table loads: a command reading an iptables node does
 * not compile the nft or Cilium parsers. {@link parserOf} answers only for a loaded parser.
 */
import type { ParseResult } from '../model/diagnostics.js';
import type { SnapshotPart } from '../model/snapshot.js';
import { statSync } from 'node:fs';
import { BugError } from '../errors.js';
import { readFileLineChunks } from '../sources/bundle.js';
import type { ProbeRun } from '../sources/probe-runner.js';
import { catalog } from '../sources/catalog.js';
import { withTurns } from './chunks.js';

/** Gives the event loop a turn between pieces of work (keys and frames run meanwhile). */
export type Turn = () => Promise<void>;

/** One parser of the catalog's `parser:` names: how it reads a whole text, and in pieces when it can. */
export interface ParserEntry {
  /** The whole text at once. */
  readonly parse: (text: string, origin: string) => ParseResult<unknown>;
  /** The same result from a text read in line-aligned chunks of about `chunkChars`, a turn between them. */
  readonly chunked?: (text: string, origin: string, chunkChars: number, turn: Turn, chunks: (text: string) => AsyncIterable<string>) => Promise<ParseResult<unknown>>;
  /**
   * The same result from the stdout in pieces, never whole (a replay reads its bundle file
   * piece by piece); `joinedPieces`: the text is only joined when the parse is needed.
   */
  readonly pieces?: (pieces: () => Iterable<string>, origin: string, chunkChars: number, turn: Turn, chunks: (pieces: Iterable<string>) => AsyncIterable<string>) => Promise<ParseResult<unknown>>;
  readonly joinedPieces?: boolean;
  /**
   * The same result read from the stdout's file (`stdoutPath`, a replay: the file the pieces
   * are read from) as bytes, a turn between chunks: preferred to `pieces` when there is a file.
   */
  readonly file?: (path: string, origin: string, turn: Turn) => Promise<ParseResult<unknown>>;
  /**
   * The same result with parts of it parsed on first read (values equal once read; reading
   * `diagnostics` may parse the rest): what a one-shot reader of a few chains asks for
   * (`SnapshotInput.lazyRules`).
   */
  readonly lazy?: (text: string, origin: string) => ParseResult<unknown>;
}

/**
 * One parser of {@link PARSERS}: how to load its code, and what it can read, known before
 * the code loads (the probe plan and the staged load ask before any parse).
 */
export interface LazyParser {
  /** Imports the parser's module; resolves to its {@link ParserEntry}. */
  readonly load: () => Promise<ParserEntry>;
  /** The entry has `pieces` or `joinedPieces` (its probe's stdout is read in pieces: {@link piecedProbes}). */
  readonly pieced: boolean;
  /** The entry has `chunked` or `pieces` (the staged load parses it with turns between chunks). */
  readonly chunks: boolean;
}

/** A {@link LazyParser} of a module's functions; `pieced`/`chunks` as the entry's fields (test/unit/parts-table.test.ts holds them equal). */
function lazyParser<M>(load: () => Promise<M>, entryOf: (m: M) => ParserEntry, reads: { pieced?: boolean; chunks?: boolean } = {}): LazyParser {
  return { load: async () => entryOf(await load()), pieced: reads.pieced === true, chunks: reads.chunks === true };
}

const iptablesSave = () => import('../parsers/iptables-save.js');
const nftJson = () => import('../parsers/nft-json.js');
const conntrack = () => import('../parsers/conntrack.js');

/**
 * The parsers of the snapshot parts, by the name `commands/probes.yaml` gives them.
 * `bpftool-map` (Cilium's raw LB maps) is read as one set of dumps, not run by run: see
 * `lbPart` in build-snapshot.ts.
 */
export const PARSERS: Readonly<Record<string, LazyParser>> = {
  'iptables-save': lazyParser(
    iptablesSave,
    (m) => ({
      parse: (t, o) => m.parseIptablesSave(t, o, { family: 'ipv4' }),
      chunked: (t, o, size, turn) => m.parseIptablesSaveChunked(t, o, { family: 'ipv4' }, size, turn),
      pieces: (p, o, size, turn) => m.parseIptablesSaveLazyPieces(p, o, { family: 'ipv4' }, size, turn),
      lazy: (t, o) => m.parseIptablesSaveLazy(t, o, { family: 'ipv4' }),
    }),
    { pieced: true, chunks: true },
  ),
  'ip6tables-save': lazyParser(
    iptablesSave,
    (m) => ({
      parse: (t, o) => m.parseIptablesSave(t, o, { family: 'ipv6' }),
      chunked: (t, o, size, turn) => m.parseIptablesSaveChunked(t, o, { family: 'ipv6' }, size, turn),
      pieces: (p, o, size, turn) => m.parseIptablesSaveLazyPieces(p, o, { family: 'ipv6' }, size, turn),
      lazy: (t, o) => m.parseIptablesSaveLazy(t, o, { family: 'ipv6' }),
    }),
    { pieced: true, chunks: true },
  ),
  'nft-json': lazyParser(
    nftJson,
    (m) => ({
      parse: m.parseNftJson,
      chunked: (t, o, size, turn) => m.parseNftJsonLazyChunked(t, o, size, turn),
      // Chains' rules built on first read; the kept text is deflated (a tenth of its size), so
      // the staged load stays within its memory budget (issue 23).
      pieces: (p, o, size, turn) => m.parseNftJsonLazyPieces(p, o, size, turn),
      lazy: m.parseNftJsonLazy,
    }),
    { pieced: true, chunks: true },
  ),
  'nft-text': lazyParser(() => import('../parsers/nft-text.js'), (m) => ({ parse: m.parseNftText, joinedPieces: true }), { pieced: true }),
  conntrack: lazyParser(
    conntrack,
    (m) => ({
      parse: m.parseConntrack,
      chunked: (t, o, _size, _turn, chunks) => m.parseConntrackStream(chunks(t), o),
      pieces: (p, o, _size, _turn, chunks) => m.parseConntrackStream(chunks(p()), o),
      // The capture's bytes read in place (no 220 MB of strings), the columns sized from the file once.
      file: (path, o, turn) => m.parseConntrackBytes(withTurns(readFileLineChunks(path), turn), o, { totalBytes: statSync(path).size }),
    }),
    { pieced: true, chunks: true },
  ),
  ipvsadm: lazyParser(() => import('../parsers/ipvsadm.js'), (m) => ({ parse: m.parseIpvsadm })),
  ipset: lazyParser(() => import('../parsers/ipset.js'), (m) => ({ parse: m.parseIpsetList })),
  'cilium-status': lazyParser(() => import('../parsers/cilium-status.js'), (m) => ({ parse: m.parseCiliumStatus })),
  'cilium-bpf-lb-list': lazyParser(() => import('../parsers/cilium-bpf-lb-list.js'), (m) => ({ parse: m.parseCiliumBpfLbList })),
  'cilium-service-list': lazyParser(() => import('../parsers/cilium-service-list.js'), (m) => ({ parse: m.parseCiliumServiceList })),
  'xt-recent': lazyParser(() => import('../parsers/xt-recent.js'), (m) => ({ parse: m.parseXtRecent })),
  'cilium-ct': lazyParser(() => import('../parsers/cilium-ct.js'), (m) => ({ parse: m.parseCiliumCt })),
};

/** The entries loaded so far, by parser name. */
const loaded = new Map<string, ParserEntry>();

/**
 * Loads the parsers of probes `ids` (by their catalog `parser:`; ids without one in
 * {@link PARSERS} are skipped), so that {@link parserOf} answers for them. Cheap when they are loaded.
 */
export async function loadParsers(ids: Iterable<string>): Promise<void> {
  const parserOfId = new Map(catalog().probes.map((p) => [p.id, p.parser]));
  const names = new Set<string>();
  for (const id of ids) {
    const name = parserOfId.get(id);
    if (name !== undefined && PARSERS[name] && !loaded.has(name)) names.add(name);
  }
  if (names.size === 0) return;
  await Promise.all([...names].map(async (name) => void loaded.set(name, await PARSERS[name]!.load())));
}

/** Loads every parser of {@link PARSERS} (a test's set-up; a tool that parses any part). */
export async function loadAllParsers(): Promise<void> {
  await Promise.all(Object.entries(PARSERS).map(async ([name, p]) => void (loaded.has(name) || loaded.set(name, await p.load()))));
}

/** The name of the parser of the set of raw BPF LB map dumps (decoded together). */
export const LB_MAPS_PARSER = 'bpftool-map';

let cachedPartProbes: Readonly<Record<SnapshotPart, readonly string[]>> | undefined;

/**
 * The probes each {@link SnapshotPart} is parsed from, in the catalog's order (the first is
 * preferred: `ipvsadm-stats` before `ipvsadm`, `nft-json` before `nft-text`). A refresh
 * re-parses a part only when one of them was re-read. From the catalog's `part:` fields.
 */
export function partProbes(): Readonly<Record<SnapshotPart, readonly string[]>> {
  if (cachedPartProbes === undefined) {
    const out: Record<string, string[]> = {};
    for (const p of catalog().probes) if (p.part) (out[p.part] ??= []).push(p.id);
    cachedPartProbes = out as Record<SnapshotPart, readonly string[]>;
  }
  return cachedPartProbes;
}

/**
 * The parser entry of probe `id` (by its catalog `parser:`); undefined for one outside
 * {@link PARSERS}. Throws a BugError for a parser not loaded yet ({@link loadParsers} first):
 * answering undefined would read as "no parser" and leave the part empty.
 */
export function parserOf(id: string): ParserEntry | undefined {
  const name = catalog().probes.find((p) => p.id === id)?.parser;
  if (name === undefined || !PARSERS[name]) return undefined;
  const entry = loaded.get(name);
  if (!entry) throw new BugError(`parser ${name} (probe ${id}) used before it was loaded (parts.ts loadParsers)`);
  return entry;
}

/** The parse of probe `id`'s parser, looked up when a run is parsed (so only then must it be loaded). */
export function parseWith(id: string): (text: string, origin: string) => ParseResult<unknown> {
  return (text, origin) => parserOf(id)!.parse(text, origin);
}

/** Whether a run's stdout is parsed: it answered, or printed something (build-snapshot.ts `parseRunCached`); else no parser is called. */
export function isParsedRun(run: ProbeRun): boolean {
  return run.status === 'ok' || run.result.stdout.trim() !== '';
}

/** Whether probe `id` has a parser in {@link PARSERS} (by its catalog `parser:`), loaded or not. */
export function hasParser(id: string): boolean {
  const name = catalog().probes.find((p) => p.id === id)?.parser;
  return name !== undefined && PARSERS[name] !== undefined;
}

/** Whether probe `id`'s parser reads in chunks or pieces (`chunked` or `pieces`), known before it loads. */
export function parsesInChunks(id: string): boolean {
  const name = catalog().probes.find((p) => p.id === id)?.parser;
  return name !== undefined && PARSERS[name]?.chunks === true;
}

/**
 * The probes whose stdout the snapshot build reads in pieces when a transport can give
 * them so (a replay): those whose parser reads pieces or joins them only when needed, and
 * Cilium's raw LB maps (decoded entry by entry as read: `parseCiliumLbMapDumpPieces`).
 */
export function piecedProbes(): readonly string[] {
  return catalog()
    .probes.filter((p) => p.part && !p.onDemand && (PARSERS[p.parser]?.pieced || p.parser === LB_MAPS_PARSER))
    .map((p) => p.id);
}

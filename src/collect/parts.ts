/**
 * The probe → parser → snapshot-part table. `commands/probes.yaml` names, per probe, the
 * parser that reads its stdout (`parser:`) and the snapshot part the parse fills (`part:`);
 * {@link PARSERS} maps each parser name to the functions of src/parsers/. Adding a format
 * is a parser plus a catalog entry (and a line here naming it).
 */
import type { ParseResult } from '../model/diagnostics.js';
import type { SnapshotPart } from '../model/snapshot.js';
import { parseCiliumBpfLbList } from '../parsers/cilium-bpf-lb-list.js';
import { parseCiliumCt } from '../parsers/cilium-ct.js';
import { parseCiliumServiceList } from '../parsers/cilium-service-list.js';
import { parseCiliumStatus } from '../parsers/cilium-status.js';
import { statSync } from 'node:fs';
import { parseConntrack, parseConntrackBytes, parseConntrackStream } from '../parsers/conntrack.js';
import { parseIptablesSave, parseIptablesSaveChunked, parseIptablesSaveLazy, parseIptablesSaveLazyPieces } from '../parsers/iptables-save.js';
import { parseIpsetList } from '../parsers/ipset.js';
import { parseIpvsadm } from '../parsers/ipvsadm.js';
import { parseNftJson, parseNftJsonLazy, parseNftJsonLazyChunked, parseNftJsonLazyPieces } from '../parsers/nft-json.js';
import { parseNftText } from '../parsers/nft-text.js';
import { parseXtRecent } from '../parsers/xt-recent.js';
import { readFileLineChunks } from '../sources/bundle.js';
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
 * The parsers of the snapshot parts, by the name `commands/probes.yaml` gives them.
 * `bpftool-map` (Cilium's raw LB maps) is read as one set of dumps, not run by run: see
 * `lbPart` in build-snapshot.ts.
 */
export const PARSERS: Readonly<Record<string, ParserEntry>> = {
  'iptables-save': {
    parse: (t, o) => parseIptablesSave(t, o, { family: 'ipv4' }),
    chunked: (t, o, size, turn) => parseIptablesSaveChunked(t, o, { family: 'ipv4' }, size, turn),
    pieces: (p, o, size, turn) => parseIptablesSaveLazyPieces(p, o, { family: 'ipv4' }, size, turn),
    lazy: (t, o) => parseIptablesSaveLazy(t, o, { family: 'ipv4' }),
  },
  'ip6tables-save': {
    parse: (t, o) => parseIptablesSave(t, o, { family: 'ipv6' }),
    chunked: (t, o, size, turn) => parseIptablesSaveChunked(t, o, { family: 'ipv6' }, size, turn),
    pieces: (p, o, size, turn) => parseIptablesSaveLazyPieces(p, o, { family: 'ipv6' }, size, turn),
    lazy: (t, o) => parseIptablesSaveLazy(t, o, { family: 'ipv6' }),
  },
  'nft-json': {
    parse: parseNftJson,
    chunked: (t, o, size, turn) => parseNftJsonLazyChunked(t, o, size, turn),
    // Chains' rules built on first read; the kept text is deflated (a tenth of its size), so
    // the staged load stays within its memory budget (issue 23).
    pieces: (p, o, size, turn) => parseNftJsonLazyPieces(p, o, size, turn),
    lazy: parseNftJsonLazy,
  },
  'nft-text': { parse: parseNftText, joinedPieces: true },
  conntrack: {
    parse: parseConntrack,
    chunked: (t, o, _size, _turn, chunks) => parseConntrackStream(chunks(t), o),
    pieces: (p, o, _size, _turn, chunks) => parseConntrackStream(chunks(p()), o),
    // The capture's bytes read in place (no 220 MB of strings), the columns sized from the file once.
    file: (path, o, turn) => parseConntrackBytes(withTurns(readFileLineChunks(path), turn), o, { totalBytes: statSync(path).size }),
  },
  ipvsadm: { parse: parseIpvsadm },
  ipset: { parse: parseIpsetList },
  'cilium-status': { parse: parseCiliumStatus },
  'cilium-bpf-lb-list': { parse: parseCiliumBpfLbList },
  'cilium-service-list': { parse: parseCiliumServiceList },
  'xt-recent': { parse: parseXtRecent },
  'cilium-ct': { parse: parseCiliumCt },
};

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

/** The parser entry of probe `id` (by its catalog `parser:`); undefined for one outside {@link PARSERS}. */
export function parserOf(id: string): ParserEntry | undefined {
  const name = catalog().probes.find((p) => p.id === id)?.parser;
  return name === undefined ? undefined : PARSERS[name];
}

/**
 * The probes whose stdout the snapshot build reads in pieces when a transport can give
 * them so (a replay): those whose parser reads pieces or joins them only when needed, and
 * Cilium's raw LB maps (decoded entry by entry as read: `parseCiliumLbMapDumpPieces`).
 */
export function piecedProbes(): readonly string[] {
  return catalog()
    .probes.filter((p) => p.part && !p.onDemand && (PARSERS[p.parser]?.pieces || PARSERS[p.parser]?.joinedPieces || p.parser === LB_MAPS_PARSER))
    .map((p) => p.id);
}

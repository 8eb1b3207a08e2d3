/**
 * Test data builders for the conntrack parser, formatter and NAT view.
 *
 * `ctLine` assembles a conntrack line from its printed parts (the default is a
 * pod → ClusterIP TCP flow DNAT'd to an endpoint), so a test overrides only the
 * part it is about. `makeEntry` / `makeTuple` build model values the same way.
 */
import path from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { plainConntrackEntry, type ConntrackEntry, type ConntrackTuple } from '../../src/model/conntrack.js';

/** The printed parts of one line, in printing order; empty parts are left out. */
export interface LineParts {
  /** Event timestamp and tag, e.g. `'    [NEW]'`. */
  readonly prefix: string;
  /** `-o extended` / `/proc` layer-3 prefix, e.g. `'ipv4     2'`. */
  readonly l3: string;
  /** Protocol, timeout and state, e.g. `'tcp      6 431999 ESTABLISHED'`. */
  readonly head: string;
  readonly orig: string;
  /** Between the tuples: `zone-orig=`, counters, `[UNREPLIED]`. */
  readonly afterOrig: string;
  readonly reply: string;
  /** After the reply tuple: `zone-reply=`, counters, flags, mark, use, … */
  readonly afterReply: string;
}

export const DEFAULT_PARTS: LineParts = {
  prefix: '',
  l3: '',
  head: 'tcp      6 431999 ESTABLISHED',
  orig: 'src=10.244.0.9 dst=10.96.12.34 sport=51286 dport=80',
  afterOrig: '',
  reply: 'src=10.244.0.31 dst=10.244.0.9 sport=8080 dport=51286',
  afterReply: '[ASSURED] mark=0 use=1',
};

/** One conntrack line from {@link DEFAULT_PARTS} with `over` applied. */
export function ctLine(over: Partial<LineParts> = {}): string {
  const p = { ...DEFAULT_PARTS, ...over };
  return [p.prefix, p.l3, p.head, p.orig, p.afterOrig, p.reply, p.afterReply].filter((x) => x !== '').join(' ');
}

/** A tuple with every key present (as the parser builds them). */
export function makeTuple(over: Partial<ConntrackTuple> & Pick<ConntrackTuple, 'src' | 'dst'>): ConntrackTuple {
  return {
    sport: undefined,
    dport: undefined,
    icmpType: undefined,
    icmpCode: undefined,
    icmpId: undefined,
    srcKey: undefined,
    dstKey: undefined,
    zone: undefined,
    packets: undefined,
    bytes: undefined,
    ...over,
  };
}

/**
 * An entry: by default `10.244.0.9:51286 → 10.96.12.34:80 ⇒ 10.244.0.31:8080`,
 * TCP ESTABLISHED, ASSURED. `client`, `vip`, `endpoint`, `seenAs` shortcut the
 * four endpoints of a NAT'd flow.
 */
export function makeEntry(
  over: Partial<ConntrackEntry> & {
    client?: [string, number];
    vip?: [string, number];
    endpoint?: [string, number];
    seenAs?: [string, number];
  } = {},
): ConntrackEntry {
  const { client = ['10.244.0.9', 51286], vip = ['10.96.12.34', 80], endpoint = ['10.244.0.31', 8080], ...rest } = over;
  const seenAs = rest.seenAs ?? client;
  delete (rest as { seenAs?: unknown }).seenAs;
  return {
    line: 1,
    raw: '',
    family: client[0].includes(':') ? 'ipv6' : 'ipv4',
    proto: 'tcp',
    protoNum: 6,
    timeout: 431999,
    state: 'ESTABLISHED',
    orig: makeTuple({ src: client[0], dst: vip[0], sport: client[1], dport: vip[1] }),
    reply: makeTuple({ src: endpoint[0], dst: seenAs[0], sport: endpoint[1], dport: seenAs[1] }),
    flags: ['ASSURED'],
    mark: 0,
    use: 1,
    ...rest,
  };
}

/**
 * The entry's values without `line` and `raw` as plain data (parsed entries may be
 * compact class instances read through getters): what a round trip through another
 * layout must keep.
 */
export function content(e: ConntrackEntry): Omit<ConntrackEntry, 'line' | 'raw'> {
  const { line: _line, raw: _raw, ...rest } = plainConntrackEntry(e);
  return rest;
}

/** The repository root (the folder holding package.json). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** shared/corpus/conntrack, or `undefined` (with the reason printed) when absent. */
export function conntrackCorpusDir(): string | undefined {
  const dir = path.resolve(repoRoot, '../shared/corpus', 'conntrack');
  if (existsSync(dir)) return dir;
  console.warn(`skipping conntrack corpus tests: ${dir} is absent`);
  return undefined;
}

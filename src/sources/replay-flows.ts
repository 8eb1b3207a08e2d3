/**
 * A replay that answers the `conntrack` probe with only the flows that can hold one
 * destination address: what `trace` reads instead of a whole 100,000-flow table, since the
 * walk looks up one packet's flow (src/trace/conntrack.ts `findFlow`: an entry whose original
 * or reply tuple is the packet's addresses and ports). A line is kept when it holds
 * `=ADDRESS ` (conntrack-tools' `src=`/`dst=` fields, conntrack(8) and
 * /proc/net/nf_conntrack alike): every entry with that address in either tuple, in table
 * order, so the first match is the one the whole table gives. Only for a dotted-quad IPv4
 * address, which both formats print the same way; /proc prints IPv6 unabbreviated, so an
 * IPv6 destination reads the whole table.
 */
import { isAscii } from 'node:buffer';
import { readFileSync } from 'node:fs';
import type { Bundle } from './bundle.js';
import { ReplayTransport } from './replay.js';
import { probeForArgv } from './ssh-command.js';
import type { PiecedExecResult } from './pieces.js';
import type { ExecOptions, ExecResult } from './transport.js';

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/** True when `address` is an IPv4 address written as conntrack writes it (no leading zeros). */
export function isPlainIpv4(address: string): boolean {
  return DOTTED_QUAD.test(address);
}

/**
 * The lines of `text` holding `=address ` (each with its newline; a last line without one
 * stays without). Pure.
 */
export function flowLinesWith(text: string, address: string): string {
  const needle = `=${address} `;
  let out = '';
  let from = 0;
  for (;;) {
    const hit = text.indexOf(needle, from);
    if (hit < 0) return out;
    const start = text.lastIndexOf('\n', hit) + 1;
    const nl = text.indexOf('\n', hit);
    const end = nl < 0 ? text.length : nl + 1;
    out += text.slice(start, end);
    from = end;
  }
}

/**
 * {@link flowLinesWith} of the text `bytes` decode to (as src/sources/read-text.ts decodes a
 * file), without decoding the rest: the lines are found in the bytes (the needle and the
 * newline are ASCII, which UTF-8 never uses inside a multi-byte sequence) and only they are
 * decoded, each as Latin-1 when it is ASCII, else as UTF-8. Pure.
 */
export function flowLinesOfBytes(bytes: Buffer, address: string): string {
  const needle = Buffer.from(`=${address} `, 'latin1');
  let out = '';
  let from = 0;
  for (;;) {
    const hit = bytes.indexOf(needle, from);
    if (hit < 0) return out;
    const start = bytes.lastIndexOf(10, hit) + 1;
    const nl = bytes.indexOf(10, hit);
    const end = nl < 0 ? bytes.length : nl + 1;
    const line = bytes.subarray(start, end);
    out += line.toString(isAscii(line) ? 'latin1' : 'utf8');
    from = end;
  }
}

/** {@link flowLinesWith} over line-aligned pieces (a piece may end inside a line: carried to the next). */
function* flowPiecesWith(pieces: Iterable<string>, address: string): Iterable<string> {
  let carry = '';
  for (const piece of pieces) {
    const text = carry + piece;
    const cut = text.lastIndexOf('\n') + 1;
    carry = text.slice(cut);
    const kept = flowLinesWith(text.slice(0, cut), address);
    if (kept) yield kept;
  }
  const last = flowLinesWith(carry, address);
  if (last) yield last;
}

/** A {@link ReplayTransport} whose `conntrack` probe holds only the flows of one IPv4 address (see the module comment). */
export class FlowFilteredReplay extends ReplayTransport {
  private readonly address: string;

  /** `address` must satisfy {@link isPlainIpv4} (throws otherwise: a filter that could miss a flow is never built). */
  constructor(bundle: Bundle, address: string) {
    super(bundle);
    if (!isPlainIpv4(address)) throw new Error(`FlowFilteredReplay: ${address} is not a dotted-quad IPv4 address`);
    this.address = address;
  }

  private filtered(argv: readonly string[], r: PiecedExecResult): PiecedExecResult {
    if (probeForArgv(argv)?.id !== 'conntrack') return r;
    const pieces = r.stdoutPieces;
    // Without `stdoutPath`: a reader of that file would see every flow, not the ones kept.
    const { stdoutPath: _path, ...rest } = r;
    if (pieces) return { ...rest, stdoutPieces: () => flowPiecesWith(pieces(), this.address) };
    return { ...r, stdout: flowLinesWith(r.stdout, this.address) };
  }

  override async exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    if (probeForArgv(argv)?.id === 'conntrack') {
      // The recorded table's file, read as bytes: only the lines kept are decoded.
      const r = await super.execInPieces(argv, options);
      if (r.stdoutPath === undefined) return this.filtered(argv, r);
      const { stdoutPieces: _pieces, stdoutPath, ...rest } = r;
      return { ...rest, stdout: flowLinesOfBytes(readFileSync(stdoutPath), this.address) };
    }
    return this.filtered(argv, await super.exec(argv, options));
  }

  override async execInPieces(argv: readonly string[], options: ExecOptions): Promise<PiecedExecResult> {
    return this.filtered(argv, await super.execInPieces(argv, options));
  }
}

/**
 * Parser for conntrack tables and events:
 *
 * - `conntrack -L` and `conntrack -E` (conntrack-tools `src/conntrack.c`, lines
 *   built by libnetfilter_conntrack `src/conntrack/snprintf_default.c`);
 * - `conntrack -L -o extended[,id,ktimestamp,labels]` and `-E -o timestamp`;
 * - `/proc/net/nf_conntrack` (kernel `net/netfilter/nf_conntrack_standalone.c`).
 *
 * The formats differ by prefix and field set, not by shape, so one line parser
 * (`conntrack-line.ts`) serves all of them. What this module adds is the stream
 * around the lines: the stderr summary (`conntrack v1.4.6 (conntrack-tools): 296
 * flow entries have been shown.`) that shells interleave into captured stdout,
 * sometimes in the middle of a line; `cat -n` line-number prefixes; and
 * diagnostics for every line that is not an entry.
 *
 * Two entry points give identical results: {@link parseConntrack} walks a string
 * with `indexOf` (no `split` copy of a large capture), {@link parseConntrackStream}
 * consumes lines or line-aligned chunks from a stream. Both read lines of the common
 * shape in place (`conntrack-fast.ts`, compact entries that keep no part of the text),
 * falling back to the line parser for any other; {@link parseConntrackGeneral} is the
 * line parser alone (the fast path's reference). {@link parseConntrackBytes} reads a file's
 * bytes in place (`conntrack-bytes.ts`, a subset of the fast path), lines of any other shape
 * decoded and read as by the stream parser: same result, no string of the whole capture.
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import type {
  ConntrackEntry,
  ConntrackTable,
  ConntrackTrailer,
  ConntrackTrailerAction,
  ConntrackTrailerUnit,
} from '../model/conntrack.js';
import { readConntrackBytes } from './conntrack-bytes.js';
import { readConntrackFast, releaseConntrackFast } from './conntrack-fast.js';
import { ConntrackColumnBuilder, columnTable } from './conntrack-columns.js';
import { ConntrackInterner, entryStart, looksLikeEntry, parseConntrackLine } from './conntrack-line.js';
import { flatCopy } from '../flat-string.js';

export { formatConntrackEntry, formatConntrackTable } from './conntrack-format.js';

/** Past this many diagnostics, further ones are counted in one summary (binary input can have millions of lines). */
export const CONNTRACK_MAX_DIAGNOSTICS = 10_000;

const TRAILER_UNITS: ReadonlySet<string> = new Set<ConntrackTrailerUnit>([
  'flow entries',
  'flow events',
  'expectation entries',
  'expectation events',
]);
const TRAILER_ACTIONS: ReadonlySet<string> = new Set<ConntrackTrailerAction>(['shown', 'deleted', 'updated', 'created']);
const TRAILER_TAG = ' (conntrack-tools): ';

/** A summary line found inside `line`, with the text around it. */
interface TrailerHit {
  readonly trailer: ConntrackTrailer;
  readonly before: string;
  readonly after: string;
}

/**
 * Finds `conntrack vX (conntrack-tools): N <unit> have been <action>.` anywhere in
 * `line` (conntrack.c prints it with two unbuffered writes to stderr).
 */
function findTrailer(line: string, lineNo: number): TrailerHit | undefined {
  const tag = line.indexOf(TRAILER_TAG);
  if (tag < 0) return undefined;
  const head = line.lastIndexOf('conntrack v', tag);
  if (head < 0) return undefined;
  const version = line.slice(head + 11, tag);
  if (version.length === 0 || version.length > 20 || version.indexOf(' ') >= 0) return undefined;
  const rest = tag + TRAILER_TAG.length;
  const sp = line.indexOf(' ', rest);
  if (sp < 0) return undefined;
  const countText = line.slice(rest, sp);
  if (countText.length === 0 || countText.length > 12) return undefined;
  for (let k = 0; k < countText.length; k++) {
    const c = countText.charCodeAt(k);
    if (c < 48 || c > 57) return undefined;
  }
  const been = line.indexOf(' have been ', sp);
  if (been < 0) return undefined;
  const unit = line.slice(sp + 1, been);
  const dot = line.indexOf('.', been + 11);
  if (dot < 0) return undefined;
  const action = line.slice(been + 11, dot);
  if (!TRAILER_UNITS.has(unit) || !TRAILER_ACTIONS.has(action)) return undefined;
  return {
    trailer: {
      line: lineNo,
      version,
      count: Number(countText),
      unit: unit as ConntrackTrailerUnit,
      action: action as ConntrackTrailerAction,
    },
    before: line.slice(0, head),
    after: line.slice(dot + 1),
  };
}

function isBlank(text: string): boolean {
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/**
 * The line-by-line state shared by both entry points. `push` takes one line
 * without its terminator; `finish` returns the result.
 */
class ConntrackParseState {
  private readonly interner = new ConntrackInterner();
  private readonly columns = new ConntrackColumnBuilder(this.interner);
  private readonly events: ConntrackEntry[] = [];
  private readonly trailers: ConntrackTrailer[] = [];
  private readonly diagnostics: Diagnostic[] = [];
  private suppressed = 0;
  private numberedNoted = false;
  // Text before a summary that cut an entry line in two; joined with the next line.
  private pending: { text: string; line: number } | undefined;
  /** Number of the last line pushed. */
  private lineNo = 0;

  /**
   * `fast`: lines of the common shape go through the fast path (false: the general parser
   * only); `deferred`: its address lookups queued and made in batches (false: one by one).
   */
  constructor(
    private readonly origin: string,
    private readonly fast: boolean,
    private readonly deferred = fast,
  ) {}

  private report(d: Diagnostic): void {
    // Copies: the line and the message quote the text, which may be a slice of a whole capture.
    if (this.diagnostics.length < CONNTRACK_MAX_DIAGNOSTICS) this.diagnostics.push({ ...d, text: flatCopy(d.text), message: flatCopy(d.message) });
    else this.suppressed++;
  }

  /**
   * Every line of `text` (split at `\n`; a final `\n` ends the last line, it does not
   * start an empty one), numbered on from the lines pushed before.
   */
  pushText(text: string): void {
    const n = text.length;
    let pos = 0;
    // No search for summaries or NULs first: the fast path never takes a line that
    // holds either ("(" and NUL are in none of its fields), the general one handles them.
    while (pos < n) {
      let nl = text.indexOf('\n', pos);
      if (nl < 0) nl = n;
      const lineNo = ++this.lineNo;
      if (!this.pushFast(text, pos, nl, lineNo)) this.push(text.slice(pos, nl), lineNo);
      pos = nl + 1;
    }
  }

  /**
   * Every line of `b` (latin1 bytes of the capture; split at `\n`, a final `\n` ends the last
   * line), numbered on. Lines of the common shape are read from the bytes
   * (`readConntrackBytes`); any other is decoded as UTF-8 (as `readFilePieces` decodes the
   * file) and goes the string way, as {@link pushLine}. Holds nothing of `b` after it returns.
   */
  pushBytes(b: Uint8Array): void {
    const n = b.length;
    let pos = 0;
    let asBuffer: Buffer | undefined;
    while (pos < n) {
      let nl = b.indexOf(10, pos);
      if (nl < 0) nl = n;
      const lineNo = ++this.lineNo;
      const end = nl > pos && b[nl - 1] === 13 ? nl - 1 : nl;
      if (this.fast && this.pending === undefined && readConntrackBytes(b, pos, end, this.interner)) this.columns.addBytesRow(lineNo);
      else {
        asBuffer ??= Buffer.from(b.buffer, b.byteOffset, b.byteLength);
        const line = asBuffer.toString('utf8', pos, nl);
        if (!this.pushFast(line, 0, line.length, lineNo)) this.push(line, lineNo);
      }
      pos = nl + 1;
    }
    // The queued lookups may point into `b`, which the caller may reuse.
    this.columns.resolveIds();
  }

  /** Room for `entries` rows in the columns (see `ConntrackColumnBuilder.reserve`). */
  reserve(entries: number): void {
    this.columns.reserve(entries);
  }

  /** Lines pushed so far. */
  get lines(): number {
    return this.lineNo;
  }

  /** How many times the columns were allocated (see `ConntrackColumnBuilder.allocations`). */
  get columnAllocations(): number {
    return this.columns.allocations;
  }

  /** One line (no `\n` in it), numbered after the lines pushed before. */
  pushLine(line: string): void {
    const lineNo = ++this.lineNo;
    if (!this.pushFast(line, 0, line.length, lineNo)) this.push(line, lineNo);
  }

  /**
   * The fast path for `text[from, end)` (a line without its `\n`): true when it was an
   * entry of the common shape and has been added.
   */
  private pushFast(text: string, from: number, end: number, lineNo: number): boolean {
    if (!this.fast || this.pending !== undefined) return false;
    if (end > from && text.charCodeAt(end - 1) === 13) end--;
    if (!readConntrackFast(text, from, end, this.interner, this.deferred)) return false;
    this.columns.addFast(lineNo);
    return true;
  }

  private push(rawLine: string, lineNo: number): void {
    const line = rawLine.length > 0 && rawLine.charCodeAt(rawLine.length - 1) === 13 ? rawLine.slice(0, -1) : rawLine;
    if (this.pending !== undefined) {
      const { text, line: at } = this.pending;
      this.pending = undefined;
      const joined = text + line;
      const { start } = entryStart(joined);
      const outcome = parseConntrackLine(joined, start, at, this.interner);
      if (outcome.ok) {
        this.addEntry(outcome.entry, outcome.notes, joined, at, false);
        this.report(
          diagnostic('info', this.origin, at, joined, 'stderr-interleaved',
            `conntrack's summary line was printed inside this entry; rejoined with line ${lineNo}`),
        );
        return;
      }
      this.plain(text, at);
    }
    if (line.indexOf(TRAILER_TAG) >= 0) {
      const hit = findTrailer(line, lineNo);
      if (hit !== undefined) {
        this.trailers.push(hit.trailer);
        const before = hit.before;
        if (!isBlank(before) && before !== '^C') {
          if (looksLikeEntry(before, entryStart(before).start)) this.pending = { text: before, line: lineNo };
          else this.plain(before, lineNo);
        }
        if (!isBlank(hit.after)) this.plain(hit.after, lineNo);
        return;
      }
    }
    this.plain(line, lineNo);
  }

  private plain(line: string, lineNo: number): void {
    if (isBlank(line)) return;
    if (line.indexOf('\u0000') >= 0) {
      this.report(diagnostic('error', this.origin, lineNo, line, 'binary', 'binary data (NUL bytes), not conntrack text'));
      return;
    }
    const { start, numbered } = entryStart(line);
    const outcome = parseConntrackLine(line, start, lineNo, this.interner);
    if (outcome.ok) {
      this.addEntry(outcome.entry, outcome.notes, line, lineNo, numbered);
      return;
    }
    const { code, message } = outcome.failure;
    if (code === 'not-conntrack') {
      this.report(diagnostic('warning', this.origin, lineNo, line, 'unrecognized-line', 'not a conntrack entry'));
    } else {
      this.report(diagnostic('error', this.origin, lineNo, line, code, message));
    }
  }

  private addEntry(
    entry: ConntrackEntry,
    notes: readonly { code: string; message: string }[],
    line: string,
    lineNo: number,
    numbered: boolean,
  ): void {
    // An event line (`conntrack -E`) is a change to a flow, not a flow: kept apart.
    if (entry.event !== undefined) this.events.push(entry);
    else {
      // Addresses the general parser read went through the interner: their ids are known.
      const { orig, reply } = entry;
      const id = (text: string | undefined) => this.interner.intern(text ?? '');
      this.columns.addEntry(entry, [id(orig.src), id(orig.dst), id(reply.src), id(reply.dst)]);
    }
    for (const n of notes) this.report(diagnostic('warning', this.origin, lineNo, line, n.code, n.message));
    if (numbered && !this.numberedNoted) {
      this.numberedNoted = true;
      this.report(
        diagnostic('info', this.origin, lineNo, line, 'line-number-prefix',
          'a `cat -n` line-number prefix was skipped (noted once; kept in raw)'),
      );
    }
  }

  finish(): ParseResult<ConntrackTable> {
    releaseConntrackFast();
    if (this.pending !== undefined) {
      const { text, line } = this.pending;
      this.pending = undefined;
      this.plain(text, line);
    }
    if (this.suppressed > 0) {
      this.diagnostics.push(
        diagnostic('warning', this.origin, 0, '', 'too-many-diagnostics',
          `${this.suppressed} more diagnostics were suppressed after the first ${CONNTRACK_MAX_DIAGNOSTICS}`),
      );
    }
    let reportedCount: number | undefined;
    let reportedEvents: number | undefined;
    for (const t of this.trailers) {
      if (t.action === 'shown' && t.unit === 'flow entries') reportedCount = t.count;
      if (t.action === 'shown' && t.unit === 'flow events') reportedEvents = t.count;
    }
    const rows = this.columns.finish(this.interner);
    // Entries made from the columns on first read (src/parsers/conntrack-columns.ts).
    const value = columnTable(rows, {
      ...(this.events.length > 0 ? { events: this.events } : {}),
      trailers: this.trailers,
      reportedCount,
      ...(reportedEvents !== undefined ? { reportedEvents } : {}),
    });
    return { value, diagnostics: this.diagnostics };
  }
}

/**
 * Parses a conntrack capture held in one string (any of the formats in the module
 * doc, mixed freely). Lines end with `\n` or `\r\n`. Never throws: a line that is
 * not an entry becomes a diagnostic (`unrecognized-line` warning for text that is
 * not conntrack output at all; `malformed`, `truncated`, `bad-value`,
 * `bad-address`, `binary` errors for broken entries; `unknown-field`,
 * `unknown-state`, `proto-mismatch`, `duplicate-field` warnings for entries kept
 * with something unmodelled; `line-number-prefix`, `stderr-interleaved` infos).
 *
 * @param text   the capture (stdout, possibly with stderr interleaved)
 * @param origin where it came from (probe id, file path), copied into diagnostics
 */
export function parseConntrack(text: string, origin: string): ParseResult<ConntrackTable> {
  const state = new ConntrackParseState(origin, true);
  state.pushText(text);
  return state.finish();
}

/**
 * {@link parseConntrack} without its fast path: every line through the general line
 * parser. Same result, slower, plain-object entries; the reference the fast path is
 * tested against (`conntrack-fast.test.ts`). Never throws.
 */
export function parseConntrackGeneral(text: string, origin: string): ParseResult<ConntrackTable> {
  const state = new ConntrackParseState(origin, false);
  state.pushText(text);
  return state.finish();
}

/**
 * {@link parseConntrack} with the fast path's address lookups made one by one as each line
 * is read (the parse before they were queued and made in batches): the reference the
 * batched lookups are tested against (`conntrack-fast-batch.test.ts`). Same result. Never throws.
 */
export function parseConntrackReference(text: string, origin: string): ParseResult<ConntrackTable> {
  const state = new ConntrackParseState(origin, true, false);
  state.pushText(text);
  return state.finish();
}

/**
 * Parses a conntrack capture given as lines, e.g. `readline.createInterface({input:
 * fs.createReadStream(path)})`, without holding the whole text. Each item is one
 * line without its terminator (a trailing `\r` is dropped); an item that still
 * holds `\n` is split there, a final `\n` ending its last line (so items may be
 * line-aligned chunks of a text). The result equals `parseConntrack` on the joined
 * text, and holds nothing of the items. Rejects only when the iterable itself throws
 * (an I/O error of the stream).
 */
export async function parseConntrackStream(
  lines: AsyncIterable<string> | Iterable<string>,
  origin: string,
): Promise<ParseResult<ConntrackTable>> {
  const state = new ConntrackParseState(origin, true);
  for await (const item of lines) {
    if (item.indexOf('\n') < 0) state.pushLine(item);
    else state.pushText(item);
  }
  return state.finish();
}

/** Options of {@link parseConntrackBytes}. */
export interface ConntrackBytesOptions {
  /**
   * The capture's size in bytes when known (a file's): the columns are then allocated once,
   * after the first chunk, for the lines that many bytes hold at that chunk's line length
   * (a little over), instead of growing by doubling.
   */
  readonly totalBytes?: number;
  /** Called once with the parse state's counters when the parse ends (tests count work with it). */
  readonly onFinish?: (counts: { readonly lines: number; readonly columnAllocations: number }) => void;
}

// Room reserved over the estimate from the first lines' length (lines vary a little in length).
const RESERVE_SLACK = 1.08;
// The first lines measured: about this many bytes of them.
const SAMPLE_BYTES = 64 * 1024;

/**
 * Reserves the columns for a capture of `totalBytes` at the mean length of the lines that
 * start `chunk` (up to {@link SAMPLE_BYTES}); false when they are too few to tell (under 16
 * lines: a small capture, or long lines — then the columns grow as they fill).
 */
function reserveFor(state: ConntrackParseState, chunk: Uint8Array, totalBytes: number): boolean {
  const limit = Math.min(chunk.length, SAMPLE_BYTES);
  let lines = 0;
  let last = -1;
  for (let i = chunk.indexOf(10); i >= 0 && i < limit; i = chunk.indexOf(10, i + 1)) {
    lines++;
    last = i;
  }
  if (lines < 16) return false;
  // Never more rows than the bytes could hold (the shortest line read is far longer than 8 bytes).
  state.reserve(Math.min((totalBytes * lines * RESERVE_SLACK) / (last + 1) + 64, totalBytes / 8));
  return true;
}

/**
 * {@link parseConntrackStream} over the capture's bytes: each item is a line-aligned chunk
 * of the file's bytes (the last may lack its `\n`; a line never spans two items), read in
 * place — no string is made of the lines of the common shape, the others are decoded as
 * UTF-8 and parsed as before. The items may be views of one reused buffer: nothing of an
 * item is held once the next is asked for. The result equals {@link parseConntrackStream}
 * on the decoded text and {@link parseConntrackReference} (`conntrack-bytes.test.ts`).
 * Rejects only when the iterable itself throws (an I/O error).
 */
export async function parseConntrackBytes(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  origin: string,
  options: ConntrackBytesOptions = {},
): Promise<ParseResult<ConntrackTable>> {
  const state = new ConntrackParseState(origin, true);
  let sized = options.totalBytes === undefined;
  for await (const chunk of chunks) {
    // Sized before the first chunk is read, from the line length of its first lines.
    if (!sized) sized = reserveFor(state, chunk, options.totalBytes!);
    state.pushBytes(chunk);
  }
  options.onFinish?.({ lines: state.lines, columnAllocations: state.columnAllocations });
  return state.finish();
}

/**
 * `--api-file FILE` as a live {@link ApiFeed}: the session re-parses the API objects when
 * the file changes, as it does after a cluster watch event, so a running TUI follows a
 * `kubectl get … -o json > FILE` written again beside it.
 *
 * Read-only and cheap: while someone is subscribed, one `stat` per interval (the session's
 * refresh period); the file is read only when its inode, size or mtime changed. Polling
 * rather than `fs.watch`: editors and `kubectl … > FILE` replace or truncate the file, which
 * an inotify watch on the old inode misses or reports half-written. A change that yields no
 * API objects (the file emptied, removed, half-written, not JSON/YAML of objects, or a List
 * naming no Service and no Node) keeps the last good objects and is reported by
 * {@link ApiFileFeed.error} and {@link ApiFileFeed.problem}; listeners hear of it
 * (`'error'`), and of the file holding objects again, so the header can say so.
 */
import { readFileSync, statSync, type BigIntStats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { said, UserError } from '../errors.js';
import { formatDiagnostic } from '../model/diagnostics.js';
import { parseK8sObjects } from '../parsers/k8s-objects.js';
import { fieldText, scanJsonList } from '../parsers/json-list.js';
import { firstKindItem } from '../parsers/json-list-first.js';
import { textOfBytes } from './read-text.js';
import type { ApiFeed, ApiProblem, ApiProblemKind } from './cluster-api.js';
import type { ApiObjects } from '../model/k8s.js';
import type { ParseResult } from '../model/diagnostics.js';
import { clockTime } from '../text/clock.js';
import { DEFAULT_INTERVAL_MS } from './refresh-interval.js';

/** What to tell a user whose `--api-file` holds nothing usable. */
export const API_FILE_HINT = 'write it with `kubectl get services,endpointslices,pods,nodes -A -o json > FILE`';

/**
 * Refuses an `--api-file` that yields nothing: empty, or no object parsed while the
 * parser reported errors or warnings (JSON/YAML that does not parse, or valid JSON of
 * another shape). A file with some objects keeps working, its diagnostics shown as
 * usual; an empty `List` (a cluster with nothing in it) is accepted.
 * Throws `UserError` naming the file with the parser's first diagnostic (line, text).
 *
 * `bytes`, when given, are the file's bytes that `text` was decoded from (as
 * {@link textOfBytes} decodes them): the List's shape and its first item are then found by
 * one pass over the bytes ({@link firstKindItem}) and that item parsed alone; whatever that
 * pass does not decide (and every refusal) goes to {@link checkApiFileTextViaScan}, the same
 * verdict, message and hint.
 */
export function checkApiFileText(text: string, file: string, bytes?: Uint8Array): void {
  const first = bytes ? firstKindItem(bytes) : null;
  // Non-null only after a pass over every byte found them all ASCII: offsets are the text's.
  if (first && objectCount(parseK8sObjects(oneItemText(text, first.open, first.close, first), file).value) > 0) return;
  checkApiFileTextViaScan(text, file);
}

/**
 * {@link checkApiFileText} by the List's scan (src/parsers/json-list.ts), else the whole
 * text's parse: the reference the byte pass is tested against, and its fallback.
 */
export function checkApiFileTextViaScan(text: string, file: string): void {
  refuseBlank(text, file);
  const one = oneItem(text, file, () => true);
  if (one && objectCount(one) > 0) return;
  refuseWithoutObjects(parseK8sObjects(text, file), file);
}

/**
 * {@link checkApiFileTextViaScan}'s verdict from the whole text's parse, returning that parse
 * (`parseK8sObjects(text, file)`): for a caller that parses the whole text anyway (the TUI's
 * first snapshot), so the check costs no pass of its own. The same verdict, message and hint:
 * the scan's one-item shortcut accepts only when that item yields objects, which the whole
 * text then yields too (each item of a List is converted on its own); every other case of the
 * scan is this rule on the same parse.
 */
export function checkApiFileTextWhole(text: string, file: string): ParseResult<ApiObjects> {
  refuseBlank(text, file);
  const result = parseK8sObjects(text, file);
  refuseWithoutObjects(result, file);
  return result;
}

/** Throws the `UserError` for an `--api-file` with nothing but white space. */
function refuseBlank(text: string, file: string): void {
  if (!/\S/.test(text)) throw new UserError(said('err.apiFileEmpty', { file }), said('ue.apiFile.hint'));
}

/** Throws the `UserError` for a whole parse that found no object but an error or warning (the first named, the rest counted). */
function refuseWithoutObjects(result: ParseResult<ApiObjects>, file: string): void {
  const problems = result.diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
  if (objectCount(result.value) > 0 || problems.length === 0) return;
  const more = problems.length > 1 ? said('ue.apiFile.more', { n: problems.length - 1 }) : '';
  throw new UserError(said('ue.apiFile.noObjects', { file, problem: formatDiagnostic(problems[0]!), more }), said('ue.apiFile.hint'));
}

/** The List `text` with only the item `[item.start, item.end)` in its items array (`open`/`close`: the array's brackets). */
const oneItemText = (text: string, open: number, close: number, item: { start: number; end: number }) =>
  `${text.slice(0, open + 1)}${text.slice(item.start, item.end)}${text.slice(close)}`;

/**
 * The objects of one item of the JSON List `text` (src/parsers/json-list.ts), parsed alone in
 * the same List: the first item whose kind `wanted` accepts. The whole text yields these
 * objects too (each item of a List is converted on its own, and a List deletes nothing), so a
 * check that asks only whether there is such an object need not convert the others. Null when
 * there is no such item, or the text is not such a List (the caller parses it whole).
 */
function oneItem(text: string, file: string, wanted: (kind: string) => boolean): ApiObjects | null {
  const list = scanJsonList(text, [['kind']]);
  const item = list?.items.find((i) => {
    const kind = fieldText(text, i, 0);
    return kind !== undefined && kind.startsWith('"') && wanted(JSON.parse(kind) as string);
  });
  if (!list || !item) return null;
  return parseK8sObjects(oneItemText(text, list.open, list.close, item), file).value;
}

/** How many objects `value` holds. */
const objectCount = (v: ApiObjects) => v.services.length + v.endpointSlices.length + v.pods.length + v.nodes.length + v.others.length;

/**
 * Why a version of a followed `--api-file` (read after the first) is not taken, or null when
 * it is: what {@link checkApiFileText} refuses, and also a version that parses but names no
 * Service and no Node (an empty List, `{"items":[]}`): a file being rewritten, not a
 * cluster — every cluster has Nodes and the `kubernetes` Service. `what` is the reason
 * without the file name; `bytes` as for {@link checkApiFileText}. Never throws.
 */
export function refusedVersion(text: string, file: string, bytes?: Uint8Array): { kind: ApiProblemKind; what: string } | null {
  try {
    checkApiFileText(text, file, bytes);
  } catch (e) {
    const prefix = `--api-file ${file}: `;
    const what = e instanceof UserError && e.message.startsWith(prefix) ? e.message.slice(prefix.length) : (e as Error).message;
    return { kind: /\S/.test(text) ? 'invalid' : 'empty', what };
  }
  const one = oneItem(text, file, (kind) => kind === 'Service' || kind === 'Node');
  if (one && (one.services.length > 0 || one.nodes.length > 0)) return null;
  const { value } = parseK8sObjects(text, file);
  if (value.services.length > 0 || value.nodes.length > 0) return null;
  const others = value.endpointSlices.length + value.pods.length + value.others.length;
  return { kind: 'no-objects', what: others === 0 ? 'no API objects in it (an empty list)' : `no Service and no Node in it (${others} other objects)` };
}

/** Options of {@link ApiFileFeed}. `intervalMs`: how often the file's stat is compared (default {@link DEFAULT_INTERVAL_MS}). */
export interface ApiFileFeedOptions {
  readonly intervalMs?: number;
  /**
   * Check the file by its whole parse ({@link checkApiFileTextWhole}) and keep that parse for
   * {@link ApiFileFeed.takeOpenParse}: for a caller whose first snapshot parses the text anyway.
   */
  readonly parseAtOpen?: boolean;
}

/** What identifies one version of the file without reading it: inode, size, mtime (ns). */
function stampOf(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}`;
}

/** `file`'s stat and bytes, read as {@link ApiFileFeed.open} reads them; throws its `UserError`s. */
function readOpened(file: string): { st: BigIntStats; bytes: Buffer } {
  try {
    return { st: statSync(file, { bigint: true }), bytes: readFileSync(file) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new UserError(said('err.apiFileMissing', { file }));
    throw new UserError(said('ue.apiFile.cannotRead', { file, detail: (e as Error).message }), said('ue.apiFile.hint'));
  }
}

/** {@link readOpened} with the bytes decoded ({@link textOfBytes}) and not kept. */
function readOpenedText(file: string): { st: BigIntStats; text: string } {
  const { st, bytes } = readOpened(file);
  return { st, text: textOfBytes(bytes) };
}

/** The API objects of a file, re-read when it changes. Create with {@link ApiFileFeed.open}. */
export class ApiFileFeed implements ApiFeed {
  readonly origin: string;
  private current: string;
  private stamp: string;
  private readonly listeners = new Set<(change?: 'error') => void>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<boolean> | null = null;
  private lastProblem: ApiProblem | null = null;
  /** When {@link current} was read (ms since epoch). */
  private readAt: number;
  private closed = false;
  /** The parse made by {@link ApiFileFeed.open} with `parseAtOpen`, until taken. */
  private openParse: ParseResult<ApiObjects> | undefined;

  private constructor(
    private readonly file: string,
    text: string,
    stamp: string,
    private readonly intervalMs: number,
  ) {
    this.origin = file;
    this.current = text;
    this.stamp = stamp;
    this.readAt = Date.now();
  }

  /**
   * Reads `file` once (synchronously, as the source opens). Throws `UserError` when it does
   * not exist, cannot be read, or holds no API objects ({@link checkApiFileText}; with
   * `parseAtOpen`, {@link checkApiFileTextWhole}: the same verdict and message).
   */
  static open(file: string, options: ApiFileFeedOptions = {}): ApiFileFeed {
    const intervalMs = Math.max(10, options.intervalMs ?? DEFAULT_INTERVAL_MS);
    if (!options.parseAtOpen) {
      const { st, bytes } = readOpened(file);
      const text = textOfBytes(bytes);
      checkApiFileText(text, file, bytes);
      return new ApiFileFeed(file, text, stampOf(st), intervalMs);
    }
    // The bytes are let go before the parse (46 MB at 10,000 Services: external memory the parse's GCs would count).
    const { st, text } = readOpenedText(file);
    const feed = new ApiFileFeed(file, text, stampOf(st), intervalMs);
    feed.openParse = checkApiFileTextWhole(text, file);
    return feed;
  }

  /**
   * The parse of {@link text} made when the file was opened with `parseAtOpen`
   * (`parseK8sObjects(text, origin)`), with its input; given once (the caller keeps it), and
   * only while the text is still the one opened. Undefined otherwise.
   */
  takeOpenParse(): { readonly text: string; readonly origin: string; readonly result: ParseResult<ApiObjects> } | undefined {
    const result = this.openParse;
    this.openParse = undefined;
    return result ? { text: this.current, origin: this.origin, result } : undefined;
  }

  /** The objects of the last version of the file that held any. */
  text(): string {
    return this.current;
  }

  /**
   * Calls `listener` after the file changed to other objects, or with `'error'` when only
   * {@link error} changed (a version without objects, or the same objects back after one);
   * polling runs while anyone listens.
   */
  subscribe(listener: (change?: 'error') => void): () => void {
    this.listeners.add(listener);
    if (!this.timer && !this.closed) {
      this.timer = setInterval(() => void this.check(), this.intervalMs);
      // A feed left open must not keep a one-shot command alive.
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopTimer();
    };
  }

  /**
   * Compares the file's stat with the last one and, when it changed, reads it: new objects
   * replace the old ones and the listeners are called (resolves true); no change, the same
   * text, or a version without objects (kept out, see {@link error}) resolves false. Never rejects.
   */
  check(): Promise<boolean> {
    this.checking ??= this.compare().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async compare(): Promise<boolean> {
    if (this.closed) return false;
    const before = this.lastProblem?.detail ?? null;
    let text: string;
    let bytes: Buffer;
    try {
      const st = await stat(this.file, { bigint: true });
      const stamp = stampOf(st);
      if (stamp === this.stamp) return false;
      bytes = await readFile(this.file);
      text = textOfBytes(bytes);
      this.stamp = stamp;
    } catch (e) {
      const gone = (e as NodeJS.ErrnoException).code === 'ENOENT';
      this.refuse(gone ? 'gone' : 'unreadable', (e as Error).message, before);
      return false;
    }
    const refused = refusedVersion(text, this.file, bytes);
    if (refused) {
      this.refuse(refused.kind, refused.what, before);
      return false;
    }
    this.lastProblem = null;
    if (text === this.current || this.closed) {
      if (before !== null && !this.closed) this.tell('error');
      return false;
    }
    this.current = text;
    this.openParse = undefined;
    this.readAt = Date.now();
    this.tell();
    return true;
  }

  /** Keeps the objects shown and says why (what went wrong first: a header has little room). */
  private refuse(kind: ApiProblemKind, what: string, before: string | null): void {
    const detail = `${what} (--api-file ${this.file}: showing the objects read at ${clockTime(this.readAt)}; ${API_FILE_HINT})`;
    this.lastProblem = { kind, detail, keptAt: this.readAt };
    if (detail !== before && !this.closed) this.tell('error');
  }

  private tell(change?: 'error'): void {
    for (const l of this.listeners) l(change);
  }

  /** Why the last change of the file was not taken (its objects are the previous ones); null when none. */
  error(): string | null {
    return this.lastProblem?.detail ?? null;
  }

  /** {@link error} with its kind and when the objects shown were read; null when none. */
  problem(): ApiProblem | null {
    return this.lastProblem;
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Stops polling; the feed keeps its last text. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopTimer();
    this.listeners.clear();
  }
}

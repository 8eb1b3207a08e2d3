/**
 * The tolerant Kubernetes API object parser: text → {@link ApiObjects}.
 *
 * Accepts what `kubectl get … -o json|yaml`, the REST API and `kubectl get -w -o json`
 * print:
 * - JSON: one object; `kind: List` or a typed list (`ServiceList`, `EndpointSliceList`, …
 *   whose items carry no `kind`); a top-level array; watch events
 *   `{"type":"ADDED","object":{…}}`, one per line or concatenated; several values back to back.
 * - YAML (via the `yaml` package): a multi-document `---` stream and `kind: List`.
 *
 * Watch events are applied in order (ADDED/MODIFIED upsert, DELETED removes), so a
 * recorded watch stream yields the final state. Kinds other than Service, EndpointSlice,
 * Pod and Node are kept whole as `unknown` objects with an info diagnostic.
 *
 * Diagnostic codes: `json-syntax`, `truncated`, `yaml-syntax` (errors: that document is
 * lost); `garbage`, `not-an-object`, `missing-kind`, `missing-name`, `duplicate-object`,
 * `unknown-event-type`, `watch-error` (warnings); `too-deep` (error: a value nested too deep
 * for the reader's stack, that document or object is lost); `yaml-warning`, `kind-inferred`,
 * `unknown-kind` (info); plus the field codes of src/parsers/k8s-convert.ts (`wrong-type`,
 * `unknown-value`, `condition-not-boolean`, `missing-field`, `missing-address-type`,
 * `clusterip-none-case`). Lines are 1-based; for JSON, a field's line is found by
 * re-reading the text with the YAML parser, which accepts JSON.
 */
import { LineCounter, parseAllDocuments, parseDocument, isNode } from '../text/yaml-lib.js';
import type { Document } from 'yaml';
import { diagnostic, EXCERPT_MAX } from '../model/diagnostics.js';
import type { Diagnostic, ParseResult, Severity } from '../model/diagnostics.js';
import { objectKey, UNREAD_KINDS_KEY } from '../model/k8s.js';
import type {
  ApiObjects,
  JsonObject,
  JsonValue,
  K8sObject,
  SourceRef,
  UnknownObject,
  WatchEvent,
  WatchEventType,
} from '../model/k8s.js';
import { isJsonObject, SharedValues, toK8sObject } from './k8s-convert.js';
import type { ConvertContext, JsonPath } from './k8s-convert.js';

const WATCH_TYPES: readonly WatchEventType[] = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'];
const MODELLED_KINDS = new Set(['Service', 'EndpointSlice', 'Pod', 'Node', 'ServiceCIDR', 'IPAddress']);

/** One top-level value of the input, with a way to find the line of any path inside it. */
interface TextDoc {
  readonly value: JsonValue;
  /** 1-based line where the value starts. */
  readonly line: number;
  /** 1-based line of the value at `path` (or of its nearest ancestor that exists). */
  readonly locate: (path: JsonPath) => number;
  /** Whether `locate` is cheap (YAML: positions known) or re-reads the text (JSON). */
  readonly cheapLocate: boolean;
}

/**
 * Lines of the input, split once, for diagnostic excerpts. Only the start of a line is
 * copied (what a diagnostic keeps, {@link EXCERPT_MAX}, and one more character so it
 * still knows to cut): a one-line JSON file's line is the whole file, and copying it for
 * each of N diagnostics (duplicate objects) made the parse quadratic.
 */
class Lines {
  private lines: string[] | undefined;
  constructor(private readonly text: string) {}
  at(line: number): string {
    this.lines ??= this.text.split('\n');
    const l = this.lines[line - 1] ?? '';
    const end = l.endsWith('\r') ? l.length - 1 : l.length;
    return ownCopy(l.slice(0, Math.min(end, EXCERPT_MAX + 1)));
  }
}

/** Diagnostics sink for one parse. */
class Sink {
  readonly diagnostics: Diagnostic[] = [];
  constructor(
    readonly origin: string,
    readonly lines: Lines,
  ) {}
  add(severity: Severity, line: number, code: string, message: string): void {
    this.diagnostics.push(diagnostic(severity, this.origin, line, line > 0 ? this.lines.at(line) : '', code, message));
  }
}

/** Line of `path` inside a parsed YAML document, walking up to the nearest existing node. */
function locateIn(doc: Document, lc: LineCounter, path: JsonPath, fallback: number): number {
  for (let n = path.length; n >= 0; n--) {
    const node = n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) return lc.linePos(node.range[0]).line;
  }
  return fallback;
}

/** What `\s` matches (ECMAScript WhiteSpace and LineTerminator, a byte-order mark included). */
function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** The first character that is not blank, `undefined` for blank text. A loop, not a regex: see {@link forgetLastMatch}. */
function firstNonBlank(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) if (!isSpace(text.charCodeAt(i))) return text[i];
  return undefined;
}

/**
 * V8 keeps the subject of the last regex match alive (the legacy `RegExp.input` / `$_`):
 * after a regex ran over the input (or a slice of it, as the YAML parser's do), the whole
 * text would stay in memory with the parsed model. One match on a tiny string lets it go.
 */
function forgetLastMatch(): void {
  /^/.exec('');
}

/** A flat copy of `s`: substrings of a big text are slices that keep all of it alive. */
function ownCopy(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'utf8').toString('utf8');
}

// ---- JSON ------------------------------------------------------------------------------

interface JsonChunk {
  readonly start: number;
  readonly end: number;
  readonly line: number;
}

/**
 * Splits text into top-level JSON objects/arrays by bracket depth (outside strings), so
 * concatenated and newline-delimited values both work. Anything else at top level is
 * reported line by line as `garbage`.
 */
function splitJson(text: string, sink: Sink): JsonChunk[] {
  const chunks: JsonChunk[] = [];
  let i = 0;
  let line = 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\uFEFF') {
      i++;
    } else if (c === '{' || c === '[') {
      const start = i;
      const startLine = line;
      let depth = 0;
      let inString = false;
      for (; i < text.length; i++) {
        const ch = text[i];
        if (ch === '\n') line++;
        if (inString) {
          if (ch === '\\') i++;
          else if (ch === '"') inString = false;
        } else if (ch === '"') inString = true;
        else if (ch === '{' || ch === '[') depth++;
        else if ((ch === '}' || ch === ']') && --depth === 0) {
          i++;
          break;
        }
      }
      chunks.push({ start, end: i, line: startLine });
    } else {
      const eol = text.indexOf('\n', i);
      i = eol < 0 ? text.length : eol;
      sink.add('warning', line, 'garbage', 'text outside any JSON object: skipped');
    }
  }
  return chunks;
}

/** The line a `JSON.parse` error points at, from V8's "at position N" (or "line N"). */
function jsonErrorLine(message: string, chunkText: string, chunkLine: number): number {
  const pos = /position (\d+)/.exec(message);
  if (pos) {
    const offset = Math.min(Number(pos[1]), chunkText.length);
    return chunkLine + (chunkText.slice(0, offset).match(/\n/g)?.length ?? 0);
  }
  const ln = /\(line (\d+)/.exec(message);
  if (ln) return chunkLine + Number(ln[1]) - 1;
  return chunkLine + (chunkText.match(/\n/g)?.length ?? 0);
}

/** JSON's four blanks (what `JSON.parse` skips around a value). */
function isJsonBlank(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/**
 * The common case, one value with blanks around it (`kubectl get -o json`), read by one
 * `JSON.parse` of the whole text: the same chunk and value {@link splitJson} would give,
 * without walking the text character by character first. Null when the text is anything
 * else (several values, garbage, a syntax error): the caller then splits.
 */
function wholeJson(text: string): { chunk: JsonChunk; value: JsonValue } | null {
  let start = 0;
  while (start < text.length && isJsonBlank(text.charCodeAt(start))) start++;
  let end = text.length;
  while (end > start && isJsonBlank(text.charCodeAt(end - 1))) end--;
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return null;
  }
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < start; i = text.indexOf('\n', i + 1)) line++;
  return { chunk: { start, end, line }, value };
}

function jsonDocs(text: string, sink: Sink): TextDoc[] {
  const docs: TextDoc[] = [];
  const whole = wholeJson(text);
  for (const chunk of whole ? [whole.chunk] : splitJson(text, sink)) {
    const chunkText = text.slice(chunk.start, chunk.end);
    let value: JsonValue;
    try {
      value = whole ? whole.value : (JSON.parse(chunkText) as JsonValue);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const truncated = /end of (JSON|data)|Unterminated/i.test(message);
      const line = jsonErrorLine(message, chunkText, chunk.line);
      sink.add('error', line, truncated ? 'truncated' : 'json-syntax', `JSON does not parse (${message}): value starting at line ${chunk.line} skipped`);
      continue;
    }
    // Positions are needed only for diagnostics: re-read lazily with the YAML parser.
    let located: { doc: Document; lc: LineCounter } | undefined;
    const locate = (path: JsonPath): number => {
      if (!located) {
        const lc = new LineCounter();
        located = { doc: parseDocument(chunkText, { lineCounter: lc, logLevel: 'silent', uniqueKeys: false }), lc };
      }
      return locateIn(located.doc, located.lc, path, 1) + chunk.line - 1;
    };
    docs.push({ value, line: chunk.line, locate, cheapLocate: false });
  }
  return docs;
}

// ---- YAML ------------------------------------------------------------------------------

function yamlDocs(text: string, sink: Sink): TextDoc[] {
  const lc = new LineCounter();
  const parsed = parseAllDocuments(text, { lineCounter: lc, logLevel: 'silent', uniqueKeys: false });
  if (!Array.isArray(parsed)) return []; // EmptyStream: nothing but comments
  const docs: TextDoc[] = [];
  for (const doc of parsed) {
    const start = isNode(doc.contents) && doc.contents.range ? lc.linePos(doc.contents.range[0]).line : lc.linePos(doc.range[0]).line;
    for (const w of doc.warnings) sink.add('info', lc.linePos(w.pos[0]).line, 'yaml-warning', w.message.split('\n')[0] ?? '');
    if (doc.errors.length > 0) {
      for (const err of doc.errors) {
        sink.add('error', err.linePos?.[0].line ?? lc.linePos(err.pos[0]).line, 'yaml-syntax',
          `YAML does not parse (${err.message.split('\n')[0] ?? ''}): document starting at line ${start} skipped`);
      }
      continue;
    }
    if (doc.contents === null) continue; // an empty document between `---` markers
    let value: JsonValue;
    try {
      // Round-trip through JSON: the model holds JSON values only (no Infinity, no undefined).
      value = JSON.parse(JSON.stringify(doc.toJS({ maxAliasCount: 100 }) ?? null)) as JsonValue;
    } catch (e) {
      sink.add('error', start, 'yaml-syntax', `YAML document cannot be read (${e instanceof Error ? e.message : String(e)}): skipped`);
      continue;
    }
    docs.push({ value, line: start, locate: (path) => locateIn(doc, lc, path, start), cheapLocate: true });
  }
  return docs;
}

// ---- from documents to objects -----------------------------------------------------------

/** One object found in a document: plain (upserted) or carried by a watch event. */
interface Found {
  readonly json: JsonObject;
  readonly path: JsonPath;
  readonly event: WatchEventType | undefined;
  readonly kindHint: string | undefined;
  readonly apiVersionHint: string | undefined;
}

/** An API object has at least one of kind, apiVersion, metadata (a YAML "error: …" line has none). */
function looksLikeApiObject(v: JsonObject): boolean {
  return 'kind' in v || 'apiVersion' in v || 'metadata' in v;
}

function isWatchEvent(v: JsonObject): boolean {
  return typeof v['type'] === 'string' && 'object' in v && v['kind'] === undefined && v['apiVersion'] === undefined;
}

/** Walks one top-level value into the objects it holds. */
function collect(doc: TextDoc, sink: Sink): Found[] {
  const out: Found[] = [];
  const plain = (v: JsonValue, path: JsonPath, kindHint?: string, apiVersionHint?: string): void => {
    if (isJsonObject(v) && (kindHint !== undefined || looksLikeApiObject(v))) {
      out.push({ json: v, path, event: undefined, kindHint, apiVersionHint });
    } else {
      const what = v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'a map without kind, apiVersion or metadata' : typeof v;
      sink.add('warning', doc.locate(path), 'not-an-object', `expected an API object, got ${what}: skipped`);
    }
  };
  const v = doc.value;
  if (Array.isArray(v)) {
    v.forEach((item, i) => plain(item, [i]));
  } else if (isJsonObject(v) && isWatchEvent(v)) {
    const type = v['type'] as string;
    if (!(WATCH_TYPES as readonly string[]).includes(type)) {
      sink.add('warning', doc.locate(['type']), 'unknown-event-type', `watch event type "${type}" is not one of ${WATCH_TYPES.join(', ')}: skipped`);
    } else if (!isJsonObject(v['object'])) {
      sink.add('warning', doc.locate(['object']), 'not-an-object', `watch event ${type} without an object: skipped`);
    } else {
      out.push({ json: v['object'], path: ['object'], event: type as WatchEventType, kindHint: undefined, apiVersionHint: undefined });
    }
  } else if (isJsonObject(v) && Array.isArray(v['items']) && (v['kind'] === undefined || (typeof v['kind'] === 'string' && v['kind'].endsWith('List')))) {
    const kind = typeof v['kind'] === 'string' && v['kind'] !== 'List' ? v['kind'].slice(0, -'List'.length) : undefined;
    const apiVersion = typeof v['apiVersion'] === 'string' ? v['apiVersion'] : undefined;
    v['items'].forEach((item, i) => plain(item, ['items', i], kind, apiVersion));
  } else {
    plain(v, []);
  }
  return out;
}

/** The kind of an object: its `kind`, the list's kind, or inferred from a field only one kind has. */
function resolveKind(found: Found, report: (sev: Severity, code: string, msg: string) => void): string {
  const k = found.json['kind'];
  if (typeof k === 'string' && k !== '') return k;
  if (found.kindHint) return found.kindHint;
  if ('addressType' in found.json) {
    report('info', 'kind-inferred', 'no kind: read as an EndpointSlice (it has addressType)');
    return 'EndpointSlice';
  }
  report('warning', 'missing-kind', 'no kind and none can be inferred: kept as an unknown object');
  return '';
}

function label(json: JsonObject): string {
  const m = isJsonObject(json['metadata']) ? json['metadata'] : {};
  const ns = typeof m['namespace'] === 'string' ? `${m['namespace']}/` : '';
  return `${ns}${typeof m['name'] === 'string' ? m['name'] : '?'}`;
}

/**
 * Converts one found object, reporting through `sink` at lines found by `locate`;
 * `share` (JSON the parser made itself only) lets equal values inside it be kept once.
 */
function convert(found: Found, source: SourceRef, locate: (path: JsonPath) => number, sink: Sink, share?: SharedValues): K8sObject {
  // The label is text for a finding only: made when the first one is reported.
  let named: string | undefined;
  const where = (): string => (named ??= label(found.json));
  const report = (sev: Severity, code: string, msg: string): void => sink.add(sev, locate(found.path), code, `${where()}: ${msg}`);
  const kind = resolveKind(found, report);
  const ctx: ConvertContext = {
    source,
    ...(share ? { share } : {}),
    report: (sev, path, code, msg) => sink.add(sev, locate([...found.path, ...path]), code, `${kind || 'object'} ${where()}: ${msg}`),
  };
  const obj = toK8sObject(found.json, kind, ctx);
  const withVersion = obj.apiVersion === undefined && found.apiVersionHint ? { ...obj, apiVersion: found.apiVersionHint } : obj;
  // A BOOKMARK carries only a resourceVersion, an ERROR a Status: neither is a cluster object.
  if (found.event === 'BOOKMARK' || found.event === 'ERROR') return withVersion;
  if (!MODELLED_KINDS.has(kind) && kind !== '') report('info', 'unknown-kind', `kind ${kind} is not modelled: kept whole`);
  if (withVersion.meta.name === '') report('warning', 'missing-name', 'object without metadata.name');
  return withVersion;
}

/** Mutable, insertion-ordered store used while parsing; replacing keeps the position. */
class Store {
  private readonly byKey = new Map<string, K8sObject>();
  /** Stores `o`; returns its key when it replaced an object with that key, else `undefined`. */
  put(o: K8sObject): string | undefined {
    const key = objectKey(o);
    const had = this.byKey.has(key);
    this.byKey.set(key, o);
    return had ? key : undefined;
  }
  delete(o: K8sObject): void {
    this.byKey.delete(objectKey(o));
  }
  result(): ApiObjects {
    return splitByKind([...this.byKey.values()]);
  }
}

function splitByKind(all: readonly K8sObject[]): ApiObjects {
  return {
    services: all.filter((o) => o.kind === 'Service'),
    endpointSlices: all.filter((o) => o.kind === 'EndpointSlice'),
    pods: all.filter((o) => o.kind === 'Pod'),
    nodes: all.filter((o) => o.kind === 'Node'),
    serviceCIDRs: all.filter((o) => o.kind === 'ServiceCIDR'),
    ipAddresses: all.filter((o) => o.kind === 'IPAddress'),
    others: all.filter((o): o is UnknownObject => o.kind === 'unknown'),
  };
}

/** Text of a `Status` object for ERROR events: `410 Expired: too old resource version`. */
function statusText(o: JsonObject): string {
  const parts = [o['code'], o['reason']].filter((x) => typeof x === 'number' || typeof x === 'string');
  const msg = typeof o['message'] === 'string' ? `: ${o['message']}` : '';
  return `${parts.join(' ')}${msg}`;
}

/**
 * Parses Kubernetes API objects from `kubectl`/REST output (JSON or YAML, see module doc).
 *
 * Returns the objects in input order by kind. Never throws: text that does not parse is
 * reported (with its 1-based line) and the rest is kept.
 */
export function parseK8sObjects(text: string, origin: string): ParseResult<ApiObjects> {
  const sink = new Sink(origin, new Lines(text));
  const first = firstNonBlank(text);
  let docs: TextDoc[];
  try {
    docs = first === '{' || first === '[' ? jsonDocs(text, sink) : yamlDocs(text, sink);
  } catch (e) {
    // The YAML parser recurses once per level: a value nested thousands deep overflows it.
    if (!(e instanceof RangeError)) throw e;
    sink.add('error', 1, 'too-deep', `the text cannot be read (${e.message}): nested too deep`);
    docs = [];
  }
  const store = new Store();
  const share = new SharedValues();
  // All items of a JSON list have the list's line: one SourceRef for each line.
  const sources = new Map<number, SourceRef>();
  for (const doc of docs) {
    for (const found of collect(doc, sink)) {
      // Re-reading a JSON document for positions costs far more than the parse itself:
      // objects of a JSON document carry the document's line, diagnostics the exact one.
      const line = doc.cheapLocate ? doc.locate(found.path) : doc.line;
      let source = sources.get(line);
      if (source === undefined) sources.set(line, (source = { origin, line }));
      let obj: K8sObject;
      try {
        obj = convert(found, source, doc.locate, sink, share);
      } catch (e) {
        // Reading is iterative or depth-limited; this keeps one hostile object from taking the rest with it.
        if (!(e instanceof RangeError)) throw e;
        sink.add('error', line, 'too-deep', `${label(found.json)}: cannot be read (${e.message}): nested too deep; skipped`);
        continue;
      }
      if (found.event === undefined) {
        const again = store.put(obj);
        if (again !== undefined) sink.add('warning', line, 'duplicate-object', `${again} appears again: the later one is kept`);
      } else if (found.event === 'ADDED' || found.event === 'MODIFIED') {
        store.put(obj);
      } else if (found.event === 'DELETED') {
        store.delete(obj);
      } else if (found.event === 'ERROR') {
        sink.add('warning', line, 'watch-error', `watch ERROR event: ${statusText(found.json)}`);
      }
    }
  }
  forgetLastMatch();
  const unread = unreadKinds(docs);
  const value = store.result();
  return { value: unread.length > 0 ? { ...value, unread } : value, diagnostics: sink.diagnostics };
}

/** The List's {@link UNREAD_KINDS_KEY} strings (the optional kinds the reader could not read), in document order. */
function unreadKinds(docs: readonly TextDoc[]): string[] {
  const out: string[] = [];
  for (const doc of docs) {
    const v = doc.value;
    const list = isJsonObject(v) ? v[UNREAD_KINDS_KEY] : undefined;
    if (Array.isArray(list)) for (const x of list) if (typeof x === 'string') out.push(x);
  }
  return out;
}

/**
 * Reads one watch event as the API (or client-node's `Watch` callback, as `{type, object}`)
 * delivers it. Returns `value: undefined` with a warning when it is not a watch event.
 * An ERROR event carries its `Status` as an unknown object and a `watch-error` warning.
 * Diagnostics have line 0 (there is no text).
 */
export function parseWatchEvent(event: JsonValue, origin: string): ParseResult<WatchEvent | undefined> {
  const sink = new Sink(origin, new Lines(''));
  if (!isJsonObject(event) || !isWatchEvent(event)) {
    sink.add('warning', 0, 'not-an-object', 'not a watch event ({"type": …, "object": {…}})');
    return { value: undefined, diagnostics: sink.diagnostics };
  }
  const found = collect({ value: event, line: 0, locate: () => 0, cheapLocate: true }, sink)[0];
  if (!found?.event) return { value: undefined, diagnostics: sink.diagnostics };
  const object = convert(found, { origin, line: 0 }, () => 0, sink);
  if (found.event === 'ERROR') sink.add('warning', 0, 'watch-error', `watch ERROR event: ${statusText(found.json)}`);
  return { value: { type: found.event, object }, diagnostics: sink.diagnostics };
}

function upsert<T extends K8sObject>(list: readonly T[], o: T): T[] {
  const key = objectKey(o);
  const i = list.findIndex((x) => objectKey(x) === key);
  return i < 0 ? [...list, o] : list.map((x, j) => (j === i ? o : x));
}

function without<T extends K8sObject>(list: readonly T[], o: K8sObject): T[] {
  const key = objectKey(o);
  return list.filter((x) => objectKey(x) !== key);
}

/**
 * Applies one watch event to `objects` and returns a new ApiObjects (the input is not
 * changed). ADDED and MODIFIED insert or replace by kind/namespace/name, keeping the
 * position of a replaced object; DELETED removes; BOOKMARK and ERROR change nothing
 * (on ERROR, e.g. 410 Expired, the reader must list again).
 */
export function applyWatchEvent(objects: ApiObjects, event: WatchEvent): ApiObjects {
  if (event.type === 'BOOKMARK' || event.type === 'ERROR') return objects;
  const o = event.object;
  const change = <T extends K8sObject>(list: readonly T[], item: T): T[] =>
    event.type === 'DELETED' ? without(list, item) : upsert(list, item);
  switch (o.kind) {
    case 'Service':
      return { ...objects, services: change(objects.services, o) };
    case 'EndpointSlice':
      return { ...objects, endpointSlices: change(objects.endpointSlices, o) };
    case 'Pod':
      return { ...objects, pods: change(objects.pods, o) };
    case 'Node':
      return { ...objects, nodes: change(objects.nodes, o) };
    case 'ServiceCIDR':
      return { ...objects, serviceCIDRs: change(objects.serviceCIDRs, o) };
    case 'IPAddress':
      return { ...objects, ipAddresses: change(objects.ipAddresses, o) };
    case 'unknown':
      return { ...objects, others: change(objects.others, o) };
  }
}

/**
 * Formats objects back to JSON text from their `raw` JSON: one typed list per kind
 * (`ServiceList`, `EndpointSliceList`, `PodList`, `NodeList`, then `<Kind>List` per other
 * kind), concatenated, each pretty-printed with 4 spaces as kubectl does. Typed lists let
 * items that came without `kind` (REST list output) read back as the same kind, so
 * `parseK8sObjects(formatK8sObjects(x))` gives `x` again (except `source`).
 */
export function formatK8sObjects(objects: ApiObjects): string {
  const groups: { kind: string; items: K8sObject[] }[] = [
    { kind: 'Service', items: [...objects.services] },
    { kind: 'EndpointSlice', items: [...objects.endpointSlices] },
    { kind: 'Pod', items: [...objects.pods] },
    { kind: 'Node', items: [...objects.nodes] },
    { kind: 'ServiceCIDR', items: [...objects.serviceCIDRs] },
    { kind: 'IPAddress', items: [...objects.ipAddresses] },
  ];
  const kindless: UnknownObject[] = [];
  for (const o of objects.others) {
    if (o.apiKind === '') {
      kindless.push(o);
      continue;
    }
    const g = groups.find((x) => x.kind === o.apiKind);
    if (g) g.items.push(o);
    else groups.push({ kind: o.apiKind, items: [o] });
  }
  const texts = groups
    .filter((g) => g.items.length > 0)
    .map((g) => {
      // A list without apiVersion stays without, so items without one read back the same.
      const apiVersion = g.items.find((o) => o.apiVersion !== undefined)?.apiVersion;
      const head = apiVersion === undefined ? {} : { apiVersion };
      return JSON.stringify({ ...head, kind: `${g.kind}List`, items: g.items.map((o) => o.raw) }, null, 4);
    });
  for (const o of kindless) texts.push(JSON.stringify(o.raw, null, 4));
  return texts.length > 0 ? `${texts.join('\n')}\n` : '';
}

/**
 * Reading tours: YAML text → {@link Tour}, validated field by field. Every problem is a
 * {@link Diagnostic} naming the 1-based line and the field (`steps[2].narration.ja:
 * missing`), so a workshop author fixes the file without guessing. Parsing is pure and
 * never throws ({@link parseTour}); {@link loadTourFile} / {@link loadTour} read files and
 * throw a {@link ParseError} that lists every problem.
 *
 * YAML is read with the `yaml` package (`parseDocument` with a `LineCounter`), so lines
 * come from the parser's own node ranges.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode, type YAMLMap } from 'yaml';
import { ParseError, said, UserError } from '../errors.js';
import { diagnostic, formatDiagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import { parseIp } from '../model/iproute.js';
import { parseServiceRef } from '../model/service-ref.js';
import { packageRoot } from '../paths.js';
import { parsePacketArgs } from '../trace/packet.js';
import {
  PACKET_FOCI,
  TARGET_PANES,
  TOUR_LANGS,
  TOUR_PANES,
  TOUR_TARGET_KINDS,
  type Localized,
  type PacketFocus,
  type ServiceHop,
  type Tour,
  type TourPane,
  type TourStep,
  type TourTarget,
  type TourTargetKind,
} from './model.js';

/**
 * Options of {@link parseTour}. `captureExists(name)` says whether a fixture bundle is
 * shipped; without it captures are not checked (and no step is dropped).
 */
export interface TourParseOptions {
  readonly captureExists?: (name: string) => boolean;
}

/** The other keys each target kind accepts besides its kind key. */
const TARGET_KEYS: Readonly<Record<TourTargetKind, readonly string[]>> = {
  service: [],
  endpoints: [],
  chain: ['table', 'ruleset', 'match'],
  serviceChain: ['hop', 'endpoint', 'port'],
  set: ['table', 'match'],
  lbEntry: [],
  flow: ['service'],
  packet: ['flags', 'entry', 'focus'],
  dns: [],
  compare: [],
};

const HOPS: readonly ServiceHop[] = ['services', 'service', 'endpoint'];
const ID_RE = /^[a-z0-9][a-z0-9-]*$/;
const CAPTURE_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const FRONTEND_RE = /^(\[[0-9a-fA-F:.]+\]|[0-9.]+):(\d{1,5})\/(TCP|UDP|SCTP|ANY)$/i;

/** Collects problems with their lines; `at(node)` is the node's 1-based line. */
class Checker {
  readonly diagnostics: Diagnostic[] = [];
  constructor(
    private readonly origin: string,
    private readonly lines: readonly string[],
    private readonly counter: LineCounter,
  ) {}

  at(node: YamlNode | null | undefined, fallback = 1): number {
    const offset = node?.range?.[0];
    return offset === undefined ? fallback : this.counter.linePos(offset).line;
  }

  error(line: number, field: string, message: string): void {
    this.diagnostics.push(diagnostic('error', this.origin, line, this.lines[line - 1] ?? '', 'tour-field', `${field}: ${message}`));
  }

  info(line: number, field: string, message: string): void {
    this.diagnostics.push(diagnostic('info', this.origin, line, this.lines[line - 1] ?? '', 'tour-step-dropped', `${field}: ${message}`));
  }
}

/** A map's value node for `key` (undefined when absent). */
function get(map: YAMLMap, key: string): YamlNode | undefined {
  const pair = map.items.find((p) => isScalar(p.key) && p.key.value === key);
  return (pair?.value ?? undefined) as YamlNode | undefined;
}

function keyNode(map: YAMLMap, key: string): YamlNode | undefined {
  return map.items.find((p) => isScalar(p.key) && p.key.value === key)?.key as YamlNode | undefined;
}

function keysOf(map: YAMLMap): string[] {
  return map.items.map((p) => (isScalar(p.key) ? String(p.key.value) : '?'));
}

/** Reports keys of `map` not in `allowed`, each at its own line. */
function unknownKeys(c: Checker, map: YAMLMap, allowed: readonly string[], field: string): void {
  for (const k of keysOf(map)) {
    if (!allowed.includes(k)) c.error(c.at(keyNode(map, k), c.at(map)), field ? `${field}.${k}` : k, `unknown key (expected one of: ${allowed.join(', ')})`);
  }
}

/**
 * A scalar string (numbers are accepted as their text); null with an error otherwise.
 * `missingLine`: where a missing value is reported (the line of the key holding `map`).
 */
function str(c: Checker, map: YAMLMap, key: string, field: string, required: boolean, missingLine = c.at(map)): string | null {
  const node = get(map, key);
  if (node === undefined || (isScalar(node) && node.value === null)) {
    if (required) c.error(missingLine, field, 'missing');
    return null;
  }
  if (!isScalar(node) || (typeof node.value !== 'string' && typeof node.value !== 'number')) {
    c.error(c.at(node), field, 'must be a text value');
    return null;
  }
  const text = String(node.value).trim();
  if (text === '') {
    c.error(c.at(node), field, 'is empty');
    return null;
  }
  return text;
}

/**
 * Narration as written in a folded YAML block (`>-`): YAML joins the lines with a space,
 * which Japanese does not have between two full-width characters or next to full-width
 * punctuation (`、。「」（）`), so such a space goes.
 */
export function normalizeNarration(text: string): string {
  return text
    .replace(/([、。，．（「『【]) /gu, '$1')
    .replace(/ (?=[、。，．）」』】])/gu, '').replace(/([\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]) (?=[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef])/gu, '$1');
}

/** `{ en: …, ja: … }`, every language present, non-empty, and not a copy of another. */
function localized(c: Checker, parent: YAMLMap, key: string, field: string): Localized | null {
  const node = get(parent, key);
  if (node === undefined) {
    c.error(c.at(parent), field, `missing (write it in ${TOUR_LANGS.join(' and ')})`);
    return null;
  }
  if (!isMap(node)) {
    c.error(c.at(node), field, `must be a mapping of ${TOUR_LANGS.join(', ')} to text`);
    return null;
  }
  unknownKeys(c, node, TOUR_LANGS, field);
  const out: Partial<Record<string, string>> = {};
  for (const lang of TOUR_LANGS) {
    const text = str(c, node, lang, `${field}.${lang}`, true, c.at(keyNode(parent, key)));
    if (text !== null) out[lang] = normalizeNarration(text);
  }
  if (out['en'] !== undefined && out['ja'] !== undefined && out['en'] === out['ja']) {
    c.error(c.at(get(node, 'ja')), `${field}.ja`, 'is the same text as en (translate it)');
    return null;
  }
  return TOUR_LANGS.every((l) => out[l] !== undefined) ? (out as Localized) : null;
}

function serviceName(c: Checker, value: string | null, node: YamlNode | undefined, field: string): string | null {
  if (value === null) return null;
  if (!parseServiceRef(value)) {
    c.error(c.at(node), field, `${JSON.stringify(value)} is not namespace/name`);
    return null;
  }
  return value;
}

function oneOf<T extends string>(c: Checker, value: string | null, allowed: readonly T[], node: YamlNode | undefined, field: string): T | null {
  if (value === null) return null;
  if (!(allowed as readonly string[]).includes(value)) {
    c.error(c.at(node), field, `${JSON.stringify(value)} is not one of: ${allowed.join(', ')}`);
    return null;
  }
  return value as T;
}

/** `FROM -> TO/PROTO` split in two; the words are then checked by step mode's own parser. */
function packetTarget(c: Checker, map: YAMLMap, text: string, field: string): TourTarget | null {
  const node = get(map, 'packet');
  const parts = text.split(/\s*(?:->|→)\s*/);
  if (parts.length !== 2 || !parts[0] || !parts[1]) {
    c.error(c.at(node), `${field}.packet`, `${JSON.stringify(text)} is not "FROM -> TO/PROTO" (e.g. 10.244.0.9:33052 -> 10.96.12.34:80/tcp)`);
    return null;
  }
  const flags = str(c, map, 'flags', `${field}.flags`, false);
  const entry = str(c, map, 'entry', `${field}.entry`, false);
  const focusText = str(c, map, 'focus', `${field}.focus`, false);
  const focus = focusText === null ? 'nat' : oneOf<PacketFocus>(c, focusText, PACKET_FOCI, get(map, 'focus'), `${field}.focus`);
  try {
    parsePacketArgs({ from: parts[0], to: parts[1], ...(flags ? { flags } : {}), ...(entry ? { entry } : {}) });
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    c.error(c.at(node), `${field}.packet`, e.message);
    return null;
  }
  if (focus === null) return null;
  return { kind: 'packet', from: parts[0], to: parts[1], flags, entry, focus };
}

function target(c: Checker, step: YAMLMap, field: string): TourTarget | null {
  const node = get(step, 'target');
  if (node === undefined) {
    c.error(c.at(step), field, `missing (one of: ${TOUR_TARGET_KINDS.join(', ')})`);
    return null;
  }
  if (!isMap(node)) {
    c.error(c.at(node), field, 'must be a mapping such as { service: default/web }');
    return null;
  }
  const named = keysOf(node).filter((k): k is TourTargetKind => (TOUR_TARGET_KINDS as readonly string[]).includes(k));
  // `service` is both a kind and an option of `flow`: an option of another named kind is not a kind.
  const kinds = named.filter((k) => !named.some((o) => o !== k && TARGET_KEYS[o].includes(k)));
  if (kinds.length !== 1) {
    c.error(c.at(keyNode(step, 'target')), field, kinds.length === 0 ? `names no object (one key of: ${TOUR_TARGET_KINDS.join(', ')})` : `names ${kinds.length} objects (${kinds.join(', ')}); a step highlights one`);
    return null;
  }
  const kind = kinds[0]!;
  unknownKeys(c, node, [kind, ...TARGET_KEYS[kind]], field);
  const f = `${field}.${kind}`;
  const at = c.at(keyNode(step, 'target'));
  const value = str(c, node, kind, f, true);
  if (value === null) return null;
  const valueNode = get(node, kind);
  switch (kind) {
    case 'service':
    case 'endpoints':
    case 'dns':
    case 'compare': {
      const service = serviceName(c, value, valueNode, f);
      return service === null ? null : { kind, service };
    }
    case 'chain': {
      const table = str(c, node, 'table', `${field}.table`, true, at);
      const rulesetText = str(c, node, 'ruleset', `${field}.ruleset`, false);
      const ruleset = rulesetText === null ? null : oneOf(c, rulesetText, ['iptables', 'nft'] as const, get(node, 'ruleset'), `${field}.ruleset`);
      if (table === null || (rulesetText !== null && ruleset === null)) return null;
      return { kind, chain: value, table, ruleset, match: str(c, node, 'match', `${field}.match`, false) };
    }
    case 'serviceChain': {
      const service = serviceName(c, value, valueNode, f);
      const hop = oneOf(c, str(c, node, 'hop', `${field}.hop`, true, at), HOPS, get(node, 'hop'), `${field}.hop`);
      const endpoint = str(c, node, 'endpoint', `${field}.endpoint`, false);
      if (endpoint !== null && !parseIp(endpoint)) {
        c.error(c.at(get(node, 'endpoint')), `${field}.endpoint`, `${JSON.stringify(endpoint)} is not an IP address`);
        return null;
      }
      if (endpoint !== null && hop !== 'endpoint') {
        c.error(c.at(get(node, 'endpoint')), `${field}.endpoint`, 'only hop: endpoint names an endpoint');
        return null;
      }
      if (service === null || hop === null) return null;
      return { kind, service, hop, endpoint, port: str(c, node, 'port', `${field}.port`, false) };
    }
    case 'set': {
      const table = str(c, node, 'table', `${field}.table`, true, at);
      return table === null ? null : { kind, set: value, table, match: str(c, node, 'match', `${field}.match`, false) };
    }
    case 'lbEntry':
      if (!FRONTEND_RE.test(value)) {
        c.error(c.at(valueNode), f, `${JSON.stringify(value)} is not VIP:PORT/PROTO (e.g. 10.96.12.34:80/TCP)`);
        return null;
      }
      return { kind, frontend: value.replace(/\/(\w+)$/, (_, p: string) => `/${p.toUpperCase()}`) };
    case 'flow': {
      const serviceText = str(c, node, 'service', `${field}.service`, false);
      const service = serviceText === null ? null : serviceName(c, serviceText, get(node, 'service'), `${field}.service`);
      if (serviceText !== null && service === null) return null;
      return { kind, words: value, service };
    }
    case 'packet':
      return packetTarget(c, node, value, field);
  }
}

function step(c: Checker, node: YamlNode, i: number, defaultCapture: string | null, options: TourParseOptions): TourStep | 'dropped' | null {
  const field = `steps[${i}]`;
  if (!isMap(node)) {
    c.error(c.at(node), field, 'must be a mapping with pane, target and narration');
    return null;
  }
  unknownKeys(c, node, ['pane', 'capture', 'optional', 'target', 'narration'], field);
  const pane = oneOf<TourPane>(c, str(c, node, 'pane', `${field}.pane`, true), TOUR_PANES, get(node, 'pane'), `${field}.pane`);
  const captureText = str(c, node, 'capture', `${field}.capture`, false);
  const optionalNode = get(node, 'optional');
  let optional = false;
  if (optionalNode !== undefined) {
    if (!isScalar(optionalNode) || typeof optionalNode.value !== 'boolean') c.error(c.at(optionalNode), `${field}.optional`, 'must be true or false');
    else optional = optionalNode.value;
  }
  const tgt = target(c, node, `${field}.target`);
  const narration = localized(c, node, 'narration', `${field}.narration`);
  if (tgt && pane && !TARGET_PANES[tgt.kind].includes(pane)) {
    c.error(c.at(get(node, 'pane')), `${field}.pane`, `a ${tgt.kind} target is shown on ${TARGET_PANES[tgt.kind].join(' or ')}, not ${pane}`);
    return null;
  }
  let capture = defaultCapture;
  if (captureText !== null) {
    if (!CAPTURE_RE.test(captureText)) {
      c.error(c.at(get(node, 'capture')), `${field}.capture`, `${JSON.stringify(captureText)} is not a fixture bundle name`);
      return null;
    }
    capture = captureText;
  }
  if (capture !== null && options.captureExists && !options.captureExists(capture)) {
    const line = c.at(get(node, 'capture') ?? node);
    if (optional) {
      c.info(line, `${field}.capture`, `${capture} is not shipped: optional step left out`);
      return 'dropped';
    }
    c.error(line, `${field}.capture`, `no fixture bundle ${JSON.stringify(capture)} (mark the step optional: true if it may be absent)`);
    return null;
  }
  if (!pane || !tgt || !narration || capture === null) return null;
  return { capture, pane, target: tgt, narration, optional, line: c.at(node) };
}

/**
 * Parses and validates tour YAML. `value` is null when any error-severity diagnostic was
 * found (a tour with a broken step is not shown half-right); dropped optional steps are
 * `info` diagnostics. Never throws.
 */
export function parseTour(text: string, origin: string, options: TourParseOptions = {}): ParseResult<Tour | null> {
  const counter = new LineCounter();
  const lines = text.split(/\r?\n/);
  const c = new Checker(origin, lines, counter);
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  for (const e of doc.errors) {
    const line = e.linePos?.[0]?.line ?? counter.linePos(e.pos[0]).line;
    c.error(line, '(yaml)', e.message.split('\n')[0] ?? e.message);
  }
  if (doc.errors.length > 0) return { value: null, diagnostics: c.diagnostics };
  const root = doc.contents;
  if (!isMap(root)) {
    c.error(c.at(root as YamlNode | null), '(document)', 'must be a mapping with id, title, capture and steps');
    return { value: null, diagnostics: c.diagnostics };
  }
  unknownKeys(c, root, ['id', 'title', 'capture', 'steps'], '');
  const id = str(c, root, 'id', 'id', true);
  if (id !== null && !ID_RE.test(id)) c.error(c.at(get(root, 'id')), 'id', `${JSON.stringify(id)}: use lower-case letters, digits and dashes`);
  const stem = path.basename(origin).replace(/\.ya?ml$/, '');
  if (id !== null && /\.ya?ml$/.test(origin) && id !== stem) c.error(c.at(get(root, 'id')), 'id', `${JSON.stringify(id)} differs from the file name ${JSON.stringify(stem)} (nodescope tour NAME finds tours by file name)`);
  const title = localized(c, root, 'title', 'title');
  const capture = str(c, root, 'capture', 'capture', true);
  if (capture !== null && !CAPTURE_RE.test(capture)) c.error(c.at(get(root, 'capture')), 'capture', `${JSON.stringify(capture)} is not a fixture bundle name`);
  const stepsNode = get(root, 'steps');
  const steps: TourStep[] = [];
  if (stepsNode === undefined || !isSeq(stepsNode) || stepsNode.items.length === 0) {
    c.error(c.at(stepsNode ?? root), 'steps', 'must be a non-empty list of steps');
  } else {
    stepsNode.items.forEach((item, i) => {
      const s = step(c, item as YamlNode, i, capture, options);
      if (s && s !== 'dropped') steps.push(s);
    });
    if (steps.length === 0 && !c.diagnostics.some((d) => d.severity === 'error')) c.error(c.at(stepsNode), 'steps', 'every step was left out (their captures are not shipped)');
  }
  const failed = c.diagnostics.some((d) => d.severity === 'error');
  if (failed || id === null || title === null || capture === null) return { value: null, diagnostics: c.diagnostics };
  return { value: { id, title, capture, steps, origin }, diagnostics: c.diagnostics };
}

/** The directory holding the shipped tours (`fixtures/tours`). */
export function toursDir(): string {
  return path.join(packageRoot(), 'fixtures', 'tours');
}

/** Whether fixture bundle `name` is shipped (`fixtures/NAME/manifest.json`). */
export function fixtureBundleExists(name: string): boolean {
  return existsSync(path.join(packageRoot(), 'fixtures', name, 'manifest.json'));
}

/** The names of the shipped tours (file names without `.yaml`), sorted. */
export function tourNames(dir = toursDir()): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => f.replace(/\.ya?ml$/, ''))
    .sort();
}

/**
 * Reads and validates a tour file. Throws {@link ParseError} (origin = the file, line of
 * the first problem; the message lists every problem as `file:line: error: field: …`).
 */
export function loadTourFile(file: string, options: TourParseOptions = { captureExists: fixtureBundleExists }): Tour {
  const result = parseTour(readFileSync(file, 'utf8'), file, options);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (result.value === null || errors.length > 0) {
    const first = errors[0];
    const more = errors.length > 1 ? `\n${errors.slice(1).map(formatDiagnostic).join('\n')}` : '';
    throw new ParseError(`${first?.message ?? 'invalid tour'}${more}`, file, first?.line ?? 0, first?.text ?? '');
  }
  return result.value;
}

/**
 * Loads shipped tour `name` (`fixtures/tours/NAME.yaml`). Throws {@link UserError} naming
 * the shipped tours when there is none of that name, {@link ParseError} when it is invalid.
 */
export function loadTour(name: string, dir = toursDir()): Tour {
  const file = ['yaml', 'yml'].map((ext) => path.join(dir, `${name}.${ext}`)).find((f) => existsSync(f));
  if (!/^[A-Za-z0-9._-]+$/.test(name) || file === undefined) {
    const names = tourNames(dir);
    throw new UserError(said('ue.tour.none', { name: JSON.stringify(name) }), names.length ? said('ue.tour.oneOf', { list: names.join(', ') }) : said('ue.tour.putIn', { dir }));
  }
  return loadTourFile(file);
}

/**
 * Parser and formatter for `ipset list` / `ipset -L` (plain output, optionally `-t`
 * terse) as ipset 6.x/7.x prints it (ipset(8); ipset `lib/session.c` list printing):
 *
 * ```
 * Name: KUBE-CLUSTER-IP
 * Type: hash:ip,port
 * Revision: 5
 * Header: family inet hashsize 1024 maxelem 65536 comment
 * Size in memory: 640
 * References: 2
 * Number of entries: 7
 * Members:
 * 10.96.0.10,tcp:53 comment "kube-system/kube-dns:dns-tcp"
 * ```
 *
 * Sets are separated by a blank line. `-t` (terse) prints no `Members:` section. Old
 * ipset versions print no `Revision:`/`Number of entries:` lines; both are optional.
 * The parser is line-fed ({@link createIpsetParser}) and never throws.
 */
import { isIP } from 'node:net';
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import type { IpsetDimension, IpsetMember, IpsetPart, IpsetSet } from '../model/ipvs.js';
import type { LineParser } from './ipvsadm.js';

const DIMENSIONS: readonly IpsetDimension[] = ['ip', 'net', 'port', 'mac', 'iface', 'mark', 'set'];
/** Header keywords printed without a value (ipset(8) CREATE options). */
const HEADER_FLAGS = new Set(['counters', 'comment', 'skbinfo', 'forceadd', 'nomatch']);
/** Member extensions printed without a value. */
const MEMBER_FLAGS = new Set(['nomatch']);

interface SetDraft {
  name: string;
  line: number;
  type: string | null;
  revision: number | null;
  header: [string, string | null][];
  family: 'inet' | 'inet6' | null;
  sizeInMemory: number | null;
  references: number | null;
  numberOfEntries: number | null;
  members: IpsetMember[] | null;
}

/**
 * Splits on blanks, keeping `"…"` together (ipset prints `comment "text"` with the
 * comment quoted; the quotes are removed in the token).
 */
function tokenize(text: string): string[] | null {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2]!.includes('"')) return null;
    else out.push(m[2]!);
  }
  return out;
}

/** Decodes one comma-separated part of an element according to its dimension; null if it does not fit. */
export function parseIpsetPart(dim: IpsetDimension, text: string): IpsetPart | null {
  switch (dim) {
    case 'ip':
      return isIP(text) ? { dim, address: text } : null;
    case 'net': {
      const [addr, len, extra] = text.split('/');
      if (extra !== undefined || !addr || !isIP(addr)) return null;
      if (len === undefined) return { dim, address: addr, prefixLen: null };
      const max = isIP(addr) === 4 ? 32 : 128;
      const n = /^\d+$/.test(len) ? Number(len) : NaN;
      return n <= max ? { dim, address: addr, prefixLen: n } : null;
    }
    case 'port': {
      const colon = text.indexOf(':');
      const protocol = colon >= 0 ? text.slice(0, colon) : null;
      const rest = colon >= 0 ? text.slice(colon + 1) : text;
      if (protocol !== null && !/^[a-z][a-z0-9-]*$/i.test(protocol)) return null;
      if (/^\d+$/.test(rest)) return Number(rest) <= 65535 ? { dim, protocol, port: Number(rest), text } : null;
      // ICMP type names (`icmp:echo-request`, `icmpv6:…`) or type/code (`icmp:8/0`).
      if ((protocol === 'icmp' || protocol === 'icmpv6') && /^[\w/-]+$/.test(rest)) return { dim, protocol, port: null, text };
      return null;
    }
    case 'mac':
      return /^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$/.test(text) ? { dim, mac: text } : null;
    case 'iface': {
      const physdev = text.startsWith('physdev:');
      const name = physdev ? text.slice('physdev:'.length) : text;
      return name !== '' ? { dim, name, physdev } : null;
    }
    case 'mark':
      return /^(0x[0-9a-f]+|\d+)$/i.test(text) ? { dim, mark: Number(text) } : null;
    case 'set':
      return text !== '' ? { dim, name: text } : null;
  }
}

/** The dimensions of a set type (`hash:ip,port,net` → ip, port, net); null for unknown words. */
export function ipsetDimensions(type: string): IpsetDimension[] | null {
  const colon = type.indexOf(':');
  if (colon < 0) return null;
  const dims = type.slice(colon + 1).split(',');
  return dims.every((d): d is IpsetDimension => (DIMENSIONS as readonly string[]).includes(d)) ? dims : null;
}

/** The state of one `ipset list` reading: what was read so far and the set being read. */
interface IpsetReading {
  readonly origin: string;
  readonly diagnostics: Diagnostic[];
  readonly sets: IpsetSet[];
  draft: SetDraft | null;
  inMembers: boolean;
  lineNo: number;
}

function report(st: IpsetReading, sev: 'error' | 'warning', text: string, code: string, message: string): void {
  st.diagnostics.push(diagnostic(sev, st.origin, st.lineNo, text, code, message));
}

/** Ends the set being read (if any): it joins `st.sets`, with a warning when its Type: or its member count is off. */
function closeSet(st: IpsetReading): void {
  const draft = st.draft;
  if (!draft) return;
  const { origin, diagnostics } = st;
  const type = draft.type ?? '';
  const colon = type.indexOf(':');
  if (draft.type === null) {
    diagnostics.push(diagnostic('warning', origin, draft.line, `Name: ${draft.name}`, 'missing-type', 'set without a Type: line'));
  }
  st.sets.push({
    name: draft.name,
    type,
    method: colon >= 0 ? type.slice(0, colon) : type,
    dims: ipsetDimensions(type) ?? [],
    revision: draft.revision,
    family: draft.family,
    header: draft.header,
    sizeInMemory: draft.sizeInMemory,
    references: draft.references,
    numberOfEntries: draft.numberOfEntries,
    members: draft.members,
    line: draft.line,
  });
  if (draft.members && draft.numberOfEntries !== null && draft.members.length !== draft.numberOfEntries) {
    diagnostics.push(
      diagnostic('warning', origin, draft.line, `Name: ${draft.name}`, 'entry-count-mismatch',
        `Number of entries says ${draft.numberOfEntries}, ${draft.members.length} members listed (cut or elided output?)`),
    );
  }
  st.draft = null;
  st.inMembers = false;
}

/** Reads one `Key: value` line of a set's head (Type, Revision, Header, sizes, Members). */
function readSetHeader(st: IpsetReading, key: string, value: string, line: string): void {
  const draft = st.draft;
  if (!draft) {
    report(st, 'error', line, 'orphan-header', `${key}: before any Name: line`);
    return;
  }
  const num = /^\d+$/.test(value) ? Number(value) : null;
  switch (key) {
    case 'Type':
      if (ipsetDimensions(value) === null) report(st, 'warning', line, 'unknown-type', 'set type not known; members kept undecoded');
      draft.type = value;
      return;
    case 'Header': {
      const toks = tokenize(value) ?? value.split(/\s+/);
      for (let i = 0; i < toks.length; i += 1) {
        const k = toks[i]!;
        if (HEADER_FLAGS.has(k) || i + 1 >= toks.length) draft.header.push([k, null]);
        else draft.header.push([k, toks[++i]!]);
      }
      const fam = draft.header.find(([k]) => k === 'family')?.[1];
      draft.family = fam === 'inet' || fam === 'inet6' ? fam : null;
      return;
    }
    case 'Members':
      if (value !== '') report(st, 'warning', line, 'bad-members-line', 'text after Members:');
      draft.members = [];
      st.inMembers = true;
      return;
  }
  const field = ({ Revision: 'revision', 'Size in memory': 'sizeInMemory', References: 'references', 'Number of entries': 'numberOfEntries' } as const)[key as 'Revision'];
  if (field === undefined) {
    report(st, 'warning', line, 'unknown-field', `unknown set field ${key}`);
    return;
  }
  if (num === null) {
    report(st, 'error', line, 'bad-number', `${key} is not a number`);
    return;
  }
  draft[field] = num;
}

/** Reads one member line of the set being read: the element decoded by the set's dimensions (kept as text when it does not fit), then its options. */
function readMember(st: IpsetReading, draft: SetDraft, line: string): void {
  const trimmed = line.trim();
  const space = trimmed.search(/\s/);
  const element = space < 0 ? trimmed : trimmed.slice(0, space);
  const toks = space < 0 ? [] : tokenize(trimmed.slice(space + 1));
  if (toks === null) {
    report(st, 'error', line, 'bad-member', 'unbalanced quotes in member options');
    return;
  }
  const options: [string, string | null][] = [];
  for (let i = 0; i < toks.length; i += 1) {
    const k = toks[i]!;
    if (MEMBER_FLAGS.has(k) || i + 1 >= toks.length) options.push([k, null]);
    else options.push([k, toks[++i]!]);
  }
  const dims = ipsetDimensions(draft.type ?? '');
  const pieces = element.split(',');
  let parts: IpsetPart[] | null = null;
  if (dims && pieces.length === dims.length) {
    const decoded = dims.map((dim, i) => parseIpsetPart(dim, pieces[i]!));
    if (decoded.every((p): p is IpsetPart => p !== null)) parts = decoded;
  }
  if (dims && parts === null) report(st, 'warning', line, 'bad-member', `member does not fit ${draft.type}; kept as text`);
  draft.members!.push({ element, parts, options, line: st.lineNo, raw: line });
}

/** Reads one line (without its LF) of `ipset list` output. */
function readIpsetLine(st: IpsetReading, input: string): void {
  st.lineNo += 1;
  const line = input.endsWith('\r') ? input.slice(0, -1) : input;
  if (line.trim() === '') {
    closeSet(st);
    return;
  }
  const m = /^(Name|Type|Revision|Header|Size in memory|References|Number of entries|Members):\s?(.*)$/.exec(line);
  if (m && !(st.inMembers && m[1] !== 'Name')) {
    if (m[1] === 'Name') {
      closeSet(st);
      st.draft = {
        name: m[2]!.trim(), line: st.lineNo, type: null, revision: null, header: [], family: null,
        sizeInMemory: null, references: null, numberOfEntries: null, members: null,
      };
      return;
    }
    readSetHeader(st, m[1]!, m[2]!.trim(), line);
    return;
  }
  if (st.inMembers && st.draft) return readMember(st, st.draft, line);
  report(st, 'error', line, 'unrecognized-line', 'not an ipset list line');
}

/**
 * Creates a line-fed parser for `ipset list` output. `origin` names the text in
 * diagnostics. Never throws.
 */
export function createIpsetParser(origin: string): LineParser<IpsetSet[]> {
  const st: IpsetReading = { origin, diagnostics: [], sets: [], draft: null, inMembers: false, lineNo: 0 };
  return {
    push: (input: string): void => readIpsetLine(st, input),
    end: (): ParseResult<IpsetSet[]> => {
      closeSet(st);
      return { value: st.sets, diagnostics: st.diagnostics };
    },
  };
}

/** Parses a whole `ipset list` output (LF or CRLF). Returns the sets and diagnostics; never throws. */
export function parseIpsetList(text: string, origin: string): ParseResult<IpsetSet[]> {
  const parser = createIpsetParser(origin);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) parser.push(l);
  return parser.end();
}

const quoteIfNeeded = (k: string, v: string): string => (k === 'comment' ? `"${v}"` : v);

/**
 * Formats sets back to `ipset list` text: one block per set, blocks separated by a blank
 * line, optional lines (Revision, Number of entries, Members) only when present in the
 * model. Member `comment` values are re-quoted.
 */
export function formatIpsetList(sets: readonly IpsetSet[]): string {
  return sets
    .map((s) => {
      const lines = [`Name: ${s.name}`, `Type: ${s.type}`];
      if (s.revision !== null) lines.push(`Revision: ${s.revision}`);
      lines.push(`Header: ${s.header.map(([k, v]) => (v === null ? k : `${k} ${quoteIfNeeded(k, v)}`)).join(' ')}`);
      if (s.sizeInMemory !== null) lines.push(`Size in memory: ${s.sizeInMemory}`);
      if (s.references !== null) lines.push(`References: ${s.references}`);
      if (s.numberOfEntries !== null) lines.push(`Number of entries: ${s.numberOfEntries}`);
      if (s.members !== null) {
        lines.push('Members:');
        for (const m of s.members) {
          const opts = m.options.map(([k, v]) => (v === null ? k : `${k} ${quoteIfNeeded(k, v)}`));
          lines.push([m.element, ...opts].join(' '));
        }
      }
      return `${lines.join('\n')}\n`;
    })
    .join('\n');
}

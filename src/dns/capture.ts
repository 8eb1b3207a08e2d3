/**
 * `extra/dns.json` of a capture bundle: every DNS exchange nodescope made while
 * capturing, decoded (rcode, records with TTLs, server, latency in ms, transport,
 * truncation) and with the reply bytes, so a replay shows exactly what the node answered.
 *
 * The file is JSON written one exchange per line, so a truncated file still yields every
 * complete exchange and a bad line is reported with its number:
 * ```
 * {"formatVersion":1,"exchanges":[
 * {…exchange…},
 * {…exchange…}
 * ]}
 * ```
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import type { DnsCapture, DnsExchange, DnsRecord } from '../model/dns.js';
import { DNS_QUESTION_TYPES } from '../model/dns.js';

/** The file name inside a bundle's `extra/` folder. */
export const DNS_CAPTURE_FILE = 'dns.json';

const HEAD = '{"formatVersion":1,"exchanges":[';
const TAIL = ']}';

/** Writes a capture in the line-per-exchange JSON layout above (final newline). */
export function formatDnsCapture(capture: DnsCapture): string {
  const body = capture.exchanges.map((e, i) => JSON.stringify(e) + (i < capture.exchanges.length - 1 ? ',' : ''));
  return [HEAD, ...body, TAIL].join('\n') + '\n';
}

const OUTCOMES = new Set(['answer', 'nodata', 'nxdomain', 'servfail', 'refused', 'other-rcode', 'timeout', 'network-error', 'bad-reply', 'not-captured', 'failed']);
const SECTIONS = new Set(['answer', 'authority', 'additional']);

function isRecord(v: unknown): v is DnsRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return typeof r.section === 'string' && SECTIONS.has(r.section) && typeof r.name === 'string' && typeof r.type === 'string' &&
    typeof r.ttl === 'number' && typeof r.data === 'string';
}

/** Why `v` is not a {@link DnsExchange}, or null when it is one. */
export function exchangeProblem(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
  const e = v as Record<string, unknown>;
  const str = (k: string) => typeof e[k] === 'string';
  const num = (k: string) => typeof e[k] === 'number' && Number.isFinite(e[k]);
  const strOrNull = (k: string) => e[k] === null || str(k);
  for (const k of ['server', 'qname', 'via', 'startedAt']) if (!str(k)) return `${k} must be a string`;
  for (const k of ['port', 'tries', 'latencyMs']) if (!num(k)) return `${k} must be a number`;
  for (const k of ['rcode', 'error', 'replyHex']) if (!strOrNull(k)) return `${k} must be a string or null`;
  if (!(DNS_QUESTION_TYPES as readonly unknown[]).includes(e.qtype)) return `unknown qtype ${JSON.stringify(e.qtype)}`;
  if (e.transport !== 'udp' && e.transport !== 'tcp') return 'transport must be udp or tcp';
  if (typeof e.truncated !== 'boolean') return 'truncated must be true or false';
  if (typeof e.outcome !== 'string' || !OUTCOMES.has(e.outcome)) return `unknown outcome ${JSON.stringify(e.outcome)}`;
  const f = e.flags as Record<string, unknown> | null;
  if (f !== null && (typeof f !== 'object' || !['aa', 'tc', 'rd', 'ra'].every((k) => typeof f[k] === 'boolean'))) return 'flags must be {aa,tc,rd,ra} or null';
  for (const k of ['answers', 'authorities', 'additionals']) {
    const list = e[k];
    if (!Array.isArray(list) || !list.every(isRecord)) return `${k} must be a list of records`;
  }
  return null;
}

/** Reads the fields of a validated exchange in the model's key order (so format(parse(x)) is stable). */
function exchangeOf(v: Record<string, unknown>): DnsExchange {
  const e = v as unknown as DnsExchange;
  const rec = (r: DnsRecord): DnsRecord => ({ section: r.section, name: r.name, type: r.type, ttl: r.ttl, data: r.data });
  return {
    server: e.server, port: e.port, qname: e.qname, qtype: e.qtype, via: e.via, transport: e.transport, truncated: e.truncated,
    tries: e.tries, outcome: e.outcome, rcode: e.rcode,
    flags: e.flags === null ? null : { aa: e.flags.aa, tc: e.flags.tc, rd: e.flags.rd, ra: e.flags.ra },
    answers: e.answers.map(rec), authorities: e.authorities.map(rec), additionals: e.additionals.map(rec),
    startedAt: e.startedAt, latencyMs: e.latencyMs, error: e.error, replyHex: e.replyHex,
  };
}

/**
 * Parses `extra/dns.json`. Never throws: a line that is not a valid exchange is a
 * diagnostic with its number and text, every valid exchange is kept; a missing head or
 * tail line (a truncated file) is a warning.
 */
export function parseDnsCapture(text: string, origin: string): ParseResult<DnsCapture> {
  const diagnostics: Diagnostic[] = [];
  const exchanges: DnsExchange[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let sawHead = false;
  let sawTail = false;
  lines.forEach((raw, i) => {
    const n = i + 1;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    if (line === HEAD && !sawHead && exchanges.length === 0) {
      sawHead = true;
      return;
    }
    if (line === TAIL && !sawTail) {
      sawTail = true;
      return;
    }
    if (sawTail) {
      diagnostics.push(diagnostic('warning', origin, n, line, 'after-end', 'text after the end of the capture'));
      return;
    }
    const body = line.endsWith(',') ? line.slice(0, -1) : line;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (e) {
      diagnostics.push(diagnostic('error', origin, n, line, 'not-json', `not a JSON exchange: ${(e as Error).message}`));
      return;
    }
    const problem = exchangeProblem(value);
    if (problem) diagnostics.push(diagnostic('error', origin, n, line, 'bad-exchange', problem));
    else exchanges.push(exchangeOf(value as Record<string, unknown>));
  });
  if (!sawHead) diagnostics.push(diagnostic('warning', origin, 1, lines[0] ?? '', 'no-head', `the first line should be ${HEAD}`));
  if (!sawTail) diagnostics.push(diagnostic('warning', origin, lines.length, lines[lines.length - 1] ?? '', 'truncated', 'no closing line: the capture may be truncated'));
  return { value: { formatVersion: 1, exchanges }, diagnostics };
}

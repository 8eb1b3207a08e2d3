/**
 * The raw record of one DNS exchange, before decoding: what was sent where, and the
 * bytes that came back for each attempt. This is what nodescope's query program
 * (`query-main.ts`) prints inside a node's network namespace — the probe returns raw
 * bytes only, the decoding happens in {@link decodeExchange} on nodescope's side
 * (CONVENTIONS.md §2: a transport returns the raw capture).
 *
 * Printed as one JSON object on one line (`formatRawExchange`), read back by the pure
 * parser {@link parseRawExchange}.
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import type { DnsExchange, DnsExchangeOutcome, DnsQuestionType, DnsWireTransport } from '../model/dns.js';
import { parseJsonObject } from '../text/json.js';
import { answersQuery, decodeReply, isQuestionType } from './wire.js';

/**
 * One attempt: `latencyMs` from send to reply or to giving up (milliseconds);
 * `replyHex` the accepted reply (no TCP prefix); `error` `timeout` or the socket error.
 */
export interface RawAttempt {
  readonly transport: DnsWireTransport;
  readonly latencyMs: number;
  readonly replyHex: string | null;
  readonly error: string | null;
}

/**
 * One question asked of one server: message `id`, `startedAt` ISO-8601 UTC, the
 * attempts in order, `totalMs` from the first send to the end (milliseconds).
 */
export interface RawExchange {
  readonly server: string;
  readonly port: number;
  readonly qname: string;
  readonly qtype: DnsQuestionType;
  readonly id: number;
  readonly startedAt: string;
  readonly totalMs: number;
  readonly attempts: readonly RawAttempt[];
}

/** The marker every attempt error for "no reply in time" uses. */
export const TIMEOUT_ERROR = 'timeout';

/** One line of JSON (with a final newline). */
export function formatRawExchange(raw: RawExchange): string {
  return `${JSON.stringify(raw)}\n`;
}

const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStrOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

function readAttempt(v: unknown): RawAttempt | null {
  if (typeof v !== 'object' || v === null) return null;
  const a = v as Record<string, unknown>;
  if ((a.transport !== 'udp' && a.transport !== 'tcp') || !isNum(a.latencyMs) || !isStrOrNull(a.replyHex) || !isStrOrNull(a.error)) return null;
  if (typeof a.replyHex === 'string' && !/^([0-9a-f]{2})*$/.test(a.replyHex)) return null;
  return { transport: a.transport, latencyMs: a.latencyMs, replyHex: a.replyHex, error: a.error };
}

/**
 * Parses the query program's stdout: the first non-blank line must be a raw exchange.
 * Never throws; `value` is null when nothing usable was printed (the diagnostic says why).
 */
export function parseRawExchange(text: string, origin: string): ParseResult<RawExchange | null> {
  const diagnostics: Diagnostic[] = [];
  const lines = text.split('\n');
  const index = lines.findIndex((l) => l.trim() !== '');
  if (index === -1) return { value: null, diagnostics: [diagnostic('error', origin, 0, '', 'empty', 'the query program printed nothing')] };
  const line = lines[index]!;
  const { object: obj, error } = parseJsonObject(line);
  if (obj === null) return { value: null, diagnostics: [diagnostic('error', origin, index + 1, line, 'not-json', `not a JSON object: ${error}`)] };
  const attempts = Array.isArray(obj.attempts) ? obj.attempts.map(readAttempt) : null;
  const qtype = typeof obj.qtype === 'string' && isQuestionType(obj.qtype) ? obj.qtype : null;
  if (
    typeof obj.server !== 'string' || !isNum(obj.port) || typeof obj.qname !== 'string' || qtype === null || !isNum(obj.id) ||
    typeof obj.startedAt !== 'string' || !isNum(obj.totalMs) || attempts === null || attempts.some((a) => a === null)
  ) {
    return { value: null, diagnostics: [diagnostic('error', origin, index + 1, line, 'bad-exchange', 'a field of the exchange is missing or of the wrong type')] };
  }
  lines.slice(index + 1).forEach((l, i) => {
    if (l.trim() !== '') diagnostics.push(diagnostic('warning', origin, index + 2 + i, l, 'extra-output', 'unexpected output after the exchange'));
  });
  const value: RawExchange = {
    server: obj.server, port: obj.port, qname: obj.qname, qtype, id: obj.id, startedAt: obj.startedAt, totalMs: obj.totalMs,
    attempts: attempts as RawAttempt[],
  };
  return { value, diagnostics };
}

function outcomeOf(rcode: string, answers: number): DnsExchangeOutcome {
  switch (rcode) {
    case 'NOERROR':
      return answers > 0 ? 'answer' : 'nodata';
    case 'NXDOMAIN':
      return 'nxdomain';
    case 'SERVFAIL':
      return 'servfail';
    case 'REFUSED':
      return 'refused';
    default:
      return 'other-rcode';
  }
}

/**
 * Decodes a raw exchange into the model: the last attempt's reply gives the RCODE and
 * sections; `truncated` when a UDP reply had TC set and a TCP attempt followed.
 * `via` labels how the server was reached. Never throws.
 */
export function decodeExchange(raw: RawExchange, via: string): DnsExchange {
  const last = raw.attempts[raw.attempts.length - 1];
  const sawTruncated = raw.attempts.some((a, i) => {
    if (a.transport !== 'udp' || a.replyHex === null || raw.attempts[i + 1]?.transport !== 'tcp') return false;
    const r = decodeReply(Buffer.from(a.replyHex, 'hex'));
    return !('error' in r) && r.flags.tc;
  });
  const base = {
    server: raw.server, port: raw.port, qname: raw.qname.replace(/\.$/, ''), qtype: raw.qtype, via,
    transport: last?.transport ?? 'udp', truncated: sawTruncated, tries: raw.attempts.length,
    startedAt: raw.startedAt, latencyMs: raw.totalMs,
  } as const;
  const empty = { rcode: null, flags: null, answers: [], authorities: [], additionals: [], replyHex: null };
  if (!last) return { ...base, ...empty, outcome: 'failed', error: 'no attempt was made' };
  if (last.replyHex === null) {
    const outcome = last.error === TIMEOUT_ERROR ? 'timeout' : 'network-error';
    return { ...base, ...empty, outcome, error: last.error ?? 'no reply' };
  }
  const reply = decodeReply(Buffer.from(last.replyHex, 'hex'));
  if ('error' in reply) return { ...base, ...empty, outcome: 'bad-reply', error: reply.error, replyHex: last.replyHex };
  if (!answersQuery(reply, raw.id, raw.qname, raw.qtype)) {
    return { ...base, ...empty, outcome: 'bad-reply', error: `the reply does not answer this question (id ${reply.id}, ${reply.question?.type ?? '?'} ${reply.question?.name ?? '?'})`, replyHex: last.replyHex };
  }
  return {
    ...base,
    outcome: outcomeOf(reply.rcode, reply.answers.length),
    rcode: reply.rcode,
    flags: reply.flags,
    answers: reply.answers,
    authorities: reply.authorities,
    additionals: reply.additionals,
    error: reply.flags.tc ? 'the reply is still truncated (TC set)' : null,
    replyHex: last.replyHex,
  };
}

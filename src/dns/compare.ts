/**
 * Expected vs actual: one observed {@link DnsExchange} against the answer CoreDNS's
 * kubernetes plugin should give ({@link ExpectedAnswer}, src/analysis/dns-expected.ts).
 *
 * Compared: the RCODE, and the answer section record by record (owner name and data
 * case-insensitively, IPv6 addresses in canonical form). Not compared: TTLs (a cache
 * counts them down), record order (CoreDNS's `loadbalance` shuffles), the additional
 * section (SRV target addresses; shown, not judged), the authority section (SOA).
 */
import type { ExpectedAnswer, ExpectedRecord } from '../analysis/dns-expected.js';
import type { DnsCheck, DnsCheckVerdict, DnsExchange, DnsRecordCheck } from '../model/dns.js';
import { REPLY_OUTCOMES } from '../model/dns.js';
import { canonicalAddress } from './wire.js';

/** What is said about TTLs wherever a comparison is shown. */
export const TTL_NOTE = 'TTLs are not compared; the additional section is shown, not compared';

const norm = (s: string): string => s.toLowerCase().replace(/\.$/, '');

/** A record's data in the comparison's canonical form. */
function canonicalData(type: string, data: string): string {
  if (type === 'A' || type === 'AAAA') return canonicalAddress(data);
  if (type === 'CNAME') return norm(data);
  if (type === 'SRV') {
    const parts = data.split(' ');
    return [...parts.slice(0, 3), norm(parts.slice(3).join(' '))].join(' ');
  }
  return data;
}

/** `SRV 0 100 80 web.default.svc.cluster.local`: an expected record as one text. */
export function expectedRecordText(r: ExpectedRecord): string {
  const data = r.type === 'SRV' ? `${r.data.priority} ${r.data.weight} ${r.data.port} ${r.data.target}` : r.data;
  return `${r.type} ${canonicalData(r.type, data)}`;
}

interface Rec {
  readonly name: string;
  readonly type: string;
  readonly text: string;
}

function inZone(name: string, zone: string): boolean {
  const z = norm(zone);
  return name === z || name.endsWith(`.${z}`);
}

/**
 * Compares `exchange` with `expected` (null: the name is outside the cluster zone and
 * nothing is predicted). Records are paired: equal ones `match`; then, per owner name
 * and type, leftovers pair as `mismatch` in order; the rest are `missing` or
 * `unexpected`, except records of names outside `zone` (reached through a CNAME), which
 * are `upstream`. Pure.
 */
export function compareExchange(expected: ExpectedAnswer | null, exchange: DnsExchange, zone = 'cluster.local'): DnsCheck {
  const base = { qname: exchange.qname, qtype: exchange.qtype, exchange };
  const replied = REPLY_OUTCOMES.has(exchange.outcome);
  if (!replied || expected === null) {
    const verdict: DnsCheckVerdict = !replied ? 'no-reply' : 'unpredicted';
    return {
      ...base,
      expectedRcode: expected?.rcode ?? null,
      expectedReason: expected?.reason ?? null,
      rcodeMatches: null,
      records: !replied || expected !== null ? [] : exchange.answers.map((a) => ({ verdict: 'upstream', name: norm(a.name), type: a.type, expected: null, actual: `${a.type} ${canonicalData(a.type, a.data)}` })),
      verdict,
    };
  }
  const want: Rec[] = expected.answers.map((r) => ({ name: norm(r.name), type: r.type, text: expectedRecordText(r) }));
  const left: Rec[] = exchange.answers.map((r) => ({ name: norm(r.name), type: r.type, text: `${r.type} ${canonicalData(r.type, r.data)}` }));
  const records: DnsRecordCheck[] = [];
  const unmatched: Rec[] = [];
  const take = (pred: (a: Rec) => boolean): Rec | undefined => {
    const i = left.findIndex(pred);
    return i === -1 ? undefined : left.splice(i, 1)[0];
  };
  for (const w of want) {
    const a = take((x) => x.name === w.name && x.type === w.type && x.text === w.text);
    if (a) records.push({ verdict: 'match', name: w.name, type: w.type, expected: w.text, actual: a.text });
    else unmatched.push(w);
  }
  for (const w of unmatched) {
    const a = take((x) => x.name === w.name && x.type === w.type);
    records.push({ verdict: a ? 'mismatch' : 'missing', name: w.name, type: w.type, expected: w.text, actual: a?.text ?? null });
  }
  for (const a of left) {
    records.push({ verdict: inZone(a.name, zone) ? 'unexpected' : 'upstream', name: a.name, type: a.type, expected: null, actual: a.text });
  }
  const rcodeMatches = exchange.rcode === expected.rcode;
  const ok = rcodeMatches && records.every((r) => r.verdict === 'match' || r.verdict === 'upstream');
  return { ...base, expectedRcode: expected.rcode, expectedReason: expected.reason, rcodeMatches, records, verdict: ok ? 'ok' : 'mismatch' };
}

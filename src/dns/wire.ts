/**
 * DNS messages on the wire, through `dns-packet` (never hand-built): the query nodescope
 * sends (one question, RD set, no EDNS — what glibc's stub resolver sends by default),
 * and the decoding of a reply into {@link DnsRecord}s with presentation text.
 *
 * Formats: RFC 1035 §4 (messages), §4.2.2 (TCP length prefix, `streamEncode`),
 * RFC 2782 (SRV), RFC 3596 (AAAA).
 */
import { isIP } from 'node:net';
import dnsPacket from 'dns-packet';
import type { DnsFlags, DnsQuestionType, DnsRecord, DnsSection } from '../model/dns.js';
import { DNS_QUESTION_TYPES } from '../model/dns.js';

/** True when `t` is one of the question types nodescope asks. */
export function isQuestionType(t: string): t is DnsQuestionType {
  return (DNS_QUESTION_TYPES as readonly string[]).includes(t);
}

/** The query message for `qname`/`qtype` with message id `id` (0–65535), recursion desired. */
export function queryPacket(id: number, qname: string, qtype: DnsQuestionType): dnsPacket.Packet {
  return { type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: qtype, name: qname.replace(/\.$/, ''), class: 'IN' }] };
}

/** The query's bytes: a UDP datagram, or with the 2-byte length prefix for TCP. */
export function encodeQuery(id: number, qname: string, qtype: DnsQuestionType, transport: 'udp' | 'tcp'): Buffer {
  const p = queryPacket(id, qname, qtype);
  return transport === 'tcp' ? dnsPacket.streamEncode(p) : dnsPacket.encode(p);
}

/** A decoded reply: header fields and the three record sections. */
export interface DecodedReply {
  readonly id: number;
  readonly isResponse: boolean;
  readonly rcode: string;
  readonly flags: DnsFlags;
  readonly question: { readonly name: string; readonly type: string } | null;
  readonly answers: readonly DnsRecord[];
  readonly authorities: readonly DnsRecord[];
  readonly additionals: readonly DnsRecord[];
}

/**
 * Decodes reply bytes (without TCP length prefix). Returns the reply, or an error text
 * when the bytes are not a DNS message (dns-packet throws on truncated or malformed input).
 */
export function decodeReply(bytes: Buffer): DecodedReply | { readonly error: string } {
  let p: dnsPacket.DecodedPacket;
  try {
    p = dnsPacket.decode(bytes);
  } catch (e) {
    return { error: `undecodable reply (${bytes.length} bytes): ${(e as Error).message}` };
  }
  const q = p.questions?.[0];
  return {
    id: p.id ?? 0,
    isResponse: p.flag_qr,
    // dns-packet's decode sets `rcode` (a string); its type definitions omit it.
    rcode: (p as { rcode?: string }).rcode ?? 'NOERROR',
    flags: { aa: p.flag_aa, tc: p.flag_tc, rd: p.flag_rd, ra: p.flag_ra },
    question: q ? { name: q.name, type: q.type } : null,
    answers: records(p.answers, 'answer'),
    authorities: records(p.authorities, 'authority'),
    additionals: records(p.additionals, 'additional'),
  };
}

/** True when `reply` is an answer to exactly this query (id, QR bit, question), as resolvers check. */
export function answersQuery(reply: DecodedReply, id: number, qname: string, qtype: DnsQuestionType): boolean {
  const q = reply.question;
  return reply.isResponse && reply.id === id && q !== null && q.type === qtype && q.name.toLowerCase() === qname.replace(/\.$/, '').toLowerCase();
}

function records(list: readonly dnsPacket.Answer[] | undefined, section: DnsSection): DnsRecord[] {
  // OPT is the EDNS pseudo-record, not data (RFC 6891 §6.1.1).
  return (list ?? []).filter((a) => a.type !== 'OPT').map((a) => ({
    section,
    name: a.name.replace(/\.$/, ''),
    type: a.type,
    ttl: 'ttl' in a ? (a.ttl ?? 0) : 0,
    data: presentation(a),
  }));
}

const noDot = (s: string | undefined): string => (s ?? '').replace(/\.$/, '');

/** Canonical text of an IP address (IPv6 compressed, lower case), as the URL parser writes it. */
export function canonicalAddress(address: string): string {
  if (isIP(address) !== 6) return address;
  return new URL(`http://[${address}]/`).hostname.slice(1, -1);
}

/** The RDATA of a decoded record as presentation text (see {@link DnsRecord.data}). */
export function presentation(a: dnsPacket.Answer): string {
  const data = (a as { data?: unknown }).data;
  switch (a.type) {
    case 'A':
    case 'AAAA':
      return canonicalAddress(String(data));
    case 'CNAME':
    case 'DNAME':
    case 'NS':
    case 'PTR':
      return noDot(String(data));
    case 'SRV': {
      const s = data as dnsPacket.SrvData;
      return `${s.priority ?? 0} ${s.weight ?? 0} ${s.port} ${noDot(s.target)}`;
    }
    case 'SOA': {
      const s = data as dnsPacket.SoaData;
      return `${noDot(s.mname)} ${noDot(s.rname)} ${s.serial ?? 0} ${s.refresh ?? 0} ${s.retry ?? 0} ${s.expire ?? 0} ${s.minimum ?? 0}`;
    }
    case 'TXT': {
      const parts = Array.isArray(data) ? data : [data];
      return parts.map((d) => JSON.stringify(Buffer.isBuffer(d) ? d.toString('latin1') : String(d))).join(' ');
    }
    default:
      return Buffer.isBuffer(data) ? data.toString('hex') : JSON.stringify(data ?? null);
  }
}

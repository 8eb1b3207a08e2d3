/**
 * Small value helpers of the evaluators: address-in-prefix tests (CIDR, dotted masks,
 * IPv6), port ranges as iptables writes them (`80`, `1000:2000`, `:1024`), NAT targets
 * (`[ipaddr[-ipaddr]][:port[-port]]`, libxt_DNAT/libxt_SNAT), and u32 marks.
 */
import { parseIp, type IpValue } from '../model/iproute.js';
import { splitNatTarget } from '../model/iptables.js';

/** An address range [lo, hi] of one family, as integers. */
export interface AddrRange {
  readonly family: 'inet' | 'inet6';
  readonly lo: bigint;
  readonly hi: bigint;
}

function maskLength(mask: string): number | null {
  const m = parseIp(mask);
  if (!m || m.family !== 'inet') return null;
  let len = 0;
  while (len < 32 && (m.value >> BigInt(31 - len)) & 1n) len++;
  return (m.value & ((1n << BigInt(32 - len)) - 1n)) === 0n ? len : null;
}

const rangeCache = new Map<string, AddrRange | null>();

/** {@link parseAddrRange}, remembered (rules repeat the same few prefixes). */
export function addrRangeOf(text: string): AddrRange | null {
  let r = rangeCache.get(text);
  if (r === undefined) {
    r = parseAddrRange(text);
    if (rangeCache.size > 100_000) rangeCache.clear();
    rangeCache.set(text, r);
  }
  return r;
}


/**
 * Parses `10.0.0.0/8`, `10.0.0.1`, `10.0.0.0/255.0.0.0`, `fd00::/64` into a range; null
 * when it is not an address (e.g. a host name, which iptables-save never prints).
 */
export function parseAddrRange(text: string): AddrRange | null {
  const slash = text.indexOf('/');
  const addr = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!addr) return null;
  const bits = addr.family === 'inet' ? 32 : 128;
  let len = bits;
  if (slash >= 0) {
    const m = text.slice(slash + 1);
    if (/^[0-9]{1,3}$/.test(m)) len = Number(m);
    else {
      const l = maskLength(m);
      if (l === null) return null;
      len = l;
    }
    if (len > bits) return null;
  }
  const host = (1n << BigInt(bits - len)) - 1n;
  return { family: addr.family, lo: addr.value & ~host, hi: (addr.value & ~host) | host };
}

/** True when `ip` lies in `range` (false for another family or a non-address). */
export function inRange(ip: string | IpValue, range: AddrRange): boolean {
  const v = typeof ip === 'string' ? parseIp(ip) : ip;
  return v !== null && v.family === range.family && v.value >= range.lo && v.value <= range.hi;
}

/** Parses a port or port range (`80`, `1000:2000`, `:1024`, `1024:`, `1000-2000`) as [lo, hi]; null if malformed. */
export function parsePortRange(text: string): [number, number] | null {
  const sep = text.includes(':') ? ':' : text.includes('-') ? '-' : null;
  const [a, b] = sep === null ? [text, text] : text.split(sep, 2) as [string, string];
  const lo = a === '' ? 0 : /^[0-9]{1,5}$/.test(a) ? Number(a) : NaN;
  const hi = b === '' ? 65535 : /^[0-9]{1,5}$/.test(b) ? Number(b) : NaN;
  if (!Number.isInteger(lo) || !Number.isInteger(hi) || lo > 65535 || hi > 65535) return null;
  return lo <= hi ? [lo, hi] : [hi, lo];
}

/**
 * A NAT target `[ipaddr[-ipaddr]][:port[-port]]` (IPv6 in brackets before a port):
 * addresses and ports, `null` where absent. Null when malformed.
 */
export function parseNatTarget(text: string): { addr: string | null; addrMax: string | null; port: number | null; portMax: number | null } | null {
  const t = splitNatTarget(text);
  if (!t || (t.address && !parseIp(t.address)) || (t.addressMax && !parseIp(t.addressMax))) return null;
  return { addr: t.address, addrMax: t.addressMax, port: t.port, portMax: t.port === t.portMax ? null : t.portMax };
}

/** Parses a mark (`0x4000`, `16384`) as an unsigned 32-bit number; null if not a number. */
export function parseMark(text: string): number | null {
  if (!/^(0x[0-9a-f]{1,8}|[0-9]{1,10})$/i.test(text)) return null;
  const n = Number(text);
  return n <= 0xffffffff ? n >>> 0 : null;
}

/** `V[/M]` as [value, mask] (mask default 0xffffffff); null if malformed. */
export function parseMarkMask(text: string): [number, number] | null {
  const slash = text.indexOf('/');
  const v = parseMark(slash < 0 ? text : text.slice(0, slash));
  const m = slash < 0 ? 0xffffffff : parseMark(text.slice(slash + 1));
  return v === null || m === null ? null : [v, m];
}

/** A mark in the way nft prints it: `0x00004000`. */
export function hexMark(n: number): string {
  return `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
}

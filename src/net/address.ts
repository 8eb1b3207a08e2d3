/**
 * Addresses, at the bottom of the layers: IPv4/IPv6 parse and format, CIDR containment,
 * `host:port` joins. The general functions use ipaddr.js; {@link ipv4Number} is the
 * hand-written reader the hot paths (interners of the conntrack and iptables parsers, the
 * step engine's matchers) call once per address, kept here so there is one copy.
 */
import ipaddr from 'ipaddr.js';

/** The address family of a packet or an address. */
export type AddressFamily = 'ipv4' | 'ipv6';

/** A parsed address: its family and its canonical text (IPv6 compressed, RFC 5952). */
export interface ParsedAddress {
  readonly family: AddressFamily;
  readonly text: string;
}

/**
 * Parses IPv4 dotted-quad or IPv6 text (`::ffff:a.b.c.d` stays IPv6); null for anything
 * else (no shorthand IPv4 forms such as `10.1`, no zone index). Never throws.
 */
export function parseAddress(text: string): ParsedAddress | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return { family: 'ipv4', text: ipaddr.IPv4.parse(text).toString() };
  if (!text.includes('%') && ipaddr.IPv6.isValid(text)) return { family: 'ipv6', text: ipaddr.IPv6.parse(text).toRFC5952String() };
  return null;
}

/**
 * The family {@link parseAddress} gives `text`, without building its canonical text; null when
 * it gives null. Read without ipaddr.js for the common case (it is called per endpoint address
 * per Service): text without a colon is no IPv6 address, and IPv4 is the four-part decimal form
 * ipaddr.js's `isValidFourPartDecimal` accepts ({@link isFourPartDecimal}); text with one goes to
 * ipaddr.js as before. {@link addressFamilyViaIpaddr} is the reference the tests compare with.
 */
export function addressFamily(text: string): AddressFamily | null {
  if (!text.includes(':')) return isFourPartDecimal(text) ? 'ipv4' : null;
  if (!text.includes('%') && ipaddr.IPv6.isValid(text)) return 'ipv6';
  return null;
}

/** {@link addressFamily} through ipaddr.js alone (the reference of the tests). */
export function addressFamilyViaIpaddr(text: string): AddressFamily | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return 'ipv4';
  if (!text.includes('%') && ipaddr.IPv6.isValid(text)) return 'ipv6';
  return null;
}

/**
 * True for what ipaddr.js's `IPv4.isValidFourPartDecimal` accepts: four dot-separated decimal
 * parts of 0–255 without leading zeros (`10.0.0.1`; not `010.0.0.1`, `10.1`, `0x0a.0.0.1`).
 */
export function isFourPartDecimal(text: string): boolean {
  if (ipv4NumberAt(text, 0, text.length) < 0) return false;
  // ipv4NumberAt takes `010`; a part that starts with 0 must be `0` itself.
  for (let i = 0; i < text.length - 1; i++) {
    if (text.charCodeAt(i) === 48 && (i === 0 || text.charCodeAt(i - 1) === 46) && text.charCodeAt(i + 1) !== 46) return false;
  }
  return true;
}

/** The canonical text of an address ({@link parseAddress}); the text unchanged when it is not one. */
export function formatAddress(text: string): string {
  return parseAddress(text)?.text ?? text;
}

/**
 * True when `address` lies in `cidr` (`a.b.c.d/n`, `fd00::/64`; a bare address is a /32
 * or /128). False for malformed input or a family mismatch; never throws.
 */
export function cidrContains(cidr: string, address: string): boolean {
  const slash = cidr.indexOf('/');
  const base = parseAddress(slash < 0 ? cidr : cidr.slice(0, slash));
  const addr = parseAddress(address);
  if (!base || !addr || base.family !== addr.family) return false;
  const max = base.family === 'ipv4' ? 32 : 128;
  const bitsText = slash < 0 ? String(max) : cidr.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bitsText) || Number(bitsText) > max) return false;
  return ipaddr.parse(addr.text).match(ipaddr.parse(base.text), Number(bitsText));
}

/** `host:port` with brackets around an IPv6 host (`[fd00::1]:80`), as Go's `net.JoinHostPort` prints it. */
export function joinHostPort(host: string, port: number | string): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * A dotted quad as an unsigned number, accepting exactly what parseIp accepts
 * (`^\d{1,3}(\.\d{1,3}){3}$`, each part ≤ 255); null otherwise.
 */
export function ipv4Number(text: string): number | null {
  const n = ipv4NumberAt(text, 0, text.length);
  return n < 0 ? null : n;
}

/**
 * Dotted-quad IPv4 in `s[from, to)` → unsigned value; -1 when it is not one. The one hand-written
 * IPv4 reader: the conntrack scanner calls it per address without cutting the line.
 */
export function ipv4NumberAt(s: string, from: number, to: number): number {
  let parts = 0;
  let value = 0;
  let octet = 0;
  let digits = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || parts === 3) return -1;
      value = value * 256 + octet;
      parts++;
      octet = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      octet = octet * 10 + (c - 48);
      digits++;
      if (octet > 255 || digits > 3) return -1;
    } else return -1;
  }
  if (digits === 0 || parts !== 3) return -1;
  return value * 256 + octet;
}

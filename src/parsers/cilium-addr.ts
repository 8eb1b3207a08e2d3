/**
 * Addresses as Cilium prints them: canonical IPv4/IPv6 text, `ip:port`, `[v6]:port`,
 * ClusterMesh `ip@clusterID`, and `L3n4Addr` strings `ip:port/PROTO[/i]`.
 *
 * Canonical text follows Go's `netip.Addr.String()`: IPv4 dotted quad; IPv6 lower-case
 * RFC 5952 (longest run of two or more zero groups becomes `::`, first run on a tie),
 * IPv4-mapped IPv6 as `::ffff:a.b.c.d`. Pure functions; nothing throws.
 */
import type { LbFrontend, LbProtocol } from '../model/cilium.js';
import { protocolFromName } from '../model/cilium.js';

/** IPv4 text → 4 bytes; null unless four decimal octets 0–255 without leading `+`/spaces. */
export function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out;
}

/** IPv6 text (with optional embedded IPv4 tail) → 16 bytes; null if not an IPv6 address. */
export function parseIPv6(text: string): number[] | null {
  if (!text.includes(':') || text.length > 45) return null;
  let tail: number[] = [];
  let body = text;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (v4 === null) return null;
    tail = v4;
    body = text.slice(0, lastColon + 1) + '0:0'; // placeholder groups, replaced below
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = groups(halves[0] ?? '');
  const rest = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (head === null || rest === null) return null;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...rest];
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** 4 bytes → dotted quad. */
export function formatIPv4(b: ArrayLike<number>): string {
  return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
}

/** 16 bytes → RFC 5952 text (Go `netip` style, `::ffff:a.b.c.d` for IPv4-mapped). */
export function formatIPv6(b: ArrayLike<number>): string {
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push(((b[i] ?? 0) << 8) | (b[i + 1] ?? 0));
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return `::ffff:${formatIPv4([b[12] ?? 0, b[13] ?? 0, b[14] ?? 0, b[15] ?? 0])}`;
  }
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(':');
  if (bestStart < 0) return hex(g);
  return `${hex(g.slice(0, bestStart))}::${hex(g.slice(bestStart + bestLen))}`;
}

/** Address text → bytes (4 or 16); null when neither IPv4 nor IPv6. */
export function ipBytes(text: string): number[] | null {
  return parseIPv4(text) ?? parseIPv6(text);
}

/** Address text → canonical text; null when not an address. */
export function canonicalIp(text: string): string | null {
  const v4 = parseIPv4(text);
  if (v4) return formatIPv4(v4);
  const v6 = parseIPv6(text);
  return v6 ? formatIPv6(v6) : null;
}

/** An `ip[@cluster]:port` split apart; `clusterId` 0 when no `@N` suffix. */
export interface AddrPort {
  readonly ip: string;
  readonly port: number;
  readonly clusterId: number;
}

/** Splits `ip@cluster` (Cilium `AddrCluster.String()`) into canonical ip and cluster id. */
function parseAddrCluster(text: string): { ip: string; clusterId: number } | null {
  const at = text.indexOf('@');
  const ipText = at < 0 ? text : text.slice(0, at);
  const idText = at < 0 ? '0' : text.slice(at + 1);
  if (!/^\d{1,10}$/.test(idText)) return null;
  const ip = canonicalIp(ipText);
  return ip === null ? null : { ip, clusterId: Number(idText) };
}

/** Parses `10.0.0.1:80`, `[fd00::1]:80`, `10.0.0.1@2:80`, `[fd00::1@2]:80`; null otherwise. */
export function parseAddrPort(text: string): AddrPort | null {
  let host: string;
  let portText: string;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0 || text[close + 1] !== ':') return null;
    host = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const colon = text.lastIndexOf(':');
    if (colon < 0) return null;
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) return null; // bare IPv6 needs brackets
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) return null;
  const ac = parseAddrCluster(host);
  return ac === null ? null : { ip: ac.ip, port: Number(portText), clusterId: ac.clusterId };
}

/** A parsed `L3n4Addr` string: address, port, optional protocol, scope, cluster id. */
export interface L3n4 extends LbFrontend {
  readonly clusterId: number;
}

/**
 * Parses `ip:port[/PROTO][/i]` (`L3n4Addr.String()`; `/i` = internal scope). Protocol names
 * are matched case-insensitively (`NONE` reads as `ANY`). Null when the text is not one.
 */
export function parseL3n4(text: string): L3n4 | null {
  const close = text.startsWith('[') ? text.indexOf(']') : -1;
  const slash = text.indexOf('/', close + 1);
  const addr = parseAddrPort(slash < 0 ? text : text.slice(0, slash));
  if (addr === null) return null;
  let protocol: LbProtocol | null = null;
  let scope: LbFrontend['scope'] = 'external';
  if (slash >= 0) {
    const rest = text.slice(slash + 1).split('/');
    if (rest.length === 1 && rest[0] === 'i') return { ...addr, protocol: null, scope: 'internal' };
    if (rest.length > 2) return null;
    protocol = protocolFromName(rest[0] ?? '');
    if (protocol === null) return null;
    if (rest.length === 2) {
      if (rest[1] !== 'i') return null;
      scope = 'internal';
    }
  }
  return { ip: addr.ip, port: addr.port, protocol, scope, clusterId: addr.clusterId };
}

/** `ip@cluster` text the way Cilium prints a backend address (no suffix for cluster 0). */
export function formatAddrCluster(ip: string, clusterId: number | null): string {
  return clusterId ? `${ip}@${clusterId}` : ip;
}

/** Orders addresses: IPv4 before IPv6, then bytewise. */
export function compareIps(a: string, b: string): number {
  return compareIpBytes(ipBytes(a) ?? [], ipBytes(b) ?? []);
}

/** {@link compareIps} on addresses already read by {@link ipBytes} (`[]` for a non-address). */
export function compareIpBytes(x: readonly number[], y: readonly number[]): number {
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** Orders frontends by address ({@link compareIps}), port, protocol name, then external before internal. */
export function compareFrontends(a: LbFrontend, b: LbFrontend): number {
  return (
    compareIps(a.ip, b.ip) ||
    a.port - b.port ||
    cmpText(a.protocol ?? '', b.protocol ?? '') ||
    (a.scope === b.scope ? 0 : a.scope === 'external' ? -1 : 1)
  );
}

function cmpText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

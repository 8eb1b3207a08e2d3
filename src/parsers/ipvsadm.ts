/**
 * Parser and formatter for `ipvsadm -L` output: `-Ln`, `-L` (names), `--stats`,
 * `--rate`, `--exact`, `--thresholds`, `--persistent-conn`, `--tun-info`.
 *
 * Format source: ipvsadm v1.31 `ipvsadm.c`:
 * - `list_all`: `IP Virtual Server version %d.%d.%d (size=%d)` (absent when one service
 *   is listed with `-t/-u/-f`);
 * - `print_title`: one title per listing kind, always two lines;
 * - `print_service_entry`: `"%-4s %s"` protocol + address (`TCP  10.96.0.10:53`, two
 *   spaces; `SCTP` one), `FWM  %d[ IPv6]`, then `scheduler [(flags)] [persistent N
 *   [mask M] [pe P]] [ops]`, or `%-33s` + five counters for `--stats`/`--rate`;
 *   real servers `  -> %-28s %-7s %-6d %-10u %-10u` (hence trailing spaces);
 * - `print_largenum`: `%9llu` below 10^8, else `%8llu` + K/M/G/T (integer division);
 *   `--exact` prints `%*llu` with width max(9, digits + 1).
 * Without `-n`, ports print as `/etc/services` names (`:http-alt`) and addresses may be
 * host names; pass {@link IpvsadmParseOptions.services} to resolve port names.
 *
 * The parser is line-fed ({@link createIpvsadmParser}) so a stream can be parsed as it
 * arrives; it never throws: lines it does not understand become diagnostics.
 */
import { isIP } from 'node:net';
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import {
  IPVS_SUFFIX_MULTIPLIER,
  formatIpvsAddress,
  formatIpvsServiceKey,
  type IpvsAddress,
  type IpvsCount,
  type IpvsCountSuffix,
  type IpvsForwardMethod,
  type IpvsListing,
  type IpvsListingKind,
  type IpvsProtocol,
  type IpvsRate,
  type IpvsRealServer,
  type IpvsRealServerValues,
  type IpvsServiceKey,
  type IpvsServiceValues,
  type IpvsStats,
  type IpvsVirtualServer,
} from '../model/ipvs.js';

/**
 * Port names from an `/etc/services`-format text: key `name/proto` (proto `tcp`, `udp`,
 * `sctp`, lower case; aliases included) → port number.
 */
export type EtcServices = ReadonlyMap<string, number>;

/** Options for {@link parseIpvsadm}: `services` resolves port names printed without `-n`. */
export interface IpvsadmParseOptions {
  readonly services?: EtcServices;
}

/** A line-fed parser: call `push` with each line (without its newline), then `end` once. */
export interface LineParser<T> {
  push(line: string): void;
  end(): ParseResult<T>;
}

const TITLE_FIRST = 'Prot LocalAddress:Port';
const TITLE_SECOND = '-> RemoteAddress:Port';
const VERSION_RE = /^IP Virtual Server version (\d+\.\d+\.\d+) \(size=(\d+)\)\s*$/;
const COUNT_RE = /^(\d+)([KMGT])?$/;
const FORWARD: readonly IpvsForwardMethod[] = ['Masq', 'Route', 'Tunnel', 'Local'];
const PROTOCOLS: readonly IpvsProtocol[] = ['TCP', 'UDP', 'SCTP'];

/** Title column words (after `Prot LocalAddress:Port`) → listing kind. */
const TITLE_KINDS: ReadonlyArray<readonly [string, IpvsListingKind]> = [
  ['Scheduler Flags', 'list'],
  ['Conns InPkts OutPkts InBytes OutBytes', 'stats'],
  ['CPS InPPS OutPPS InBPS OutBPS', 'rate'],
  ['Uthreshold Lthreshold ActiveConn InActConn', 'thresholds'],
  ['Weight PersistConn ActiveConn InActConn', 'persistent-conn'],
];

/**
 * Parses an `/etc/services` text (`name port/proto [aliases…] [# comment]`, services(5))
 * into {@link EtcServices}. Lines that are not of that form become warnings.
 */
export function parseEtcServices(text: string, origin: string): ParseResult<EtcServices> {
  const map = new Map<string, number>();
  const diagnostics: Diagnostic[] = [];
  text.split('\n').forEach((rawLine, i) => {
    const line = rawLine.replace(/\r$/, '');
    const body = line.replace(/#.*$/, '').trim();
    if (body === '') return;
    const [name, portProto, ...aliases] = body.split(/\s+/);
    const m = /^(\d+)\/([a-z]+)$/i.exec(portProto ?? '');
    const port = m ? Number(m[1]) : NaN;
    if (!name || !m || port > 65535) {
      diagnostics.push(diagnostic('warning', origin, i + 1, line, 'bad-services-line', 'not "name port/proto"'));
      return;
    }
    const proto = m[2]!.toLowerCase();
    for (const n of [name, ...aliases]) if (!map.has(`${n}/${proto}`)) map.set(`${n}/${proto}`, port);
  });
  return { value: map, diagnostics };
}

/** Parses one `[K|M|G|T]`-suffixed ipvsadm counter; null when not a counter. */
export function parseIpvsCount(text: string): IpvsCount | null {
  const m = COUNT_RE.exec(text);
  if (!m) return null;
  const suffix = (m[2] as IpvsCountSuffix | undefined) ?? null;
  const printed = BigInt(m[1]!);
  return { value: suffix ? printed * IPVS_SUFFIX_MULTIPLIER[suffix] : printed, suffix };
}

/**
 * Parses an ipvsadm `addr:port` token (`10.0.0.1:80`, `[fd00::1]:53`, `host:http-alt`).
 * `protocol` selects the `/etc/services` protocol for name resolution. Null when malformed.
 */
export function parseIpvsAddress(
  text: string,
  protocol: IpvsProtocol | null,
  services?: EtcServices,
): IpvsAddress | null {
  let host: string;
  let portText: string;
  let bracketed = false;
  if (text.startsWith('[')) {
    const close = text.indexOf(']:');
    if (close < 0) return null;
    host = text.slice(1, close);
    portText = text.slice(close + 2);
    bracketed = true;
  } else {
    const colon = text.lastIndexOf(':');
    if (colon <= 0) return null;
    host = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (host.includes(':')) return null;
  }
  if (host === '' || portText === '') return null;
  const v = isIP(host);
  const family = v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : null;
  if (/^\d+$/.test(portText)) {
    const port = Number(portText);
    if (port > 65535) return null;
    return { host, family, bracketed, port, portName: null };
  }
  if (!/^[A-Za-z0-9][\w.+-]*$/.test(portText)) return null;
  const proto = protocol?.toLowerCase();
  const port = proto && services ? (services.get(`${portText}/${proto}`) ?? null) : null;
  return { host, family, bracketed, port, portName: portText };
}

/** A virtual server being read, with the real servers listed under it so far. */
interface ServiceDraft {
  readonly key: IpvsServiceKey;
  readonly values: IpvsServiceValues;
  readonly line: number;
  readonly raw: string;
  readonly rs: IpvsRealServer[];
}

/**
 * The state of one `ipvsadm -L` reading: what the parser expects from the current
 * title (`kind`, `tunnelInfo`), the first title's kind, the version line's fields and
 * the virtual servers read so far.
 */
interface IpvsReading {
  readonly origin: string;
  readonly options: IpvsadmParseOptions;
  readonly diagnostics: Diagnostic[];
  readonly services: ServiceDraft[];
  kind: IpvsListingKind | null;
  tunnelInfo: boolean;
  firstKind: IpvsListingKind | null;
  version: string | null;
  connTableSize: number | null;
  lineNo: number;
}

function report(st: IpvsReading, sev: 'error' | 'warning' | 'info', text: string, code: string, message: string): void {
  st.diagnostics.push(diagnostic(sev, st.origin, st.lineNo, text, code, message));
}

/** Reads the first title line (`Prot LocalAddress:Port …`): its columns say which listing follows. */
function readTitle(st: IpvsReading, line: string): void {
  const rest = line.slice(TITLE_FIRST.length).trim().split(/\s+/).join(' ');
  const found = TITLE_KINDS.find(([cols]) => cols === rest);
  if (!found) {
    report(st, 'error', line, 'unknown-title', 'unknown ipvsadm title columns');
    return;
  }
  if (st.firstKind !== null && found[1] !== st.firstKind) {
    report(st, 'warning', line, 'mixed-listing', `a ${found[1]} title after a ${st.firstKind} listing; entries keep their own kind`);
  }
  st.kind = found[1];
  st.tunnelInfo = false;
  st.firstKind ??= found[1];
}

/** Reads one line (without its LF) of `ipvsadm -L` output. */
function readIpvsLine(st: IpvsReading, input: string): void {
  st.lineNo += 1;
  const line = input.endsWith('\r') ? input.slice(0, -1) : input;
  if (line.trim() === '') return;
  const v = VERSION_RE.exec(line);
  if (v) {
    st.version = v[1]!;
    st.connTableSize = Number(v[2]);
    return;
  }
  if (line.startsWith(TITLE_FIRST)) return readTitle(st, line);
  const trimmed = line.trim();
  if (trimmed.startsWith(TITLE_SECOND)) {
    if (st.kind === null) report(st, 'warning', line, 'missing-title', 'real-server title without the first title line');
    const cols = trimmed.slice(TITLE_SECOND.length).trim();
    st.tunnelInfo = cols.split(/\s+/).includes('TunnelInfo');
    return;
  }
  if (/^\s+->\s/.test(line)) return readRealServer(st, line);
  const first = trimmed.split(/\s+/)[0] ?? '';
  if (first === 'FWM' || (PROTOCOLS as readonly string[]).includes(first)) return readVirtualServer(st, line);
  report(st, 'error', line, 'unrecognized-line', 'not an ipvsadm listing line');
}

/**
 * The listing kind a line is read as: the current title's; without a title (a cut
 * capture), the default listing (with a warning), or null when the columns are
 * counters (stats and rate cannot be told apart).
 */
function kindFor(st: IpvsReading, line: string, tokens: readonly string[]): IpvsListingKind | null {
  if (st.kind !== null) return st.kind;
  // No title seen (a cut capture): a scheduler name is a word, counters are numbers.
  if (tokens.length > 0 && tokens.every((t) => COUNT_RE.test(t))) {
    report(st, 'error', line, 'missing-title', 'counter columns without a title: cannot tell --stats from --rate');
    return null;
  }
  report(st, 'warning', line, 'missing-title', 'no ipvsadm title before this line; assumed the default listing');
  st.kind = 'list';
  st.firstKind ??= 'list';
  return 'list';
}

/** Reads a virtual server line (`TCP 10.0.0.1:80 rr`, `FWM 7 IPv6 …`). */
function readVirtualServer(st: IpvsReading, line: string): void {
  const tokens = line.trim().split(/\s+/);
  let key: IpvsServiceKey | null = null;
  let i: number;
  if (tokens[0] === 'FWM') {
    const mark = /^\d+$/.test(tokens[1] ?? '') ? Number(tokens[1]) : NaN;
    const v6 = tokens[2] === 'IPv6';
    if (Number.isSafeInteger(mark)) key = { kind: 'fwmark', fwmark: mark, family: v6 ? 'ipv6' : 'ipv4' };
    i = v6 ? 3 : 2;
  } else {
    const protocol = tokens[0] as IpvsProtocol;
    const address = parseIpvsAddress(tokens[1] ?? '', protocol, st.options.services);
    if (address) key = { kind: 'address', protocol, address };
    i = 2;
  }
  if (!key) {
    report(st, 'error', line, 'bad-virtual-server', 'virtual server address not understood');
    return;
  }
  const rest = tokens.slice(i);
  const kind = kindFor(st, line, rest);
  if (kind === null) return;
  const values = serviceValues(st, kind, rest, line);
  if (!values) return;
  st.services.push({ key, values, line: st.lineNo, raw: line, rs: [] });
}

/** The columns after a virtual server's address: counters, or scheduler, flags and persistence. */
function serviceValues(st: IpvsReading, kind: IpvsListingKind, rest: readonly string[], line: string): IpvsServiceValues | null {
  if (kind === 'stats' || kind === 'rate') {
    const counts = countsOf(rest);
    if (!counts) {
      report(st, 'error', line, 'bad-counters', `expected 5 ${kind} counters`);
      return null;
    }
    return kind === 'stats' ? { kind, stats: toStats(counts) } : { kind, rate: toRate(counts) };
  }
  const scheduler = rest[0];
  if (scheduler === undefined || !/^[a-z][\w-]*$/.test(scheduler)) {
    report(st, 'error', line, 'bad-virtual-server', 'missing scheduler name');
    return null;
  }
  let schedFlags: string[] = [];
  let timeout: number | null = null;
  const extra: { mask: string | null; pe: string | null } = { mask: null, pe: null };
  let onePacket = false;
  const unknown: string[] = [];
  for (let j = 1; j < rest.length; j += 1) {
    const t = rest[j]!;
    const next = rest[j + 1];
    if (j === 1 && /^\(.*\)$/.test(t)) schedFlags = t.slice(1, -1).split(',').filter(Boolean);
    else if (t === 'persistent' && next !== undefined && /^\d+$/.test(next)) {
      timeout = Number(next);
      j += 1;
    } else if ((t === 'mask' || t === 'pe') && timeout !== null && next !== undefined) {
      extra[t] = next;
      j += 1;
    } else if (t === 'ops') onePacket = true;
    else unknown.push(t);
  }
  if (unknown.length > 0) report(st, 'warning', line, 'unknown-flags', `flags not modelled: ${unknown.join(' ')}`);
  const persistence = timeout === null ? null : { timeout, ...extra };
  return { kind: 'scheduled', scheduler, schedFlags, persistence, onePacket };
}

/** Reads a real server line (`  -> 10.1.0.5:8080 Masq 1 0 0`) under the last virtual server. */
function readRealServer(st: IpvsReading, line: string): void {
  const tokens = line.trim().split(/\s+/).slice(1);
  const owner = st.services[st.services.length - 1];
  if (!owner) {
    report(st, 'error', line, 'orphan-real-server', 'real server before any virtual server');
    return;
  }
  const protocol = owner.key.kind === 'address' ? owner.key.protocol : null;
  const address = parseIpvsAddress(tokens[0] ?? '', protocol, st.options.services);
  if (!address) {
    report(st, 'error', line, 'bad-real-server', 'real server address not understood');
    return;
  }
  const kind = kindFor(st, line, tokens.slice(1));
  if (kind === null) return;
  const values = realServerValues(kind, tokens.slice(1), st.tunnelInfo);
  if (!values) {
    report(st, 'error', line, 'bad-real-server', `real server columns do not match the ${kind} title`);
    return;
  }
  owner.rs.push({ address, values, line: st.lineNo, raw: line });
}

/** The columns after a real server's address for listing `kind` (`tunnelInfo`: the title has a TunnelInfo column); null when they do not fit. */
function realServerValues(kind: IpvsListingKind, cols: readonly string[], tunnelInfo: boolean): IpvsRealServerValues | null {
  if (kind === 'stats' || kind === 'rate') {
    const counts = countsOf(cols);
    if (!counts) return null;
    return kind === 'stats' ? { kind, stats: toStats(counts) } : { kind, rate: toRate(counts) };
  }
  if (kind === 'list') {
    const tun = tunnelInfo ? 1 : 0;
    if (cols.length !== 4 + tun) return null;
    const forward = cols[0] as IpvsForwardMethod;
    if (!FORWARD.includes(forward)) return null;
    const nums = ints(cols.slice(1 + tun), true);
    if (!nums) return null;
    const [weight, activeConn, inActConn] = nums as [number, number, number];
    return { kind, forward, tunnelInfo: tun ? cols[1]! : null, weight, activeConn, inActConn };
  }
  const nums = ints(cols, false);
  if (!nums || nums.length !== 4) return null;
  const [a, b, activeConn, inActConn] = nums as [number, number, number, number];
  return kind === 'thresholds'
    ? { kind, uThreshold: a, lThreshold: b, activeConn, inActConn }
    : { kind, weight: a, persistConn: b, activeConn, inActConn };
}

/**
 * Creates a line-fed parser for one `ipvsadm -L` output (see module doc for the formats).
 * `origin` names the text in diagnostics. Never throws.
 */
export function createIpvsadmParser(
  origin: string,
  options: IpvsadmParseOptions = {},
): LineParser<IpvsListing> {
  const st: IpvsReading = {
    origin, options, diagnostics: [], services: [],
    kind: null, tunnelInfo: false, firstKind: null, version: null, connTableSize: null, lineNo: 0,
  };
  const end = (): ParseResult<IpvsListing> => {
    const virtualServers: IpvsVirtualServer[] = st.services.map((s) => ({
      key: s.key,
      values: s.values,
      realServers: s.rs,
      line: s.line,
      raw: s.raw,
    }));
    return {
      value: { kind: st.firstKind ?? 'list', version: st.version, connTableSize: st.connTableSize, tunnelInfo: st.tunnelInfo, virtualServers },
      diagnostics: st.diagnostics,
    };
  };
  return { push: (input: string): void => readIpvsLine(st, input), end };
}

function countsOf(cols: readonly string[]): IpvsCount[] | null {
  if (cols.length !== 5) return null;
  const counts = cols.map(parseIpvsCount);
  return counts.every((c): c is IpvsCount => c !== null) ? counts : null;
}

function ints(cols: readonly string[], signedFirst: boolean): number[] | null {
  const out: number[] = [];
  for (const [i, c] of cols.entries()) {
    const ok = i === 0 && signedFirst ? /^-?\d+$/.test(c) : /^\d+$/.test(c);
    if (!ok) return null;
    out.push(Number(c));
  }
  return out;
}

function toStats(c: IpvsCount[]): IpvsStats {
  return { conns: c[0]!, inPkts: c[1]!, outPkts: c[2]!, inBytes: c[3]!, outBytes: c[4]! };
}

function toRate(c: IpvsCount[]): IpvsRate {
  return { cps: c[0]!, inPps: c[1]!, outPps: c[2]!, inBps: c[3]!, outBps: c[4]! };
}

/**
 * Parses a whole `ipvsadm -L…` output. `text` may end with or without a newline and use
 * CRLF. Returns the listing and diagnostics (unknown lines, malformed columns, a
 * missing title); never throws.
 */
export function parseIpvsadm(
  text: string,
  origin: string,
  options: IpvsadmParseOptions = {},
): ParseResult<IpvsListing> {
  const parser = createIpvsadmParser(origin, options);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const l of lines) parser.push(l);
  return parser.end();
}

// ---- formatter (the inverse of the parser, printf widths from ipvsadm.c) ----

/** `print_largenum`: `%9llu`, `%*llu` for long exact values, or `%8llu` + suffix. */
function largenum(c: IpvsCount): string {
  if (c.suffix !== null) return `${(c.value / IPVS_SUFFIX_MULTIPLIER[c.suffix]).toString().padStart(8)}${c.suffix}`;
  const s = c.value.toString();
  return s.padStart(Math.max(9, s.length + 1));
}

function title(kind: IpvsListingKind, tunnelInfo: boolean): string[] {
  const rs = `  ${TITLE_SECOND}`;
  const cols = (names: string[], w: number, left: boolean): string =>
    names.map((n) => (left ? n.padEnd(w) : n.padStart(w))).join(' ');
  switch (kind) {
    case 'list':
      return [
        `${TITLE_FIRST} Scheduler Flags`,
        tunnelInfo
          ? `${rs}           Forward TunnelInfo    Weight ActiveConn InActConn`
          : `${rs}           Forward Weight ActiveConn InActConn`,
      ];
    case 'stats':
      return [`${TITLE_FIRST.padEnd(33)} ${cols(['Conns', 'InPkts', 'OutPkts', 'InBytes', 'OutBytes'], 8, false)}`, rs];
    case 'rate':
      return [`${TITLE_FIRST.padEnd(33)} ${cols(['CPS', 'InPPS', 'OutPPS', 'InBPS', 'OutBPS'], 8, false)}`, rs];
    case 'thresholds':
      return [`${TITLE_FIRST.padEnd(33)} ${cols(['Uthreshold', 'Lthreshold', 'ActiveConn', 'InActConn'], 10, true)}`, rs];
    case 'persistent-conn':
      return [
        `${TITLE_FIRST.padEnd(33)} ${'Weight'.padEnd(9)} ${'PersistConn'.padEnd(11)} ${'ActiveConn'.padEnd(10)} ${'InActConn'.padEnd(10)}`,
        rs,
      ];
  }
}

function formatServiceLine(vs: IpvsVirtualServer): string {
  const name = formatIpvsServiceKey(vs.key);
  const v = vs.values;
  if (v.kind === 'stats') {
    const s = v.stats;
    return name.padEnd(33) + [s.conns, s.inPkts, s.outPkts, s.inBytes, s.outBytes].map(largenum).join('');
  }
  if (v.kind === 'rate') {
    const r = v.rate;
    return name.padEnd(33) + [r.cps, r.inPps, r.outPps, r.inBps, r.outBps].map(largenum).join('');
  }
  let out = `${name} ${v.scheduler}`;
  if (v.schedFlags.length > 0) out += ` (${v.schedFlags.join(',')})`;
  if (v.persistence) {
    out += ` persistent ${v.persistence.timeout}`;
    if (v.persistence.mask !== null) out += ` mask ${v.persistence.mask}`;
    if (v.persistence.pe !== null) out += ` pe ${v.persistence.pe}`;
  }
  if (v.onePacket) out += ' ops';
  return out;
}

function formatRealServerLine(rs: IpvsRealServer): string {
  const addr = `  -> ${formatIpvsAddress(rs.address).padEnd(28)}`;
  const v = rs.values;
  const u = (n: number, w: number): string => String(n).padEnd(w);
  switch (v.kind) {
    case 'list':
      return v.tunnelInfo === null
        ? `${addr} ${v.forward.padEnd(7)} ${u(v.weight, 6)} ${u(v.activeConn, 10)} ${u(v.inActConn, 10)}`
        : `${addr} ${v.forward.padEnd(7)} ${v.tunnelInfo.padEnd(13)} ${u(v.weight, 6)} ${u(v.activeConn, 10)} ${u(v.inActConn, 10)}`;
    case 'stats': {
      const s = v.stats;
      return addr + [s.conns, s.inPkts, s.outPkts, s.inBytes, s.outBytes].map(largenum).join('');
    }
    case 'rate': {
      // Real-server CPS/InPPS/OutPPS are plain `%8llu` (never suffixed) in ipvsadm 1.31.
      const r = v.rate;
      const plain = (c: IpvsCount): string => (c.suffix === null ? ` ${c.value.toString().padStart(8)}` : largenum(c));
      return addr + plain(r.cps) + plain(r.inPps) + plain(r.outPps) + largenum(r.inBps) + largenum(r.outBps);
    }
    case 'thresholds':
      return `${addr} ${u(v.uThreshold, 10)} ${u(v.lThreshold, 10)} ${u(v.activeConn, 10)} ${u(v.inActConn, 10)}`;
    case 'persistent-conn':
      return `${addr} ${u(v.weight, 9)} ${u(v.persistConn, 11)} ${u(v.activeConn, 10)} ${u(v.inActConn, 10)}`;
  }
}

/**
 * Formats a listing back to ipvsadm's text, byte-for-byte as ipvsadm 1.31 prints it
 * (including the trailing spaces of `%-10u`), with a trailing newline. The version line
 * is printed only when `version` is set. Entries are printed with their own value kind;
 * the title is the listing's.
 */
export function formatIpvsListing(listing: IpvsListing): string {
  const lines: string[] = [];
  if (listing.version !== null) {
    lines.push(`IP Virtual Server version ${listing.version} (size=${listing.connTableSize ?? 0})`);
  }
  lines.push(...title(listing.kind, listing.tunnelInfo));
  for (const vs of listing.virtualServers) {
    lines.push(formatServiceLine(vs));
    for (const rs of vs.realServers) lines.push(formatRealServerLine(rs));
  }
  return `${lines.join('\n')}\n`;
}

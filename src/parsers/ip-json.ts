/**
 * Parsers and formatters for iproute2's JSON output: `ip -j addr`, `ip -j [-d] link`
 * (interfaces) and `ip -j route show table all`, `ip -j route get` (routes).
 *
 * Format source: iproute2 6.1 `ip/ipaddress.c` (print_linkinfo, print_addrinfo) and
 * `ip/iproute.c` (print_route): keys are printed only when set, so a missing key has a
 * meaning (no `type` = unicast, no `table` = main, no `protocol` = boot, no `scope` =
 * global). Unmodelled keys are kept in `extra` so nothing is lost.
 *
 * Robustness: iproute2 can print truncated JSON (`ip -j route show table 200` for a
 * missing table prints `[` and then fails), and probes may concatenate two outputs
 * (`ip -4 -j …; ip -6 -j …`). Bad JSON becomes an error diagnostic (with the line of the
 * failure), complete elements before a cut are kept, and nothing throws.
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';
import {
  interfaceRole,
  parseIp,
  parsePrefix,
  type InterfaceAddress,
  type IpFamily,
  type NetInterface,
  type OperState,
  type Route,
  type RouteNexthop,
  type RouteScope,
  type RouteType,
} from '../model/iproute.js';

/** Options for {@link parseIpRouteJson}: `family` when the probe ran `ip -4`/`ip -6` (resolves `default` routes without addresses). */
export interface IpRouteParseOptions {
  readonly family?: IpFamily;
}

const SCOPES: readonly RouteScope[] = ['global', 'site', 'link', 'host', 'nowhere'];
const OPERSTATES: readonly OperState[] = ['UNKNOWN', 'NOTPRESENT', 'DOWN', 'LOWERLAYERDOWN', 'TESTING', 'DORMANT', 'UP'];
const ROUTE_TYPES: readonly RouteType[] = [
  'unicast', 'local', 'broadcast', 'multicast', 'anycast', 'blackhole', 'unreachable', 'prohibit', 'throw', 'nat',
];

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** 1-based line of character offset `pos` in `text`, and that line. */
function lineAt(text: string, pos: number): { line: number; text: string } {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const start = before.lastIndexOf('\n') + 1;
  const end = text.indexOf('\n', pos);
  return { line, text: text.slice(start, end < 0 ? undefined : end) };
}

/**
 * The elements of one or more top-level JSON arrays in `text`. Uses `JSON.parse` when the
 * text is one valid array; otherwise scans element by element so that complete elements
 * survive a cut or a bad neighbour.
 */
function readJsonArrays(text: string, origin: string, diags: Diagnostic[]): { value: unknown; line: number }[] {
  if (text.trim() === '') {
    diags.push(diagnostic('info', origin, 0, '', 'empty', 'no output'));
    return [];
  }
  try {
    const whole: unknown = JSON.parse(text);
    // Pretty output (`ip -j -p`) spans lines: scan it so each element knows its line.
    if (Array.isArray(whole)) return text.trim().includes('\n') ? scanArrays(text, origin, diags) : whole.map((value) => ({ value, line: 1 }));
    diags.push(diagnostic('error', origin, 1, text.split('\n')[0] ?? '', 'not-an-array', 'iproute2 JSON output is an array'));
    return [];
  } catch {
    return scanArrays(text, origin, diags);
  }
}

function scanArrays(text: string, origin: string, diags: Diagnostic[]): { value: unknown; line: number }[] {
  const out: { value: unknown; line: number }[] = [];
  const bad = (pos: number, code: string, message: string): void => {
    const at = lineAt(text, pos);
    diags.push(diagnostic('error', origin, at.line, at.text, code, message));
  };
  let i = 0;
  const skipWs = (): void => {
    while (i < text.length && /\s/.test(text[i]!)) i += 1;
  };
  for (;;) {
    skipWs();
    if (i >= text.length) return out;
    if (text[i] !== '[') {
      bad(i, 'bad-json', 'expected a JSON array');
      return out;
    }
    i += 1;
    for (;;) {
      skipWs();
      if (i >= text.length) {
        bad(text.length, 'truncated', `JSON cut before the closing bracket; kept ${out.length} complete element(s)`);
        return out;
      }
      if (text[i] === ']') {
        i += 1;
        break;
      }
      if (text[i] === ',') {
        i += 1;
        continue;
      }
      const start = i;
      let depth = 0;
      let inString = false;
      let done = false;
      for (; i < text.length && !done; i += 1) {
        const c = text[i]!;
        if (inString) {
          if (c === '\\') i += 1;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '{' || c === '[') depth += 1;
        else if (c === '}' || c === ']') {
          if (depth === 0) done = true;
          else depth -= 1;
        } else if (c === ',' && depth === 0) done = true;
      }
      if (!done) {
        bad(start, 'truncated', `JSON cut inside an element; kept ${out.length} complete element(s)`);
        return out;
      }
      i -= 1; // leave the ',' or ']' for the outer loop
      const piece = text.slice(start, i);
      try {
        out.push({ value: JSON.parse(piece), line: lineAt(text, start).line });
      } catch {
        bad(start, 'bad-json', 'element is not valid JSON');
      }
    }
  }
}

/** Takes typed keys out of a JSON object; what is left (or mistyped) stays in `rest`. */
class Picker {
  readonly rest: Json;
  constructor(
    obj: Json,
    private readonly onBad: (key: string) => void,
  ) {
    this.rest = { ...obj };
  }
  private take<T>(key: string, ok: (v: unknown) => v is T): T | null {
    const v = this.rest[key];
    if (v === undefined) return null;
    if (!ok(v)) {
      this.onBad(key);
      return null;
    }
    delete this.rest[key];
    return v;
  }
  str(key: string): string | null {
    return this.take(key, (v): v is string => typeof v === 'string');
  }
  num(key: string): number | null {
    return this.take(key, (v): v is number => typeof v === 'number' && Number.isFinite(v));
  }
  strs(key: string): string[] | null {
    return this.take(key, (v): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string'));
  }
  oneOf<T extends string>(key: string, values: readonly T[]): T | null {
    return this.take(key, (v): v is T => typeof v === 'string' && (values as readonly string[]).includes(v));
  }
  /** Boolean `true` keys (iproute2's address flags), in printed order. */
  trueFlags(): string[] {
    const flags = Object.keys(this.rest).filter((k) => this.rest[k] === true);
    for (const k of flags) delete this.rest[k];
    return flags;
  }
}

function parseAddress(obj: unknown, warn: (m: string) => void): InterfaceAddress | null {
  if (!isObject(obj)) return null;
  const p = new Picker(obj, (k) => warn(`addr_info key ${k} has an unexpected type`));
  const family = p.oneOf('family', ['inet', 'inet6'] as const);
  const local = p.str('local');
  const prefixlen = p.num('prefixlen');
  if (family === null || local === null || prefixlen === null) return null;
  return {
    family,
    local,
    prefixlen,
    address: p.str('address'),
    broadcast: p.str('broadcast'),
    scope: p.oneOf('scope', SCOPES),
    label: p.str('label'),
    validLifeTime: p.num('valid_life_time'),
    preferredLifeTime: p.num('preferred_life_time'),
    flags: p.trueFlags(),
    extra: p.rest,
  };
}

function parseInterface(obj: unknown, warn: (m: string) => void): NetInterface | null {
  if (!isObject(obj)) return null;
  const p = new Picker(obj, (k) => warn(`key ${k} has an unexpected type; kept in extra`));
  const ifindex = p.num('ifindex');
  const ifname = p.str('ifname');
  if (ifindex === null || ifname === null) return null;
  const linkType = p.str('link_type');
  const linkinfo = isObject(obj.linkinfo) ? obj.linkinfo : null;
  const infoKind = typeof linkinfo?.info_kind === 'string' ? linkinfo.info_kind : null;
  const rawAddrs = p.rest.addr_info;
  const addresses: InterfaceAddress[] = [];
  if (Array.isArray(rawAddrs)) {
    delete p.rest.addr_info;
    rawAddrs.forEach((a, i) => {
      const parsed = parseAddress(a, warn);
      if (parsed) addresses.push(parsed);
      else warn(`${ifname} addr_info[${i}] lacks family/local/prefixlen: dropped`);
    });
  }
  return {
    ifindex,
    ifname,
    flags: p.strs('flags') ?? [],
    mtu: p.num('mtu'),
    operstate: p.oneOf('operstate', OPERSTATES),
    linkType,
    address: p.str('address'),
    broadcast: p.str('broadcast'),
    link: p.str('link'),
    linkIndex: p.num('link_index'),
    linkNetnsid: p.num('link_netnsid'),
    master: p.str('master'),
    infoKind,
    role: interfaceRole(ifname, linkType, infoKind),
    addresses,
    extra: p.rest,
  };
}

/**
 * Parses `ip -j addr` / `ip -j [-d] link` output into interfaces. An element without
 * `ifindex`/`ifname` is an error diagnostic; a mistyped or unknown-valued key (an
 * operstate iproute2 added later) is a warning and stays in `extra`. Never throws.
 */
export function parseIpAddrJson(text: string, origin: string): ParseResult<NetInterface[]> {
  const diagnostics: Diagnostic[] = [];
  const value: NetInterface[] = [];
  for (const [i, el] of readJsonArrays(text, origin, diagnostics).entries()) {
    const excerpt = JSON.stringify(el.value) ?? '';
    const warn = (m: string): void => void diagnostics.push(diagnostic('warning', origin, el.line, excerpt, 'bad-key', `element ${i}: ${m}`));
    const iface = parseInterface(el.value, warn);
    if (iface) value.push(iface);
    else diagnostics.push(diagnostic('error', origin, el.line, excerpt, 'bad-interface', `element ${i} is not an interface (needs ifindex and ifname)`));
  }
  return { value, diagnostics };
}

function routeFamily(r: Omit<Route, 'family'>, fallback: IpFamily | undefined): IpFamily | null {
  const fromText = (t: string | null): IpFamily | null => (t ? (parseIp(t.split('/')[0]!)?.family ?? null) : null);
  const via = isObject(r.extra.via) && (r.extra.via.family === 'inet' || r.extra.via.family === 'inet6') ? r.extra.via.family : null;
  return (
    (r.dst !== 'default' ? fromText(r.dst) : null) ??
    fromText(r.prefsrc) ??
    fromText(r.gateway) ??
    r.nexthops?.map((n) => fromText(n.gateway)).find((f) => f !== null) ??
    // An IPv4 route via an IPv6 gateway (RTA_VIA) is still an IPv4 route, so via only counts for its own family.
    (via === 'inet' ? 'inet' : null) ??
    (r.pref !== null ? 'inet6' : null) ??
    fallback ??
    null
  );
}

function parseNexthop(obj: unknown, warn: (m: string) => void): RouteNexthop | null {
  if (!isObject(obj)) return null;
  const p = new Picker(obj, (k) => warn(`nexthop key ${k} has an unexpected type`));
  return { gateway: p.str('gateway'), dev: p.str('dev'), weight: p.num('weight'), flags: p.strs('flags') ?? [], extra: p.rest };
}

function parseRoute(obj: unknown, warn: (m: string) => void, family: IpFamily | undefined): Route | null {
  if (!isObject(obj)) return null;
  const p = new Picker(obj, (k) => warn(`key ${k} has an unexpected value; kept in extra`));
  const dst = p.str('dst');
  if (dst === null) return null;
  let nexthops: RouteNexthop[] | null = null;
  if (Array.isArray(p.rest.nexthops)) {
    const raw = p.rest.nexthops;
    delete p.rest.nexthops;
    nexthops = raw.flatMap((n) => parseNexthop(n, warn) ?? []);
  }
  const r = {
    type: p.oneOf('type', ROUTE_TYPES) ?? 'unicast',
    dst,
    gateway: p.str('gateway'),
    dev: p.str('dev'),
    table: p.str('table') ?? 'main',
    protocol: p.str('protocol'),
    scope: p.oneOf('scope', SCOPES),
    prefsrc: p.str('prefsrc'),
    metric: p.num('metric'),
    flags: p.strs('flags') ?? [],
    nexthops,
    pref: p.str('pref'),
    extra: p.rest,
  };
  const fam = routeFamily(r, family);
  if (fam === null) warn(`family of ${dst} route cannot be told (no address, no pref)`);
  else if (parsePrefix(dst, fam) === null) warn(`dst ${dst} is not a prefix`);
  return { ...r, family: fam };
}

/**
 * Parses `ip -j route show table all` (or `ip -j route get`) output into routes. A
 * route without `dst` is an error diagnostic; unknown `type`/`scope` values are warnings
 * and stay in `extra`. Never throws.
 */
export function parseIpRouteJson(text: string, origin: string, options: IpRouteParseOptions = {}): ParseResult<Route[]> {
  const diagnostics: Diagnostic[] = [];
  const value: Route[] = [];
  for (const [i, el] of readJsonArrays(text, origin, diagnostics).entries()) {
    const excerpt = JSON.stringify(el.value) ?? '';
    const warn = (m: string): void => void diagnostics.push(diagnostic('warning', origin, el.line, excerpt, 'bad-key', `route ${i}: ${m}`));
    const route = parseRoute(el.value, warn, options.family);
    if (route) value.push(route);
    else diagnostics.push(diagnostic('error', origin, el.line, excerpt, 'bad-route', `element ${i} is not a route (needs dst)`));
  }
  return { value, diagnostics };
}

/** Drops null-valued keys (iproute2 prints a key only when it is set). */
function compact(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));
}

function addressJson(a: InterfaceAddress): Json {
  return {
    ...compact({ family: a.family, local: a.local, address: a.address, prefixlen: a.prefixlen, broadcast: a.broadcast, scope: a.scope }),
    ...Object.fromEntries(a.flags.map((f) => [f, true])),
    ...compact({ label: a.label }),
    ...a.extra,
    ...compact({ valid_life_time: a.validLifeTime, preferred_life_time: a.preferredLifeTime }),
  };
}

/**
 * Formats interfaces back to `ip -j addr` JSON (one line, iproute2's key names; keys of
 * `extra` included; `linkinfo.info_kind` written from `infoKind`). `role` is derived and
 * not written. Key order may differ from iproute2's; the data does not.
 */
export function formatIpAddrJson(interfaces: readonly NetInterface[]): string {
  const items = interfaces.map((i) => {
    const extra: Json = { ...i.extra };
    if (i.infoKind !== null) extra.linkinfo = { ...(isObject(extra.linkinfo) ? extra.linkinfo : {}), info_kind: i.infoKind };
    return {
      ...compact({ ifindex: i.ifindex, link: i.link, link_index: i.linkIndex, ifname: i.ifname, flags: i.flags, mtu: i.mtu }),
      ...compact({ master: i.master, operstate: i.operstate, link_type: i.linkType, address: i.address, broadcast: i.broadcast, link_netnsid: i.linkNetnsid }),
      ...extra,
      ...(i.addresses.length > 0 ? { addr_info: i.addresses.map(addressJson) } : {}),
    };
  });
  return `${JSON.stringify(items)}\n`;
}

/**
 * Formats routes back to `ip -j route` JSON: `type` omitted for unicast, `table` for
 * main, null fields omitted (as iproute2 does); `family` is derived and not written.
 */
export function formatIpRouteJson(routes: readonly Route[]): string {
  const items = routes.map((r) =>
    compact({
      type: r.type === 'unicast' ? null : r.type,
      dst: r.dst,
      gateway: r.gateway,
      dev: r.dev,
      table: r.table === 'main' ? null : r.table,
      protocol: r.protocol,
      scope: r.scope,
      prefsrc: r.prefsrc,
      metric: r.metric,
      flags: r.flags,
      nexthops: r.nexthops?.map((n) => ({ ...compact({ gateway: n.gateway, dev: n.dev, weight: n.weight, flags: n.flags }), ...n.extra })) ?? null,
      pref: r.pref,
      ...r.extra,
    }),
  );
  return `${JSON.stringify(items)}\n`;
}

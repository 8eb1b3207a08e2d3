/**
 * The packet the user picks for step mode and where it enters the node.
 *
 * `nodescope trace --from IP[:PORT] --to IP:PORT/PROTO [--entry pod|host|external]`:
 * {@link parsePacketArgs} validates the words and builds a {@link PacketSpec};
 * {@link resolveEntry} decides where the packet enters the node's netfilter hooks:
 *
 * - `pod`: it arrives on the pod's host-side interface (Calico `cali*`, Cilium `lxc*`,
 *   a CNI bridge), found as the device of the route back to the source address;
 * - `host`: the node itself sends it (a process on the node: the OUTPUT path);
 * - `external`: it arrives on the node's uplink (the device of the route to the source).
 *
 * Inference without `--entry`: a local source address → host; a source routed to a pod
 * interface → pod; anything else → external.
 */
import { said, UsageError, UserError } from '../errors.js';
import { parseIp, routeLookup, type InterfaceRole, type Route } from '../model/iproute.js';
import { isOwnAddress, selectSourceAddress, type NetView } from './routing.js';
import type { AddressFamily } from '../net/address.js';

/** Layer-4 protocols step mode can walk. */
export type TraceProtocol = 'tcp' | 'udp' | 'sctp' | 'icmp' | 'icmpv6';

/** TCP flag names as nft and iptables spell them (lower case). */
export type TcpFlag = 'fin' | 'syn' | 'rst' | 'psh' | 'ack' | 'urg' | 'ecn' | 'cwr';

/** Where the packet enters the node's netfilter hooks (see the module comment). */
export type TraceEntry = 'pod' | 'host' | 'external';

/** IP family of the packet. */
export type PacketFamily = AddressFamily;

/** TCP flag bits (include/net/tcp.h `TCPHDR_*`), as nft's `tcp flags` compares them. */
export const TCP_FLAG_BITS: Readonly<Record<TcpFlag, number>> = {
  fin: 0x01,
  syn: 0x02,
  rst: 0x04,
  psh: 0x08,
  ack: 0x10,
  urg: 0x20,
  ecn: 0x40,
  cwr: 0x80,
};

/** IANA protocol numbers (linux/in.h). */
export const PROTOCOL_NUMBERS: Readonly<Record<TraceProtocol, number>> = { icmp: 1, tcp: 6, udp: 17, icmpv6: 58, sctp: 132 };

/** Source port used when `--from` gives none (a fixed ephemeral port keeps walks reproducible). */
export const DEFAULT_SOURCE_PORT = 43210;

/** ICMP echo request type (RFC 792: 8; RFC 4443: 128), the default ICMP packet. */
export const ICMP_ECHO_REQUEST: Readonly<Record<PacketFamily, number>> = { ipv4: 8, ipv6: 128 };

/**
 * The packet as the user described it, validated.
 * - `src`: null when `--from` was omitted (allowed for `host` entry: the node picks the
 *   source address from the route);
 * - `sport`/`dport`: 1–65535 for tcp/udp/sctp, null for icmp;
 * - `icmpType`/`icmpCode`/`icmpId`: for icmp/icmpv6 only (default echo request, id 1);
 * - `tcpFlags`: tcp only (default `['syn']`, the first packet of a connection);
 * - `mark`: the packet mark on entry (u32, default 0);
 * - `entry`: `auto` unless `--entry` was given.
 */
export interface PacketSpec {
  readonly family: PacketFamily;
  readonly proto: TraceProtocol;
  readonly src: string | null;
  readonly sport: number | null;
  readonly dst: string;
  readonly dport: number | null;
  readonly icmpType: number | null;
  readonly icmpCode: number | null;
  readonly icmpId: number | null;
  readonly tcpFlags: readonly TcpFlag[];
  readonly mark: number;
  readonly entry: TraceEntry | 'auto';
}

/** The words of `nodescope trace` that describe the packet (all strings, as typed). */
export interface TracePacketArgs {
  /** `IP[:PORT]`, `[IPv6]:PORT` or a bare IPv6 address; may be omitted for `--entry host`. */
  readonly from?: string;
  /** `IP:PORT/PROTO` (`10.96.0.10:53/udp`), `[IPv6]:PORT/PROTO`, or `IP/icmp`. `/PROTO` defaults to tcp. */
  readonly to: string;
  readonly entry?: string;
  /** TCP flags, comma separated (`syn`, `ack`, `syn,ack`). */
  readonly flags?: string;
  /** Packet mark: decimal or `0x` hex, at most 0xffffffff. */
  readonly mark?: string;
  /** ICMP type (number) for icmp packets. */
  readonly icmpType?: string;
}

const PROTOCOLS: ReadonlySet<string> = new Set(['tcp', 'udp', 'sctp', 'icmp', 'icmpv6']);
const ENTRIES: ReadonlySet<string> = new Set(['pod', 'host', 'external']);

function parsePort(text: string, what: string): number {
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    throw new UsageError(said('ue.port.notNumber', { what, port: JSON.stringify(text) }), said('ue.port.hint'));
  }
  return Number(text);
}

/** Splits `IP`, `IP:PORT`, `[IPv6]:PORT`, `IPv6` into address text and port text. */
function splitHostPort(text: string, what: string): { ip: string; port: string | null } {
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) throw new UsageError(said('ue.ipv6.missingBracket', { what, text: JSON.stringify(text) }), said('ue.ipv6.hint'));
    const rest = text.slice(close + 1);
    if (rest !== '' && !rest.startsWith(':')) throw new UsageError(said('ue.ipv6.afterBracket', { what, rest: JSON.stringify(rest) }), said('ue.ipv6.hint'));
    return { ip: text.slice(1, close), port: rest === '' ? null : rest.slice(1) };
  }
  const colons = text.split(':').length - 1;
  if (colons === 1) {
    const [ip = '', port = ''] = text.split(':');
    return { ip, port };
  }
  return { ip: text, port: null };
}

function checkIp(ip: string, what: string): PacketFamily {
  const v = parseIp(ip);
  if (!v) throw new UsageError(said('ue.ip.notAddress', { what, ip: JSON.stringify(ip) }), said('ue.ip.hint'));
  return v.family === 'inet' ? 'ipv4' : 'ipv6';
}

/** `NAMESPACE/NAME[:PORT]` (DNS-label words): what `--to-service` takes. */
const SERVICE_REF_LIKE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?(:[a-z0-9-]+)?$/i;

/**
 * Validates the packet words and returns the packet. Throws {@link UserError} naming the
 * word to fix: an address that is not one, a port out of 1–65535, a missing port for
 * tcp/udp/sctp, an unknown protocol, flag or entry, source and destination of different
 * families, a mark that is not a u32, a missing `--from` for a non-host entry.
 */
export function parsePacketArgs(args: TracePacketArgs): PacketSpec {
  const to = args.to.trim();
  if (to === '') throw new UsageError(said('ue.to.empty'), said('ue.to.emptyHint'));
  const slash = to.lastIndexOf('/');
  const protoText = slash >= 0 ? to.slice(slash + 1).toLowerCase() : 'tcp';
  const dstText = slash >= 0 ? to.slice(0, slash) : to;
  if (!PROTOCOLS.has(protoText)) {
    // `--to default/web:80` is a Service written where an address goes, not a protocol "web:80".
    if (SERVICE_REF_LIKE.test(to)) throw new UsageError(said('ue.to.service', { to }), said('ue.to.serviceHint', { to }));
    throw new UsageError(said('ue.to.protocol', { proto: JSON.stringify(protoText) }), said('ue.to.protocolHint'));
  }
  const dstParts = splitHostPort(dstText, '--to');
  const family = checkIp(dstParts.ip, '--to');
  let proto = protoText as TraceProtocol;
  if (proto === 'icmp' && family === 'ipv6') proto = 'icmpv6';
  if (proto === 'icmpv6' && family === 'ipv4') throw new UsageError(said('ue.to.icmpv6'), said('ue.to.icmpv6Hint'));
  const icmp = proto === 'icmp' || proto === 'icmpv6';
  let dport: number | null = null;
  if (icmp) {
    if (dstParts.port !== null) throw new UsageError(said('ue.to.noPorts', { proto }), said('ue.to.noPortsHint', { ip: dstParts.ip, proto }));
  } else {
    if (dstParts.port === null || dstParts.port === '') {
      throw new UsageError(said('ue.to.needsPort', { proto }), said('ue.to.needsPortHint', { ip: family === 'ipv6' ? `[${dstParts.ip}]` : dstParts.ip, proto }));
    }
    dport = parsePort(dstParts.port, '--to');
  }

  let entry: TraceEntry | 'auto' = 'auto';
  if (args.entry !== undefined) {
    if (!ENTRIES.has(args.entry)) throw new UsageError(said('ue.entry.unknown', { entry: JSON.stringify(args.entry) }), said('ue.entry.hint'));
    entry = args.entry as TraceEntry;
  }

  let src: string | null = null;
  let sport: number | null = icmp ? null : DEFAULT_SOURCE_PORT;
  if (args.from !== undefined && args.from.trim() !== '') {
    const srcParts = splitHostPort(args.from.trim(), '--from');
    const srcFamily = checkIp(srcParts.ip, '--from');
    if (srcFamily !== family) throw new UsageError(said('ue.families', { from: srcParts.ip, to: dstParts.ip }), said('ue.families.hint'));
    src = srcParts.ip;
    if (srcParts.port !== null) {
      if (icmp) throw new UsageError(said('ue.from.noPorts', { proto }), said('ue.from.noPortsHint', { ip: srcParts.ip }));
      sport = parsePort(srcParts.port, '--from');
    }
  } else if (entry !== 'host') {
    throw new UsageError(said('ue.from.missing'), said('ue.from.missingHintHost'));
  }

  let tcpFlags: TcpFlag[] = [];
  if (proto === 'tcp') {
    tcpFlags = ['syn'];
    if (args.flags !== undefined) {
      const words = args.flags.toLowerCase().split(',').map((w) => w.trim()).filter((w) => w !== '');
      for (const w of words) if (!Object.hasOwn(TCP_FLAG_BITS, w)) throw new UsageError(said('ue.flags.unknown', { flag: JSON.stringify(w) }), said('ue.flags.use', { list: Object.keys(TCP_FLAG_BITS).join(', ') }));
      if (words.length === 0) throw new UsageError(said('ue.flags.empty'), said('ue.flags.emptyHint'));
      tcpFlags = [...new Set(words as TcpFlag[])].sort((a, b) => TCP_FLAG_BITS[a] - TCP_FLAG_BITS[b]);
    }
  } else if (args.flags !== undefined) {
    throw new UsageError(said('ue.flags.notTcp', { proto }), said('ue.flags.drop'));
  }

  let mark = 0;
  if (args.mark !== undefined) {
    const m = args.mark.trim();
    if (!/^(0x[0-9a-f]{1,8}|[0-9]{1,10})$/i.test(m) || Number(m) > 0xffffffff) {
      throw new UsageError(said('ue.mark', { mark: JSON.stringify(args.mark) }), said('ue.mark.hint'));
    }
    mark = Number(m);
  }

  let icmpType: number | null = null;
  if (icmp) {
    icmpType = ICMP_ECHO_REQUEST[family];
    if (args.icmpType !== undefined) {
      if (!/^[0-9]{1,3}$/.test(args.icmpType) || Number(args.icmpType) > 255) throw new UsageError(said('ue.icmpType', { type: JSON.stringify(args.icmpType) }), said('ue.icmpType.hint'));
      icmpType = Number(args.icmpType);
    }
  }
  return {
    family,
    proto,
    src,
    sport,
    dst: dstParts.ip,
    dport,
    icmpType,
    icmpCode: icmp ? 0 : null,
    icmpId: icmp ? 1 : null,
    tcpFlags,
    mark,
    entry,
  };
}

/** Interface roles of a pod's host side (a veth per pod, or the bridge pods hang on). */
const POD_ROLES: ReadonlySet<InterfaceRole> = new Set(['calico-endpoint', 'cilium-endpoint', 'cni-bridge', 'docker-bridge', 'veth']);

/**
 * Where the packet enters, resolved.
 * - `iif`: the input interface for pod/external entry (null for host, or when no route
 *   back to the source exists);
 * - `src`: the source address (for host entry without `--from`, chosen by the kernel's
 *   rule: the route's `prefsrc`, else the first global address of the output device);
 * - `reason`: why, in words.
 */
export interface EntryResolution {
  readonly entry: TraceEntry;
  readonly iif: string | null;
  readonly src: string;
  readonly inferred: boolean;
  readonly reason: string;
}

function interfaceRoleOf(net: NetView, ifname: string): InterfaceRole | null {
  return net.interfaces.find((i) => i.ifname === ifname)?.role ?? null;
}

/** A route that reaches a pod: its device is a pod interface, or a host route without gateway. */
function routeLooksLikePod(net: NetView, route: Route): boolean {
  if (route.gateway !== null || route.dev === null) return false;
  const role = interfaceRoleOf(net, route.dev);
  if (role !== null && POD_ROLES.has(role)) return true;
  const len = route.dst.includes('/') ? route.dst.split('/')[1] : 'host';
  return route.type === 'unicast' && role !== 'loopback' && (len === 'host' || len === '32' || len === '128') && route.scope === 'link';
}

/**
 * Resolves the entry point of `spec` on the node `net` (see the module comment).
 * Throws {@link UserError} when `--entry host` is given with a source that is not one of
 * the node's addresses, or when no source address can be found for a host packet.
 */
export function resolveEntry(spec: PacketSpec, net: NetView): EntryResolution {
  const src = spec.src;
  if (spec.entry === 'host' || (spec.entry === 'auto' && src !== null && isOwnAddress(net, src))) {
    const inferred = spec.entry === 'auto';
    if (src !== null) {
      if (!isOwnAddress(net, src)) {
        throw new UserError(said('ue.host.notOwn', { src }), said('ue.host.notOwnHint'));
      }
      return { entry: 'host', iif: null, src, inferred, reason: `${src} is an address of this node: the node itself sends the packet (output path)` };
    }
    const r = routeLookup(net.routes, spec.dst);
    const chosen = r?.route.prefsrc ?? selectSourceAddress(net, r?.route.dev ?? null, r?.route.gateway ?? spec.dst, spec.family);
    if (chosen === null) throw new UserError(said('ue.host.noSource', { dst: spec.dst }), said('ue.host.noSourceHint'));
    return {
      entry: 'host',
      iif: null,
      src: chosen,
      inferred,
      reason: `the node sends the packet; source ${chosen} ${r?.route.prefsrc ? `is the route's preferred source (src ${chosen})` : `is the first global address of ${r?.route.dev ?? 'the node'}`}`,
    };
  }
  if (src === null) throw new UsageError(said('ue.from.missing'), said('ue.from.missingHint'));
  const back = routeLookup(net.routes, src);
  const dev = back?.route.dev ?? null;
  const podLike = back !== null && back.route.type !== 'local' && routeLooksLikePod(net, back.route);
  if (spec.entry === 'pod' || (spec.entry === 'auto' && podLike)) {
    const why = dev === null ? `no route back to ${src}: the input interface is unknown` : `the route back to ${src} is ${back?.route.dst} dev ${dev}: the pod's packets arrive on ${dev}`;
    return { entry: 'pod', iif: dev, src, inferred: spec.entry === 'auto', reason: why };
  }
  const why = dev === null
    ? `no route back to ${src}: the input interface is unknown`
    : `the route back to ${src} is ${back?.route.dst}${back?.route.gateway ? ` via ${back.route.gateway}` : ''} dev ${dev}: the packet arrives from outside on ${dev}`;
  return { entry: 'external', iif: dev, src, inferred: spec.entry === 'auto', reason: why };
}

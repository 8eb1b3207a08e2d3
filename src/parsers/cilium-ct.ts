/**
 * Parser for `cilium-dbg bpf ct list global` (formerly `cilium bpf ct list global`): Cilium's
 * own connection tracking, the BPF maps `cilium_ct4_global` / `cilium_ct_any4_global` (and the
 * IPv6 pair), which hold the Service NAT state on a node with kube-proxy replacement.
 *
 * The text is one entry per line, key then value, written by `CtKey*Global.Dump` and
 * `CtEntry.StringWithTimeDiff` (cilium/cilium `pkg/maps/ctmap/types.go`, dumped by
 * `DumpEntriesWithTimeDiff` in `pkg/maps/ctmap/ctmap.go`). The forms seen across versions:
 *
 * - ≤ 1.1 (cilium/cilium#4384): `TCP IN 10.10.1.111:10054 -> 10.10.1.1:35330  expires=44067
 *   rx_packets=6 rx_bytes=540 tx_packets=4 tx_bytes=450 flags=10 revnat=0 src_sec_id=1`;
 * - 1.2 – 1.14: `TCP OUT 10.96.0.1:443 -> 10.244.0.113:46298 service expires=153061 RxPackets=0
 *   RxBytes=1 RxFlagsSeen=0x00 LastRxReport=0 TxPackets=0 TxBytes=0 TxFlagsSeen=0x1a
 *   LastTxReport=145061 Flags=0x0010 [ SeenNonSyn ] RevNAT=1 SourceSecurityID=0 IfIndex=0`
 *   — a `service` entry is printed backwards there (VIP first; fixed by cilium/cilium#28913);
 * - ≥ 1.15 (cilium/cilium#28913): `TCP SVC 10.244.0.62:55394 -> 10.96.0.1:443 expires=…`
 *   in forward order; ≥ 1.16 (cilium/cilium#32563) appends `BackendID=N`;
 * - newest (cilium/cilium#40820): `Packets=` / `Bytes=` instead of the Rx/Tx counters.
 *
 * `expires=` is an absolute time of the BPF clock (ktime seconds or jiffies), not seconds
 * left; with a clock source the agent adds ` (remaining: N sec(s))`, the only form that
 * becomes {@link ConntrackEntry.timeout}. IPv6 addresses are printed without brackets
 * (`fd00::1:80`): the port is after the last colon.
 *
 * What the NAT view can and cannot show from Cilium CT: Cilium keys each direction
 * separately and stores no reply tuple. A service entry (`SVC`, or `service` before 1.15)
 * carries the client and the VIP (`orig`), the rev-NAT index (the service ID) and the
 * backend ID (`BackendID=`, or before 1.16 the `RxBytes` slot, which is the union
 * `backend_id` of `struct ct_entry` in `bpf/lib/common.h` for service entries) — not the
 * backend address. {@link joinCiliumBackends} fills `reply.src` from the LB backend map by
 * backend ID; until then (or when the ID is not in the map) the reply is the mirror of the
 * original tuple, which reads as "not translated". Pod-side entries (`IN`/`OUT`) are
 * after DNAT already (client → backend) and are shown untranslated. Cilium's SNAT
 * (masquerading) lives in another map (`cilium_snat_v4_external`) and is not shown here.
 * Cilium has no TCP state word: `state` stays unset, `RxClosing`/`TxClosing` are in
 * {@link CiliumCtInfo.flags}. Counters of service entries are not kept (the Rx slot holds
 * the backend ID there).
 */
import {
  CONNTRACK_PROTO_NUMBERS,
  canonicalIp,
  familyOfAddress,
  type ConntrackEntry,
  type ConntrackExtraField,
  type ConntrackProto,
  type ConntrackTable,
  type ConntrackTuple,
} from '../model/conntrack.js';
import type { LbBackend, LbTable } from '../model/cilium.js';
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';

/** The direction word of a Cilium CT key: `IN`/`OUT` (TUPLE_F_IN clear/set), `SVC` (TUPLE_F_SERVICE, ≥ 1.15). */
export type CiliumCtDirection = 'IN' | 'OUT' | 'SVC';

/**
 * The Cilium fields of one CT entry.
 * - `direction`; `service`: a service entry (`SVC`, or the `service` word before 1.15);
 *   `related`: the `related` word (TUPLE_F_RELATED, ICMP errors);
 * - `expires`: absolute BPF-clock time as printed (not seconds left);
 * - `flags`: the `Flags=` u16 and its names (`SeenNonSyn`, `RxClosing`, `NodePort`, …);
 * - `revNat`: the rev-NAT index (= LB service ID), 0 when none;
 * - `backendId`: the backend chosen for a service entry (null when not known);
 * - `sourceSecurityId`: the source identity; `ifIndex`: interface index (≥ 1.13);
 * - counters (packets, bytes) as printed, null when absent.
 */
export interface CiliumCtInfo {
  readonly direction: CiliumCtDirection;
  readonly service: boolean;
  readonly related: boolean;
  readonly expires: number | null;
  readonly flags: number | null;
  readonly flagNames: readonly string[];
  readonly revNat: number | null;
  readonly backendId: number | null;
  readonly sourceSecurityId: number | null;
  readonly ifIndex: number | null;
  readonly rxPackets: bigint | null;
  readonly rxBytes: bigint | null;
  readonly txPackets: bigint | null;
  readonly txBytes: bigint | null;
}

/** A conntrack entry read from Cilium's CT map, with its Cilium fields. */
export interface CiliumCtEntry extends ConntrackEntry {
  readonly cilium: CiliumCtInfo;
}

/** A parsed `cilium-dbg bpf ct list global` (no trailers: Cilium prints none). */
export interface CiliumCtTable extends ConntrackTable {
  readonly entries: readonly CiliumCtEntry[];
}

/** Cilium's `u8proto` names (pkg/u8proto) → conntrack protocol names. */
const PROTOS: Readonly<Record<string, Exclude<ConntrackProto, 'unknown'>>> = {
  TCP: 'tcp',
  UDP: 'udp',
  ICMP: 'icmp',
  ICMPv6: 'icmpv6',
  SCTP: 'sctp',
};

const PORTED = new Set<ConntrackProto>(['tcp', 'udp', 'sctp']);

/** Splits `addr:port` (IPv6 without brackets, or with them) at the last colon. */
function splitEndpoint(text: string): { ip: string; port: number } | undefined {
  const colon = text.lastIndexOf(':');
  if (colon <= 0) return undefined;
  let host = text.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const portText = text.slice(colon + 1);
  if (!/^\d{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  const ip = canonicalIp(host);
  if (ip === undefined || port > 65535) return undefined;
  return { ip, port };
}

function uint(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  if (/^0x[0-9a-f]+$/i.test(text)) return Number.parseInt(text.slice(2), 16);
  return undefined;
}

function counter(text: string): bigint | undefined {
  return /^\d+$/.test(text) ? BigInt(text) : undefined;
}

/** One tuple from endpoints, ports only for port protocols, the ICMP id from the source port slot. */
function tuple(proto: ConntrackProto, src: { ip: string; port: number }, dst: { ip: string; port: number }): ConntrackTuple {
  if (PORTED.has(proto)) return { src: src.ip, dst: dst.ip, sport: src.port, dport: dst.port };
  if (proto === 'icmp' || proto === 'icmpv6') return { src: src.ip, dst: dst.ip, icmpId: src.port };
  return { src: src.ip, dst: dst.ip };
}

function mirror(t: ConntrackTuple): ConntrackTuple {
  const { src, dst, sport, dport, icmpId } = t;
  return {
    src: dst,
    dst: src,
    ...(dport !== undefined ? { sport: dport } : {}),
    ...(sport !== undefined ? { dport: sport } : {}),
    ...(icmpId !== undefined ? { icmpId } : {}),
  };
}

interface Fields {
  info: { -readonly [K in keyof CiliumCtInfo]: CiliumCtInfo[K] };
  extra: ConntrackExtraField[];
  remaining?: number;
}

/** Reads the `key=value` fields after the key; unknown ones go to `extra`. */
function readFields(tokens: readonly string[], f: Fields): string | undefined {
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok === '(remaining:') {
      const n = tokens[i + 1];
      if (n === undefined || !/^-?\d+$/.test(n)) return `bad "(remaining:" value`;
      f.remaining = Number(n);
      i += 2; // skip "sec(s))"
      continue;
    }
    if (tok === '[') {
      const end = tokens.indexOf(']', i + 1);
      if (end < 0) return 'flag list without "]"';
      f.info.flagNames = tokens.slice(i + 1, end);
      i = end;
      continue;
    }
    const eq = tok.indexOf('=');
    if (eq <= 0) {
      f.extra.push({ key: tok });
      continue;
    }
    const key = tok.slice(0, eq);
    const value = tok.slice(eq + 1);
    const n = uint(value);
    const c = counter(value);
    const info = f.info;
    switch (key) {
      case 'expires': info.expires = n ?? null; break;
      case 'RxPackets': case 'rx_packets': case 'Packets': info.rxPackets = c ?? null; break;
      case 'RxBytes': case 'rx_bytes': case 'Bytes': info.rxBytes = c ?? null; break;
      case 'TxPackets': case 'tx_packets': info.txPackets = c ?? null; break;
      case 'TxBytes': case 'tx_bytes': info.txBytes = c ?? null; break;
      // ≤ 1.1 printed the flags in hex without 0x.
      case 'flags': info.flags = /^[0-9a-f]+$/i.test(value) ? Number.parseInt(value, 16) : null; break;
      case 'Flags': info.flags = n ?? null; break;
      case 'RevNAT': case 'revnat': info.revNat = n ?? null; break;
      case 'SourceSecurityID': case 'src_sec_id': info.sourceSecurityId = n ?? null; break;
      case 'IfIndex': info.ifIndex = n ?? null; break;
      case 'BackendID': info.backendId = n ?? null; break;
      case 'RxFlagsSeen': case 'TxFlagsSeen': case 'LastRxReport': case 'LastTxReport': break; // known, not modelled
      default: f.extra.push({ key, value });
    }
    if (n === undefined && KNOWN_NUMERIC.has(key)) return `bad value in "${tok}"`;
  }
  return undefined;
}

const KNOWN_NUMERIC = new Set([
  'expires', 'RxPackets', 'rx_packets', 'Packets', 'RxBytes', 'rx_bytes', 'Bytes', 'TxPackets', 'tx_packets', 'TxBytes',
  'tx_bytes', 'Flags', 'RevNAT', 'revnat', 'SourceSecurityID', 'src_sec_id', 'IfIndex', 'BackendID', 'RxFlagsSeen',
  'TxFlagsSeen', 'LastRxReport', 'LastTxReport',
]);

/**
 * Parses one line; a string is the reason it is not an entry.
 */
function parseLine(raw: string, line: number): CiliumCtEntry | string {
  const tokens = raw.trim().split(/\s+/);
  const [protoWord, dirWord, srcText, arrow, dstText] = tokens;
  if (protoWord === undefined || dirWord === undefined || srcText === undefined || dstText === undefined || arrow !== '->') {
    return 'not "<PROTO> <IN|OUT|SVC> <addr:port> -> <addr:port>"';
  }
  if (dirWord !== 'IN' && dirWord !== 'OUT' && dirWord !== 'SVC') return `unknown direction "${dirWord}"`;
  const a = splitEndpoint(srcText);
  const b = splitEndpoint(dstText);
  if (!a || !b) return 'bad address:port';
  if (familyOfAddress(a.ip) !== familyOfAddress(b.ip)) return 'mixed address families';
  let rest = tokens.slice(5);
  let related = false;
  let serviceWord = false;
  while (rest[0] === 'related' || rest[0] === 'service') {
    if (rest[0] === 'related') related = true;
    else serviceWord = true;
    rest = rest.slice(1);
  }
  const proto: ConntrackProto = PROTOS[protoWord] ?? 'unknown';
  const protoNum = proto === 'unknown' ? (uint(protoWord) ?? 0) : CONNTRACK_PROTO_NUMBERS[proto];
  if (proto === 'unknown' && uint(protoWord) === undefined) return `unknown protocol "${protoWord}"`;
  const f: Fields = {
    info: {
      direction: dirWord, service: dirWord === 'SVC' || serviceWord, related, expires: null, flags: null, flagNames: [],
      revNat: null, backendId: null, sourceSecurityId: null, ifIndex: null, rxPackets: null, rxBytes: null, txPackets: null, txBytes: null,
    },
    extra: [],
  };
  const bad = readFields(rest, f);
  if (bad) return bad;
  const info = f.info;
  // Before 1.15 a service entry is printed backwards (VIP:port -> client:port).
  const [client, vip] = serviceWord && dirWord !== 'SVC' ? [b, a] : [a, b];
  if (info.service && info.backendId === null && info.rxBytes !== null && info.rxBytes <= 0xffffffffn) {
    info.backendId = Number(info.rxBytes); // the `backend_id` union slot
  }
  const orig = tuple(proto, client, vip);
  const counted = !info.service && info.txPackets !== null;
  const withCounters = (t: ConntrackTuple, p: bigint | null, by: bigint | null): ConntrackTuple =>
    counted && p !== null && by !== null ? { ...t, packets: p, bytes: by } : t;
  const entry: CiliumCtEntry = {
    line,
    raw,
    family: familyOfAddress(client.ip),
    proto,
    protoNum,
    ...(f.remaining !== undefined ? { timeout: Math.max(0, f.remaining) } : {}),
    orig: withCounters(orig, info.txPackets, info.txBytes),
    reply: withCounters(mirror(orig), info.rxPackets, info.rxBytes),
    flags: [],
    ...(f.extra.length > 0 ? { extra: f.extra } : {}),
    cilium: info,
  };
  return entry;
}

/**
 * Parses `cilium-dbg bpf ct list global` text into conntrack entries (see the module doc
 * for the forms and what they can show). Blank lines are skipped; a line that is not an
 * entry is an `error` diagnostic `not-a-ct-entry`; fields the model does not know are kept
 * in `extra` with an `info` diagnostic `unknown-field`. Pure; never throws.
 */
export function parseCiliumCt(text: string, origin: string): ParseResult<CiliumCtTable> {
  const entries: CiliumCtEntry[] = [];
  const diagnostics: Diagnostic[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.trim() === '') continue;
    const r = parseLine(raw, i + 1);
    if (typeof r === 'string') {
      diagnostics.push(diagnostic('error', origin, i + 1, raw, 'not-a-ct-entry', r));
      continue;
    }
    for (const x of r.extra ?? []) {
      diagnostics.push(diagnostic('info', origin, i + 1, raw, 'unknown-field', `field "${x.key}" not modelled`));
    }
    entries.push(r);
  }
  return { value: { entries, trailers: [] }, diagnostics };
}

/**
 * The backends of `lb` by backend ID: the backend map, then backends named by service slots.
 */
function backendsById(lb: LbTable): Map<number, LbBackend> {
  const byId = new Map<number, LbBackend>();
  for (const b of lb.backends) if (b.id !== null) byId.set(b.id, b);
  for (const s of lb.services) for (const slot of s.slots) {
    const b = slot.backend;
    if (b && b.id !== null && !byId.has(b.id)) byId.set(b.id, b);
  }
  return byId;
}

/**
 * Joins each service entry's backend ID to the backend address of `lb` (Cilium's LB
 * table): the entry's `reply` becomes backend → client, as netfilter conntrack's reply
 * tuple would read after DNAT. Entries without a backend ID, or whose ID `lb` does not
 * have, are returned unchanged (mirrored reply). Returns a new table; pure.
 */
export function joinCiliumBackends(table: CiliumCtTable, lb: LbTable | null): CiliumCtTable {
  if (!lb) return table;
  const byId = backendsById(lb);
  if (byId.size === 0) return table;
  const entries = table.entries.map((e) => {
    const id = e.cilium.backendId;
    if (!e.cilium.service || id === null || id === 0) return e;
    const b = byId.get(id);
    const ip = b ? canonicalIp(b.ip) : undefined;
    if (!b || ip === undefined || familyOfAddress(ip) !== e.family) return e;
    const ported = PORTED.has(e.proto);
    const reply: ConntrackTuple = {
      ...e.reply,
      src: ip,
      ...(ported ? { sport: b.port } : {}),
    };
    return { ...e, reply };
  });
  return { ...table, entries };
}

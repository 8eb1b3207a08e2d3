/**
 * `cilium-dbg bpf lb list` (and the older `cilium bpf lb list`): the agent's dump of
 * `cilium_lb{4,6}_services_v2` joined with the backend map, text or `-o json`.
 *
 * Format source: cilium/cilium `cilium-dbg/cmd/bpf_lb_list.go` (`dumpSVC`, `TablePrinter`)
 * and `pkg/loadbalancer/maps/types.go` (`Service4Key.String`). Layouts seen in the wild:
 *
 * - 1.15+: every slot is its own row; the key carries proto and slot:
 *   `10.96.0.10:53/UDP (2)   10.244.0.2:53/UDP (5) (2)`; slot 0 is
 *   `0.0.0.0:0 (5) (0) [ClusterIP, non-routable] ` (trailing space, `(L7LB Proxy Port: N)` when L7).
 * - ~1.12–1.14: the key (`[fd00::1]:80`, no proto) is printed once, more slots follow on
 *   rows with an empty first column; entries `[2406::f]:7979 (40) (1)`.
 * - ≤1.11: entries without the slot: `10.0.0.1:80 (5)` and `0.0.0.0:0 (5) [ClusterIP]`;
 *   ~1.6 printed `[FLAGS: NONE]`-style flag text (kept as unknown flags), and 2018 builds
 *   (cilium issue 3905) printed the master (slot-0) row as `0.0.0.0:0 (0)`, no brackets and
 *   rev-NAT 0. Every `0.0.0.0:0`/`[::]:0` entry is the master row, never a backend.
 * - 1.16+ (cilium PR 31503): an L7 load-balancer frontend ends its master row with
 *   `(L7LB Proxy Port: N)`; before, the port is not in the listing (the flags still say
 *   `l7-load-balancer`).
 *
 * The listing prints no `count`/`qcount`: which slots take new flows is not in it (null here;
 * `cilium-dbg service list` has each backend's state, see `mergeCiliumListings`).
 *
 * Row order is Go map order (random); the parser sorts slots, the formatter sorts services.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { LbBackend, LbService, LbSlot, LbTable } from '../model/cilium.js';
import { formatFrontend, formatServiceFlags, parseServiceFlags, serviceTypeFromFlags, serviceTypeFromName } from '../model/cilium.js';
import type { L3n4 } from './cilium-addr.js';
import { compareFrontends, formatAddrCluster, parseL3n4 } from './cilium-addr.js';
import { isKubectlNotice, textLines } from './cilium-columns.js';
import { looksLikeJson, obj, parseJsonDocument } from './cilium-json.js';
import { CILIUM_TABWRITER, tabwrite } from './cilium-tabwriter.js';
import { joinHostPort } from '../net/address.js';

/** One entry of a `bpf lb list` row, as read. */
type Entry =
  | { kind: 'frontend'; revNat: number; slot: number | null; flagsText: string | null; l7Port: number | null }
  | { kind: 'backend'; addr: L3n4; revNat: number; slot: number | null }
  | { kind: 'missing'; backendId: number };

const FRONTEND_RE = /^(?:0\.0\.0\.0|\[::\]):0 \((\d+)\)(?: \((\d+)\))?(?: \[([^\]]*)\])?(?: \(L7LB Proxy Port: (\d+)\))?\s*$/;
const BACKEND_RE = /^(\S+) \((\d+)\)(?: \((\d+)\))?\s*$/;
const MISSING_RE = /^backend (\d+) not found\s*$/;
const ROW_RE = /^(\S+)( \(\d+\))?\s+(\S.*)$/;

function parseEntry(text: string): Entry | null {
  let m = FRONTEND_RE.exec(text);
  if (m) {
    return {
      kind: 'frontend',
      revNat: Number(m[1]),
      slot: m[2] === undefined ? null : Number(m[2]),
      flagsText: m[3] ?? null,
      l7Port: m[4] === undefined ? null : Number(m[4]),
    };
  }
  m = MISSING_RE.exec(text);
  if (m) return { kind: 'missing', backendId: Number(m[1]) };
  m = BACKEND_RE.exec(text);
  if (m) {
    const addr = parseL3n4(m[1] ?? '');
    if (addr === null) return null;
    return { kind: 'backend', addr, revNat: Number(m[2]), slot: m[3] === undefined ? null : Number(m[3]) };
  }
  return null;
}

/** One row once split: the service key (null on a continuation row), its slot, the entry text. */
interface Row {
  readonly key: string | null;
  readonly keySlot: number | null;
  readonly entry: string;
  readonly line: number;
  readonly text: string;
}

/** Builds services from rows, grouping by frontend (key without its slot). */
class ServiceBuilder {
  private readonly groups = new Map<string, { fe: L3n4; rows: { row: Row; entry: Entry }[] }>();
  constructor(
    private readonly origin: string,
    private readonly diags: Diagnostic[],
  ) {}

  add(row: Row, keyText: string): void {
    const fe = parseL3n4(keyText);
    if (fe === null) {
      this.diags.push(diagnostic('error', this.origin, row.line, row.text, 'unknown-line', `not a bpf lb list row: "${keyText}" is not a service address`));
      return;
    }
    const entry = parseEntry(row.entry);
    if (entry === null) {
      this.diags.push(diagnostic('error', this.origin, row.line, row.text, 'unknown-entry', `backend entry "${row.entry}" not understood`));
      return;
    }
    const id = formatFrontend(fe);
    const group = this.groups.get(id) ?? { fe, rows: [] };
    group.rows.push({ row, entry });
    this.groups.set(id, group);
  }

  build(): LbService[] {
    return [...this.groups.values()].map((g) => this.service(g.fe, g.rows));
  }

  private service(fe: L3n4, rows: { row: Row; entry: Entry }[]): LbService {
    const warn = (row: Row, code: string, msg: string) => this.diags.push(diagnostic('warning', this.origin, row.line, row.text, code, msg));
    let id: number | null = null;
    let flags: number | null = null;
    let type: LbService['type'] = null;
    let l7ProxyPort: number | null = null;
    let sawFrontend = false;
    const slots: LbSlot[] = [];
    const seen = new Set<number>();
    for (const { row, entry } of rows) {
      const entrySlot = entry.kind === 'missing' ? null : entry.slot;
      if (row.keySlot !== null && entrySlot !== null && row.keySlot !== entrySlot) {
        warn(row, 'slot-mismatch', `key slot ${row.keySlot} differs from entry slot ${entrySlot}`);
      }
      const slot = entrySlot ?? row.keySlot;
      // The 2018 master row carries rev-NAT 0, which is no service's id.
      if (entry.kind !== 'missing' && !(entry.kind === 'frontend' && entry.revNat === 0)) {
        if (id === null) id = entry.revNat;
        else if (id !== entry.revNat) warn(row, 'revnat-mismatch', `rev-NAT id ${entry.revNat} differs from ${id} on the same service`);
      }
      if (entry.kind === 'frontend') {
        sawFrontend = true;
        l7ProxyPort = entry.l7Port;
        // No brackets (2018 listings) or `FLAGS: …` (~1.6): the row says no type or flags.
        if (entry.flagsText === null || /^FLAGS:/.test(entry.flagsText)) continue;
        flags = parseServiceFlags(entry.flagsText);
        type = flags === null ? serviceTypeFromName(entry.flagsText.split(',')[0]?.trim() ?? '') : serviceTypeFromFlags(flags);
        if (flags === null) warn(row, 'unknown-flags', `service flags "${entry.flagsText}" not understood`);
        continue;
      }
      if (slot !== null) {
        if (seen.has(slot)) warn(row, 'duplicate-slot', `slot ${slot} listed twice`);
        seen.add(slot);
      }
      slots.push(entry.kind === 'missing' ? { slot, backendId: entry.backendId, backend: null, flags: null } : { slot, backendId: null, backend: backendOf(entry.addr), flags: null });
    }
    const first = rows[0]?.row;
    if (!sawFrontend && first) warn(first, 'missing-frontend-slot', `no slot-0 (frontend) row for ${formatFrontend(fe)}`);
    slots.sort((a, b) => (a.slot ?? Infinity) - (b.slot ?? Infinity));
    return {
      frontend: { ip: fe.ip, port: fe.port, protocol: fe.protocol, scope: fe.scope },
      id,
      type,
      flags,
      count: null,
      qcount: null,
      algorithm: null,
      affinityTimeout: null,
      l7ProxyPort,
      name: null,
      slots,
      raw: rows.map((r) => r.row.text).join('\n'),
    };
  }
}

function backendOf(addr: L3n4): LbBackend {
  return { id: null, ip: addr.ip, port: addr.port, protocol: addr.protocol, state: null, weight: null, clusterId: addr.clusterId, zone: null, nodeName: null };
}

/**
 * Parses `cilium-dbg bpf lb list` output (text in any of the layouts above, or `-o json`).
 * Returns one {@link LbService} per frontend with slots sorted; backend IDs, counts and
 * states are null (the listing does not print them). Never throws.
 */
export function parseCiliumBpfLbList(text: string, origin: string): ParseResult<LbTable> {
  const diags: Diagnostic[] = [];
  const builder = new ServiceBuilder(origin, diags);
  const json = looksLikeJson(text);
  if (json) {
    parseJson(text, origin, builder, diags);
  } else {
    let lastKey: { key: string; line: number } | null = null;
    textLines(text).forEach((line, i) => {
      const n = i + 1;
      if (line.trim() === '' || isKubectlNotice(line) || /^SERVICE ADDRESS\s/.test(line)) return;
      if (/^\s/.test(line)) {
        if (lastKey === null) {
          diags.push(diagnostic('error', origin, n, line, 'orphan-row', 'continuation row before any service address'));
          return;
        }
        builder.add({ key: null, keySlot: null, entry: line.trim(), line: n, text: line }, lastKey.key);
        return;
      }
      const m = ROW_RE.exec(line);
      if (m === null) {
        diags.push(diagnostic('error', origin, n, line, 'unknown-line', 'not a bpf lb list row'));
        return;
      }
      const key = m[1] ?? '';
      const keySlot = m[2] === undefined ? null : Number(m[2].slice(2, -1));
      lastKey = { key, line: n };
      builder.add({ key, keySlot, entry: (m[3] ?? '').trim(), line: n, text: line }, key);
    });
  }
  return { value: { source: json ? 'bpf-lb-list-json' : 'bpf-lb-list', services: builder.build(), backends: [], revNats: [] }, diagnostics: diags };
}

/** `-o json`: `{"<key>": ["<entry>", …]}` (`command.PrintOutput(serviceList)`). */
function parseJson(text: string, origin: string, builder: ServiceBuilder, diags: Diagnostic[]): void {
  const parsed = parseJsonDocument(text, origin, diags);
  if (parsed === undefined) return;
  const doc = obj(parsed);
  if (doc === null) {
    diags.push(diagnostic('error', origin, 0, text.slice(0, 200), 'unexpected-json', 'expected an object of service address → entries'));
    return;
  }
  for (const [key, entries] of Object.entries(doc)) {
    const m = /^(\S+)(?: \((\d+)\))?$/.exec(key);
    if (m === null || !Array.isArray(entries)) {
      diags.push(diagnostic('error', origin, 0, key, 'unexpected-json', 'key is not a service address or value not an array'));
      continue;
    }
    for (const entry of entries) {
      const row: Row = { key, keySlot: m[2] === undefined ? null : Number(m[2]), entry: String(entry).trim(), line: 0, text: `${key}: ${String(entry)}` };
      builder.add(row, m[1] ?? '');
    }
  }
}

/** Slot-0 entry text as Cilium 1.15+ prints it. */
function frontendEntry(svc: LbService): string {
  const wild = svc.frontend.ip.includes(':') ? '[::]' : '0.0.0.0';
  const flags = svc.flags !== null ? formatServiceFlags(svc.flags) : (svc.type ?? 'ClusterIP');
  const extra = svc.l7ProxyPort !== null ? `(L7LB Proxy Port: ${svc.l7ProxyPort})` : '';
  return `${wild}:0 (${svc.id ?? 0}) (0) [${flags}] ${extra}`;
}

function slotEntry(svc: LbService, slot: LbSlot): string {
  const be = slot.backend;
  if (be === null) return `backend ${slot.backendId ?? 0} not found`;
  const host = formatAddrCluster(be.ip, be.clusterId);
  const addr = svc.frontend.ip.includes(':') ? `[${host}]` : host;
  return `${addr}:${be.port}/${be.protocol ?? 'ANY'} (${svc.id ?? 0}) (${slot.slot ?? 0})`;
}

/**
 * Formats a table as `cilium-dbg bpf lb list` 1.15+ prints it (header, one row per slot,
 * Go tabwriter padding including trailing spaces). Services are sorted (IPv4 before IPv6,
 * then address, port, protocol, scope) and slots ascend — real output is in random order.
 * A service without flags prints its type alone; a null protocol prints as `ANY`.
 */
export function formatCiliumBpfLbList(table: LbTable): string {
  let cells = 'SERVICE ADDRESS\tBACKEND ADDRESS (REVNAT_ID) (SLOT)\n';
  const services = [...table.services].sort((a, b) => compareFrontends(a.frontend, b.frontend));
  for (const svc of services) {
    const key = `${joinHostPort(svc.frontend.ip, svc.frontend.port)}/${svc.frontend.protocol ?? 'ANY'}${svc.frontend.scope === 'internal' ? '/i' : ''}`;
    cells += `${key} (0)\t${frontendEntry(svc)}\t\n`;
    for (const slot of svc.slots) cells += `${key} (${slot.slot ?? 0})\t${slotEntry(svc, slot)}\t\n`;
  }
  return tabwrite(cells, CILIUM_TABWRITER);
}

/**
 * The part of a table that `bpf lb list` shows: frontend, id, type, flags, L7 port, and per
 * slot the backend address, port, protocol and cluster id (a missing backend keeps its id).
 * Everything else becomes null, `raw` becomes `''`, services are sorted. Use it to compare
 * a table from the maps with one parsed from the listing.
 */
export function bpfLbListView(table: LbTable): LbTable {
  const services = [...table.services]
    .sort((a, b) => compareFrontends(a.frontend, b.frontend))
    .map(
      (s): LbService => ({
        frontend: { ...s.frontend, protocol: s.frontend.protocol ?? 'ANY' },
        id: s.id,
        type: s.type,
        flags: s.flags,
        count: null,
        qcount: null,
        algorithm: null,
        affinityTimeout: null,
        l7ProxyPort: s.l7ProxyPort,
        name: null,
        raw: '',
        slots: s.slots.map((sl) => ({
          slot: sl.slot,
          backendId: sl.backend === null ? sl.backendId : null,
          flags: null,
          backend: sl.backend && { ...backendOf({ ...sl.backend, protocol: sl.backend.protocol ?? 'ANY', scope: 'external', clusterId: sl.backend.clusterId ?? 0 }) },
        })),
      }),
    );
  return { source: 'bpf-lb-list', services, backends: [], revNats: [] };
}

/**
 * The reference of test/unit/lb-assemble.test.ts: `assembleLbTable` (src/parsers/bpftool-lb-decode.ts)
 * as it was before session 12 (at f6dc504, verbatim but for imports and the name): every
 * entry of every map in one array, services grouped by a text key, each group's slots and
 * raw text sorted apart, the services sorted by a comparator that looks each address up.
 * The faster path must build exactly this table and these diagnostics.
 */
import type { Diagnostic, ParseResult } from '../../src/model/diagnostics.js';
import { diagnostic } from '../../src/model/diagnostics.js';
import type { LbBackend, LbRevNat, LbService, LbSlot, LbTable } from '../../src/model/cilium.js';
import { algorithmFromNumber, backendStateFromFlags, formatFrontend, protocolFromNumber, SVC_FLAG, serviceTypeFromFlags } from '../../src/model/cilium.js';
import type { DecodedLbMap } from '../../src/parsers/bpftool-lb-decode.js';
import type { BackendEntry, ServiceEntry } from '../../src/parsers/bpftool-lb-layouts.js';
import { compareFrontends, compareIpBytes, ipBytes } from '../../src/parsers/cilium-addr.js';

function backendOf(e: BackendEntry, diags: Diagnostic[], origin: string): LbBackend {
  const protocol = protocolFromNumber(e.proto);
  if (protocol === null) diags.push(diagnostic('warning', origin, 0, `backend ${e.id}`, 'unknown-protocol', `backend ${e.id} has IP protocol ${e.proto}, which Cilium does not name`));
  return { id: e.id, ip: e.ip, port: e.port, protocol, state: backendStateFromFlags(e.stateFlags), weight: null, clusterId: e.clusterId, zone: e.zone, nodeName: null };
}

/**
 * Joins decoded maps into the table `cilium-dbg bpf lb list` shows: one {@link LbService} per
 * (frontend, scope) with slot 0's id/flags/count/qcount/algorithm, slots resolved to backends
 * by ID (IPv4 and IPv6 share one ID space). A slot whose backend is missing keeps its ID with
 * `backend: null`; a frontend without slot 0 gets `type: null` and a warning. Maglev,
 * affinity and source-range entries are not part of the table (see `DecodedLbMap.entries`).
 */
export function assembleLbTableReference(maps: readonly DecodedLbMap[], origin = 'bpf-maps'): ParseResult<LbTable> {
  const diags: Diagnostic[] = [];
  const all = maps.flatMap((m) => m.entries);
  const backends = new Map<number, LbBackend>();
  for (const e of all) if (e.kind === 'backends') backends.set(e.id, backendOf(e, diags, origin));
  const revNats: LbRevNat[] = all.flatMap((e) => (e.kind === 'revnat' ? [{ id: e.id, ip: e.ip, port: e.port }] : []));

  const groups = new Map<string, (ServiceEntry & { hex: string })[]>();
  for (const e of all) {
    if (e.kind !== 'services') continue;
    const id = `${e.family}|${e.ip}|${e.port}|${e.proto}|${e.scope}`;
    const group = groups.get(id);
    if (group) group.push(e);
    else groups.set(id, [e]);
  }
  const services: LbService[] = [];
  for (const entries of groups.values()) {
    const svc = serviceOf(entries, backends, diags, origin);
    if (svc) services.push(svc);
  }
  // compareFrontends reads both addresses on every comparison: read each address once.
  const bytes = new Map<string, readonly number[]>();
  const ipOf = (ip: string): readonly number[] => {
    let b = bytes.get(ip);
    if (b === undefined) bytes.set(ip, (b = ipBytes(ip) ?? []));
    return b;
  };
  services.sort((a, b) => compareIpBytes(ipOf(a.frontend.ip), ipOf(b.frontend.ip)) || compareFrontends(a.frontend, b.frontend));
  revNats.sort((a, b) => a.id - b.id);
  return { value: { source: 'bpf-maps', services, backends: [...backends.values()].sort((a, b) => (a.id ?? 0) - (b.id ?? 0)), revNats }, diagnostics: diags };
}

function serviceOf(entries: (ServiceEntry & { hex: string })[], backends: Map<number, LbBackend>, diags: Diagnostic[], origin: string): LbService | null {
  const first = entries[0];
  if (!first) return null;
  const protocol = protocolFromNumber(first.proto);
  const frontend = { ip: first.ip, port: first.port, protocol, scope: first.scope === 1 ? ('internal' as const) : ('external' as const) };
  const where = formatFrontend(frontend);
  if (protocol === null) diags.push(diagnostic('warning', origin, 0, where, 'unknown-protocol', `frontend protocol number ${first.proto} is not one Cilium names`));
  if (first.scope > 1) diags.push(diagnostic('warning', origin, 0, where, 'unknown-scope', `lookup scope ${first.scope} is neither external (0) nor internal (1)`));
  const master = entries.find((e) => e.slot === 0);
  if (!master) diags.push(diagnostic('warning', origin, 0, where, 'missing-frontend-slot', `no slot 0 entry for ${where}`));
  const l7 = ((master?.flags ?? 0) & SVC_FLAG.l7LoadBalancer) !== 0;
  const slots: LbSlot[] = entries
    .filter((e) => e.slot !== 0)
    .sort((a, b) => a.slot - b.slot)
    .map((e) => {
      const backend = backends.get(e.union) ?? null;
      if (backend === null) diags.push(diagnostic('warning', origin, 0, `${where} slot ${e.slot}`, 'missing-backend', `backend ${e.union} not found`));
      return { slot: e.slot, backendId: e.union, backend, flags: e.flags };
    });
  return {
    frontend,
    id: master?.revNatId ?? first.revNatId,
    type: master && master.flags !== null ? serviceTypeFromFlags(master.flags) : null,
    flags: master?.flags ?? null,
    count: master?.count ?? null,
    qcount: master?.qcount ?? null,
    algorithm: master && !l7 && master.flags !== null ? algorithmFromNumber(master.union >>> 24) : null,
    affinityTimeout: master && !l7 && master.flags !== null ? master.union & 0xffffff : null,
    l7ProxyPort: master && l7 ? master.l7ProxyPort : null,
    name: null,
    slots,
    raw: [...entries].sort((a, b) => a.slot - b.slot).map((e) => e.hex).join('\n'),
  };
}

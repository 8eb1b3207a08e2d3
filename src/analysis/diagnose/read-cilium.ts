/**
 * What a Cilium node's LB table does with each frontend (the `cilium_lb4_services_v2` master
 * entry and its backend slots, joined with `cilium_lb4_backends_v3`), in the common frontend
 * shape, plus the Cilium-only findings: backends in a state other than `active`, slot counts
 * that differ from the backends the API gives, backends no slot uses, and where the agent's
 * `service list` and the BPF maps disagree (`LbTable.disagreements`,
 * src/analysis/cilium-listings.ts). Layout: Cilium pkg/loadbalancer, bpf/lib/lb.h. Pure.
 */
import type { LbTable } from '../../model/cilium.js';
import { lbServiceFrontend } from './expect.js';
import { endpointKey, frontendKey, type ProgrammedFrontend } from './frontends.js';
import { saying } from './say.js';
import type { Finding } from './types.js';

/** Every IPv4 frontend of the LB table (IPv6 ones are not predicted: the encoder's input is IPv4). */
export function readCiliumFrontends(table: LbTable): ProgrammedFrontend[] {
  return table.services.filter((s) => !s.frontend.ip.includes(':') && s.frontend.scope === 'external').map(lbServiceFrontend);
}

/** Cilium findings of one frontend the node has, against the one expected (same key). */
export function ciliumFrontendFindings(exp: ProgrammedFrontend, act: ProgrammedFrontend): Finding[] {
  const out: Finding[] = [];
  const fe = frontendKey(act);
  const port = exp.portName || String(exp.port);
  for (const e of act.endpoints) {
    if (e.state && e.state !== 'active' && e.state !== 'terminating') {
      out.push({ layer: 'dataplane', code: 'cilium-backend-state', severity: 'degraded', ...saying('dg.ciliumState', { frontend: fe, endpoint: endpointKey(e), state: e.state }), port, frontend: fe, endpoint: endpointKey(e), evidence: act.evidence });
    }
  }
  const live = (f: ProgrammedFrontend) => f.endpoints.filter((e) => (e.weight ?? 0) > 0).length;
  if (live(exp) !== live(act) || exp.endpoints.length !== act.endpoints.length) {
    out.push({ layer: 'dataplane', code: 'cilium-slot-count', severity: 'degraded', ...saying('dg.ciliumSlots', { frontend: fe, live: live(act), slots: act.endpoints.length, apiLive: live(exp), apiSlots: exp.endpoints.length }), port, frontend: fe, evidence: act.evidence });
  }
  return out;
}

/** Backends of the backend map that no service slot uses (`ip:port/PROTO`): leftovers of deleted endpoints or a hand-made entry. */
export function orphanBackends(table: LbTable): Finding[] {
  if (table.backends.length === 0) return [];
  const used = new Set<number>();
  for (const s of table.services) for (const slot of s.slots) if (slot.backendId !== null) used.add(slot.backendId);
  return table.backends
    .filter((b) => b.id !== null && !used.has(b.id))
    .map((b) => ({
      layer: 'dataplane' as const,
      code: 'endpoint-extra' as const,
      severity: 'info' as const,
      ...saying('dg.ciliumOrphan', { id: b.id ?? '?', address: `${b.ip}:${b.port}/${b.protocol ?? 'ANY'}` }),
      endpoint: `${b.ip}:${b.port}`,
      evidence: [{ pane: 'lb' as const, ref: `backend ${b.id}` }],
    }));
}

/** The agent's listing against the BPF maps, per frontend key (`ip:port/PROTO`). */
export function listingDisagreements(table: LbTable): Map<string, Finding> {
  const out = new Map<string, Finding>();
  for (const d of table.disagreements ?? []) {
    const key = d.frontend.replace(/\/i$/, '');
    out.set(key, { layer: 'dataplane', code: 'cilium-listing-disagrees', severity: 'degraded', ...saying('dg.ciliumListing', { frontend: d.frontend, message: d.message }), frontend: key, evidence: [{ pane: 'lb', ref: key }] });
  }
  return out;
}

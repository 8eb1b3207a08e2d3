/**
 * Cilium's LB table from the agent's own listings when the raw maps are not there (bpftool
 * missing or failing on the node, an old capture), and the check of the maps against them.
 *
 * - `cilium-dbg bpf lb list` is the maps as the agent prints them: frontends, slots, rev-NAT
 *   ids, flags, the L7 proxy port — but no `count`/`qcount` and no backend state.
 * - `cilium-dbg service list` is the agent's services with each backend's state
 *   (`active`, `terminating`, `quarantined`, `maintenance`) but no slots.
 *
 * Joined, they give what the datapath decides with: only `active` backends take new flows
 * (they fill slots 1..count; the others sit after count, in qcount, for flows already in
 * Cilium's conntrack: cilium PRs 18814, 25863, 31840). What one listing lacks stays `null`
 * (unknown), never 0. Where two sources disagree, an `LbDisagreement` and a warning name both.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { LbBackend, LbDisagreement, LbService, LbSlot, LbTable } from '../model/cilium.js';
import { formatFrontend } from '../model/cilium.js';
import { joinHostPort } from '../net/address.js';

/** Where each listing came from (probe ids, for diagnostics). */
export interface ListingOrigins {
  readonly lbList: string;
  readonly serviceList: string;
}

const sameFrontend = (a: LbService, b: LbService) =>
  a.frontend.ip === b.frontend.ip &&
  a.frontend.port === b.frontend.port &&
  a.frontend.scope === b.frontend.scope &&
  (a.frontend.protocol === null || b.frontend.protocol === null || a.frontend.protocol === b.frontend.protocol);

const sameBackend = (a: LbBackend, b: LbBackend) => a.ip === b.ip && a.port === b.port && (a.protocol === null || b.protocol === null || a.protocol === b.protocol);

const backendText = (b: LbBackend) => joinHostPort(b.ip, b.port);

/** count/qcount from states when every backend's state is known (active ones first), else null. */
function countsOf(slots: readonly LbSlot[]): { count: number | null; qcount: number | null } {
  if (slots.length === 0) return { count: 0, qcount: 0 };
  if (slots.some((s) => s.backend === null || s.backend.state === null)) return { count: null, qcount: null };
  const count = slots.filter((s) => s.backend?.state === 'active').length;
  return { count, qcount: slots.length - count };
}

/**
 * Joins `cilium-dbg bpf lb list` (`lbList`) with `cilium-dbg service list` (`serviceList`);
 * either may be null. Backends are matched by address, port and protocol; a slot takes the
 * state the service list gives it, and the frontend's `count`/`qcount` are derived when every
 * slot's state is known. The active slots must be 1..count (the agent's layout); when they are
 * not, or a frontend or backend is in one listing only, or the ids differ, the table carries an
 * {@link LbDisagreement} and a warning names both listings. Pure; never throws.
 */
export function mergeCiliumListings(lbList: LbTable | null, serviceList: LbTable | null, origins: ListingOrigins): { table: LbTable | null; diagnostics: Diagnostic[] } {
  const diags: Diagnostic[] = [];
  const disagreements: LbDisagreement[] = [];
  const disagree = (svc: LbService, message: string, origin: string) => {
    const frontend = formatFrontend(svc.frontend);
    disagreements.push({ frontend, message });
    diags.push(diagnostic('warning', origin, 0, frontend, 'listings-disagree', message));
  };
  if (lbList === null && serviceList === null) return { table: null, diagnostics: diags };
  if (lbList === null) {
    const services = serviceList!.services.map((s) => ({ ...s, ...countsOf(s.slots) }));
    return { table: { ...serviceList!, services, statesFrom: 'service-list' }, diagnostics: diags };
  }
  if (serviceList === null) return { table: lbList, diagnostics: diags };

  const LB = '`cilium-dbg bpf lb list`';
  const SL = '`cilium-dbg service list`';
  const used = new Set<LbService>();
  const services = lbList.services.map((svc): LbService => {
    const other = serviceList.services.find((s) => !used.has(s) && sameFrontend(s, svc));
    if (!other) {
      disagree(svc, `${LB} lists this frontend (in the maps) but ${SL} does not: its backend states are unknown`, origins.serviceList);
      return svc;
    }
    used.add(other);
    if (svc.id !== null && other.id !== null && svc.id !== other.id) disagree(svc, `${LB} gives rev-NAT id ${svc.id}, ${SL} service id ${other.id}`, origins.serviceList);
    const taken = new Set<LbBackend>();
    const slots = svc.slots.map((slot): LbSlot => {
      const be = slot.backend;
      if (be === null) return slot;
      const match = other.slots.map((s) => s.backend).find((b): b is LbBackend => b !== null && !taken.has(b) && sameBackend(b, be));
      if (!match) {
        disagree(svc, `${LB} has backend ${backendText(be)} in slot ${slot.slot ?? '?'}, ${SL} does not list it: its state is unknown`, origins.serviceList);
        return slot;
      }
      taken.add(match);
      return { ...slot, backend: { ...be, state: match.state, nodeName: be.nodeName ?? match.nodeName, weight: be.weight ?? match.weight } };
    });
    for (const s of other.slots) {
      if (s.backend && !taken.has(s.backend)) disagree(svc, `${SL} has backend ${backendText(s.backend)} (${s.backend.state ?? 'no state'}), ${LB} has no slot for it: not in the maps`, origins.serviceList);
    }
    const { count, qcount } = countsOf(slots);
    if (count !== null && slots.every((s) => s.slot !== null)) {
      const misplaced = slots.filter((s) => (s.backend?.state === 'active') !== (s.slot! >= 1 && s.slot! <= count));
      if (misplaced.length > 0) {
        disagree(
          svc,
          `${SL} says ${count} active backend${count === 1 ? '' : 's'}, but ${LB} does not hold them in slots 1..${count}: ${misplaced.map((s) => `slot ${s.slot} ${backendText(s.backend!)} ${s.backend!.state}`).join(', ')}`,
          origins.lbList,
        );
      }
    }
    return { ...svc, type: svc.type ?? other.type, count, qcount };
  });
  for (const s of serviceList.services) if (!used.has(s)) disagree(s, `${SL} lists this frontend, ${LB} does not: it is not in the maps`, origins.lbList);
  return {
    table: { ...lbList, services, statesFrom: 'service-list', ...(disagreements.length ? { disagreements } : {}) },
    diagnostics: diags,
  };
}

/**
 * Compares the table decoded from the raw maps with the agent's listings (joined by
 * {@link mergeCiliumListings}): frontends present on one side only, backend addresses per
 * frontend, and `count` when both know it. Each difference is an {@link LbDisagreement}
 * naming `mapsLabel` and the listing. The maps stay the table the walk uses (they are what the
 * datapath reads); a listing taken at another moment can differ by a moment's churn.
 */
export function compareMapsWithListings(maps: LbTable, listing: LbTable, mapsLabel: string, origin: string): { disagreements: LbDisagreement[]; diagnostics: Diagnostic[] } {
  const out: LbDisagreement[] = [];
  const diags: Diagnostic[] = [];
  const what = listing.statesFrom === 'service-list' && listing.source.startsWith('bpf-lb-list') ? '`cilium-dbg bpf lb list`/`service list`' : `\`cilium-dbg ${listing.source.startsWith('service') ? 'service list' : 'bpf lb list'}\``;
  const add = (svc: LbService, message: string) => {
    const frontend = formatFrontend(svc.frontend);
    out.push({ frontend, message });
    diags.push(diagnostic('warning', origin, 0, frontend, 'maps-listing-disagree', message));
  };
  const used = new Set<LbService>();
  for (const m of maps.services) {
    const l = listing.services.find((s) => !used.has(s) && sameFrontend(s, m));
    if (!l) {
      add(m, `${mapsLabel} holds this frontend, ${what} does not list it`);
      continue;
    }
    used.add(l);
    const addrs = (s: LbService) => s.slots.map((x) => (x.backend ? backendText(x.backend) : `backend ${x.backendId ?? '?'} not found`)).sort();
    const a = addrs(m);
    const b = addrs(l);
    if (a.join(',') !== b.join(',')) add(m, `${mapsLabel} has backends [${a.join(', ')}], ${what} [${b.join(', ')}]`);
    else if (m.count !== null && l.count !== null && m.count !== l.count) add(m, `${mapsLabel} has count ${m.count}, ${what} ${l.count} active backend${l.count === 1 ? '' : 's'}`);
  }
  for (const l of listing.services) if (!used.has(l)) add(l, `${what} lists this frontend, ${mapsLabel} does not hold it`);
  return { disagreements: out, diagnostics: diags };
}

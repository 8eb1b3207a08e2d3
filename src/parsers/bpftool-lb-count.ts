/**
 * What a reader that prints only the LB table's counts needs (the mode's evidence in `show
 * rules`' head: frontends and backend slots), from the decoded Cilium LB maps without
 * building the table: {@link countLbServices}, proven equal to the counts and the
 * diagnostics of {@link assembleLbTable} (the reference; test/unit/lb-count.test.ts).
 * The layouts are Cilium's `lb{4,6}_key`/`lb{4,6}_service` (bpf/lib/common.h), decoded by
 * src/parsers/bpftool-lb-decode.ts.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import { formatFrontend, protocolFromNumber } from '../model/cilium.js';
import type { LbTable } from '../model/cilium.js';
import type { Parsed } from '../model/snapshot.js';
import type { ServiceEntry } from './bpftool-lb-layouts.js';
import { frontendGroups, type DecodedLbMap } from './bpftool-lb-decode.js';

/**
 * The counts {@link assembleLbTable}'s table gives: `frontends` its services (one per frontend
 * address, port, protocol and scope), `backendSlots` their slots (slot 0, the master entry, is
 * not one), `ipv4`/`ipv6` whether some frontend is of that family (an address with `:` is IPv6).
 */
export interface LbServicesCount {
  readonly frontends: number;
  readonly backendSlots: number;
  readonly ipv4: boolean;
  readonly ipv6: boolean;
}

/**
 * The counts of the table {@link assembleLbTable} would join from `maps`, and exactly its
 * diagnostics in its order (unknown backend protocols, then per frontend in the order first
 * read: unknown protocol, unknown scope, missing slot 0, missing backends by slot), `origin`
 * as there. Never throws.
 */
export function countLbServices(maps: readonly DecodedLbMap[], origin = 'bpf-maps'): ParseResult<LbServicesCount> {
  const diags: Diagnostic[] = [];
  const backendIds = new Set<number>();
  for (const m of maps) {
    for (const e of m.entries) {
      if (e.kind !== 'backends') continue;
      backendIds.add(e.id);
      if (protocolFromNumber(e.proto) === null) diags.push(diagnostic('warning', origin, 0, `backend ${e.id}`, 'unknown-protocol', `backend ${e.id} has IP protocol ${e.proto}, which Cilium does not name`));
    }
  }
  // The join's own groups, so the counts cannot drift from its table.
  const groups = frontendGroups(maps);
  let backendSlots = 0;
  let ipv4 = false;
  let ipv6 = false;
  for (const entries of groups) {
    for (const e of entries) if (e.slot !== 0) backendSlots++;
    if (entries[0]!.ip.includes(':')) ipv6 = true;
    else ipv4 = true;
  }
  for (const entries of groups) groupDiagnostics(entries, backendIds, diags, origin);
  return { value: { frontends: groups.length, backendSlots, ipv4, ipv6 }, diagnostics: diags };
}

/** The warnings `serviceOf` in bpftool-lb-decode.ts gives for one frontend's entries, in its order. */
function groupDiagnostics(entries: readonly ServiceEntry[], backendIds: ReadonlySet<number>, diags: Diagnostic[], origin: string): void {
  const first = entries[0]!;
  const protocol = protocolFromNumber(first.proto);
  let where: string | undefined;
  const at = () => (where ??= formatFrontend({ ip: first.ip, port: first.port, protocol, scope: first.scope === 1 ? 'internal' : 'external' }));
  if (protocol === null) diags.push(diagnostic('warning', origin, 0, at(), 'unknown-protocol', `frontend protocol number ${first.proto} is not one Cilium names`));
  if (first.scope > 1) diags.push(diagnostic('warning', origin, 0, at(), 'unknown-scope', `lookup scope ${first.scope} is neither external (0) nor internal (1)`));
  if (!entries.some((e) => e.slot === 0)) diags.push(diagnostic('warning', origin, 0, at(), 'missing-frontend-slot', `no slot 0 entry for ${at()}`));
  let missing: ServiceEntry[] | undefined;
  for (const e of entries) if (e.slot !== 0 && !backendIds.has(e.union)) (missing ??= []).push(e);
  if (missing === undefined) return;
  // The join warns in slot order (a stable sort); the stable sort of these few is that order.
  for (const e of missing.sort((a, b) => a.slot - b.slot)) diags.push(diagnostic('warning', origin, 0, `${at()} slot ${e.slot}`, 'missing-backend', `backend ${e.union} not found`));
}

/** The counts a lazily joined LB part was built with (see {@link withLbCount}). */
const countOfPart = new WeakMap<object, LbServicesCount>();

/**
 * Remembers `count` as the counts of `part`'s table (`part.value` joined on first read, e.g.
 * src/collect/lb-lazy.ts), so a reader of the counts alone does not make the join. Returns `part`.
 */
export function withLbCount(part: Parsed<LbTable>, count: LbServicesCount): Parsed<LbTable> {
  countOfPart.set(part, count);
  return part;
}

/** The counts remembered for this very part object by {@link withLbCount}; undefined for any other. */
export function lbCountOf(part: Parsed<LbTable>): LbServicesCount | undefined {
  return countOfPart.get(part);
}

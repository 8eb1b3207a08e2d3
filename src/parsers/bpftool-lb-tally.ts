/**
 * The LB table's counts straight from the Cilium LB map dumps' scan, without decoding the
 * entries (no `HexEntry`, no address strings, no `hex` text per entry): what `show rules`
 * prints of the maps (the mode's evidence: frontends and backend slots) on a node whose maps
 * hold ~10^5 entries. {@link tallyLbMapDump} reads one dump — the usual case only, null for
 * anything else, and the caller then decodes (src/parsers/bpftool-lb-decode.ts) and counts
 * (src/parsers/bpftool-lb-count.ts `countLbServices`) as before — and {@link countLbTallies}
 * counts the table the dumps make with exactly that count's diagnostics: the reference these
 * are tested against (test/unit/lb-tally.test.ts).
 *
 * The usual case: every dump in bpftool's compact `-j` shape (bpftool-compact-scan.ts), every
 * entry of a services, backends or reverse-NAT map of a size its layout names (Cilium's
 * `lb{4,6}_key`/`lb{4,6}_service`, `lb{4,6}_backend`, `lb{4,6}_reverse_nat`, bpf/lib/common.h;
 * the fields read at the offsets bpftool-lb-layouts.ts decodes): so the decodes give no
 * diagnostic, and the count's are the only ones.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import { formatFrontend, protocolFromNumber } from '../model/cilium.js';
import { scanCompactDump } from './bpftool-compact-scan.js';
import type { LbServicesCount } from './bpftool-lb-count.js';
import type { LbMapDumpText } from './bpftool-lb-decode.js';
import { identifyLbMap } from './bpftool-lb-decode.js';
import type { LbMapLayout } from './bpftool-lb-layouts.js';
import { formatIPv6 } from './cilium-addr.js';

/**
 * What one dump adds to the count. `services`: per entry read, in read order, its frontend
 * (`family`, address, port, protocol and scope) as `ipv4` (the address as a u32) or `ipv6`
 * (the 16 address bytes as a latin1 string) and `frontend` ((port·256 + protocol)·256 + scope),
 * its `slot` and the value's first u32 `union` (the backend ID on slots ≥ 1). `backendIds` /
 * `backendProtos`: a backends map's IDs and IP protocols. A reverse-NAT map adds nothing.
 */
export interface LbMapTally {
  readonly family: 4 | 6 | null;
  readonly services: { readonly ipv4: number[]; readonly ipv6: string[]; readonly frontend: number[]; readonly slot: number[]; readonly union: number[] } | null;
  readonly backendIds: number[];
  readonly backendProtos: number[];
}

/** Host byte order the LB part decodes with (bpftool-lb-decode.ts' default, `little`). */
const u16le = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
const u32le = (b: Uint8Array, o: number): number => (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;

/**
 * One LB map dump tallied (see {@link LbMapTally}); null when it is not the usual case: not
 * the compact shape, an entry whose sizes differ from the first's or match no layout of the
 * map (it would be left undecoded), a map of another kind than services, backends or reverse
 * NAT holding entries. Reads `dump.pieces()` when given, else `dump.text`. Never throws.
 */
export function tallyLbMapDump(dump: LbMapDumpText): LbMapTally | null {
  let layout: LbMapLayout | null = null;
  let keySize = -1;
  let valueSize = -1;
  let odd = false;
  const services = { ipv4: [] as number[], ipv6: [] as string[], frontend: [] as number[], slot: [] as number[], union: [] as number[] };
  const backendIds: number[] = [];
  const backendProtos: number[] = [];
  const scanned = scanCompactDump(dump.pieces ? dump.pieces() : [dump.text], (key, value) => {
    if (odd) return;
    if (layout === null) {
      const found = identifyLbMap(dump.name, key.length, value.length);
      if (typeof found === 'string' || (found.kind !== 'services' && found.kind !== 'backends' && found.kind !== 'revnat')) {
        odd = true;
        return;
      }
      layout = found;
      keySize = key.length;
      valueSize = value.length;
    } else if (key.length !== keySize || value.length !== valueSize) {
      odd = true;
      return;
    }
    const a = layout.family === 4 ? 4 : 16;
    if (layout.kind === 'services') {
      // lb{4,6}_key: address, dport (be16), backend_slot (u16), proto, scope; the packed ~1.5 era has no scope (0) and a u16 backend_id at value offset 2.
      const packed = layout.keySize === a + 6;
      if (a === 4) services.ipv4.push(((key[0]! << 24) | (key[1]! << 16) | (key[2]! << 8) | key[3]!) >>> 0);
      else services.ipv6.push(String.fromCharCode(...key.subarray(0, 16)));
      services.frontend.push((((key[a]! << 8) | key[a + 1]!) * 256 + key[a + 4]!) * 256 + (packed ? 0 : key[a + 5]!));
      services.slot.push(u16le(key, a + 2));
      services.union.push(packed ? u16le(value, 2) : u32le(value, 0));
    } else if (layout.kind === 'backends') {
      backendIds.push(key.length === 2 ? u16le(key, 0) : u32le(key, 0));
      backendProtos.push(value[a + 2]!);
    }
  });
  if (scanned === null || odd) return null;
  const family = (layout as LbMapLayout | null)?.family ?? null;
  return { family: family === 4 || family === 6 ? family : null, services: services.slot.length > 0 ? services : null, backendIds, backendProtos };
}

/**
 * The counts of the table the tallied dumps make, in the dumps' order, and exactly its
 * diagnostics in its order — `countLbServices` of their decodes, `origin` as there: unknown
 * backend protocols, then per frontend in the order first read its unknown protocol, unknown
 * scope, missing slot 0 and missing backends by slot. Never throws.
 */
export function countLbTallies(tallies: readonly LbMapTally[], origin = 'bpf-maps'): ParseResult<LbServicesCount> {
  const diags: Diagnostic[] = [];
  const backendIds = new Set<number>();
  for (const t of tallies) {
    for (let i = 0; i < t.backendIds.length; i++) {
      const id = t.backendIds[i]!;
      const proto = t.backendProtos[i]!;
      if (protocolFromNumber(proto) === null) diags.push(diagnostic('warning', origin, 0, `backend ${id}`, 'unknown-protocol', `backend ${id} has IP protocol ${proto}, which Cilium does not name`));
      backendIds.add(id);
    }
  }
  // Frontends in the order first read, as bpftool-lb-decode.ts `frontendGroups` groups them: one per family, address and the packed numbers.
  const byIpv4 = new Map<number, Map<number, number>>();
  const byIpv6 = new Map<string, Map<number, number>>();
  const groups: { readonly address: number | string; readonly frontend: number; slot0: boolean }[] = [];
  // A frontend's slots whose backend is in no backends map, in read order (few: only where the table warns).
  const missing = new Map<number, { slot: number; union: number }[]>();
  let backendSlots = 0;
  let ipv4 = false;
  let ipv6 = false;
  for (const t of tallies) {
    const s = t.services;
    if (s === null) continue;
    const v4 = t.family === 4;
    for (let i = 0; i < s.slot.length; i++) {
      const frontend = s.frontend[i]!;
      const address = v4 ? s.ipv4[i]! : s.ipv6[i]!;
      let atIp: Map<number, number> | undefined = v4 ? byIpv4.get(address as number) : byIpv6.get(address as string);
      if (atIp === undefined) {
        atIp = new Map();
        if (v4) byIpv4.set(address as number, atIp);
        else byIpv6.set(address as string, atIp);
      }
      let group = atIp.get(frontend);
      if (group === undefined) {
        atIp.set(frontend, (group = groups.length));
        groups.push({ address, frontend, slot0: false });
        if (v4) ipv4 = true;
        else ipv6 = true;
      }
      const slot = s.slot[i]!;
      if (slot === 0) groups[group]!.slot0 = true;
      else {
        backendSlots++;
        const union = s.union[i]!;
        if (!backendIds.has(union)) {
          const list = missing.get(group);
          if (list) list.push({ slot, union });
          else missing.set(group, [{ slot, union }]);
        }
      }
    }
  }
  for (let g = 0; g < groups.length; g++) groupDiagnostics(groups[g]!, missing.get(g), diags, origin);
  return { value: { frontends: groups.length, backendSlots, ipv4, ipv6 }, diagnostics: diags };
}

/** The warnings bpftool-lb-count.ts `groupDiagnostics` gives for one frontend, in its order, from the tallied numbers. */
function groupDiagnostics(group: { readonly address: number | string; readonly frontend: number; readonly slot0: boolean }, missing: { slot: number; union: number }[] | undefined, diags: Diagnostic[], origin: string): void {
  const proto = Math.floor(group.frontend / 256) % 256;
  const scope = group.frontend % 256;
  const protocol = protocolFromNumber(proto);
  if (protocol !== null && scope <= 1 && group.slot0 && missing === undefined) return;
  const a = group.address;
  // The address as the decode writes it (bpftool-lb-layouts.ts `ip`).
  const ip = typeof a === 'number' ? `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}` : formatIPv6(Array.from(a, (c) => c.charCodeAt(0)));
  const at = formatFrontend({ ip, port: Math.floor(group.frontend / 65536), protocol, scope: scope === 1 ? 'internal' : 'external' });
  if (protocol === null) diags.push(diagnostic('warning', origin, 0, at, 'unknown-protocol', `frontend protocol number ${proto} is not one Cilium names`));
  if (scope > 1) diags.push(diagnostic('warning', origin, 0, at, 'unknown-scope', `lookup scope ${scope} is neither external (0) nor internal (1)`));
  if (!group.slot0) diags.push(diagnostic('warning', origin, 0, at, 'missing-frontend-slot', `no slot 0 entry for ${at}`));
  if (missing === undefined) return;
  // The join warns in slot order (a stable sort).
  for (const e of missing.sort((x, y) => x.slot - y.slot)) diags.push(diagnostic('warning', origin, 0, `${at} slot ${e.slot}`, 'missing-backend', `backend ${e.union} not found`));
}

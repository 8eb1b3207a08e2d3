/**
 * The LB pane's refresh by key: which service-map entries the frontends on screen have, as
 * `map lookup` lines for one `bpftool -j batch file -` (the catalog's `bpf-lb-lookup`), and
 * whether what that printed equals the last full read. The keys and values come from the
 * shown table itself: a `bpf-maps` table keeps each service's entries as read
 * (`LbService.raw`, `key 0a 60 … value 00 …` lines, src/parsers/bpftool-lb-decode.ts), slot 0
 * (the backend count) and its backend slots. Pure: table and text in, lines and verdicts out.
 *
 * Source of the formats: bpftool(8) `map lookup` and `batch file` (bpftool v7: `-j` prints
 * the batch as a JSON array of `{"command":[…],"output":{"key":[…],"value":[…]}}`, the key and
 * value as `"0x0a"` byte strings like `map dump`; it stops at the first failing command, a
 * key not in the map among them).
 */
import { formatFrontend, type LbService, type LbTable } from '../model/cilium.js';
import { bytesToHex, hexBytes } from '../parsers/bpftool-map-dump.js';

/** At most this many lookups in one refresh; more frontends on screen: the maps are dumped whole as before. */
export const MAX_LOOKUPS = 4096;

/** The pin paths of the service maps the last full read dumped (the probes' argv), by IP family. */
export interface ServiceMapPins {
  readonly v4?: string;
  readonly v6?: string;
}

/**
 * The lookups of one refresh: `lines` for bpftool's stdin, and for each line the key and the
 * value (bytes as {@link bytesToHex} spells them) the last full read had.
 */
export interface LookupPlan {
  readonly lines: readonly string[];
  readonly expected: readonly { readonly key: string; readonly value: string }[];
}

const ENTRY = /^key ([0-9a-f]{2}(?: [0-9a-f]{2})*) value ([0-9a-f]{2}(?: [0-9a-f]{2})*)$/;

/**
 * The lookups of `frontends` (`formatFrontend` text) in `table`. Null — the caller dumps the maps
 * whole — when the table is not a map read (`bpf-maps`), a frontend is not in it, an entry's
 * text is not `key … value …`, its family's pin is unknown, or there are more than
 * {@link MAX_LOOKUPS} entries. An empty `frontends` gives an empty plan.
 */
export function lookupPlan(table: LbTable, frontends: readonly string[], pins: ServiceMapPins): LookupPlan | null {
  if (table.source !== 'bpf-maps' || table.statesFrom !== undefined) return null;
  const byName = servicesByFrontend(table);
  const lines: string[] = [];
  const expected: { key: string; value: string }[] = [];
  for (const name of new Set(frontends)) {
    const same = byName.get(name);
    // Not in the table, or two services with one frontend text: not decidable by key here.
    if (same?.length !== 1) return null;
    const svc = same[0]!;
    const pin = svc.frontend.ip.includes(':') ? pins.v6 : pins.v4;
    if (pin === undefined) return null;
    for (const entry of svc.raw.split('\n')) {
      const m = ENTRY.exec(entry);
      if (!m) return null;
      lines.push(`map lookup pinned ${pin} key hex ${m[1]!}`);
      expected.push({ key: m[1]!, value: m[2]! });
    }
    if (lines.length > MAX_LOOKUPS) return null;
  }
  return { lines, expected };
}

/** Each table's services by `formatFrontend` text, made once per table (a refresh asks every 2 s of the same table). */
const indexes = new WeakMap<LbTable, Map<string, LbService[]>>();

function servicesByFrontend(table: LbTable): Map<string, LbService[]> {
  let index = indexes.get(table);
  if (index) return index;
  index = new Map();
  for (const svc of table.services) {
    const name = formatFrontend(svc.frontend);
    const list = index.get(name);
    if (list) list.push(svc);
    else index.set(name, [svc]);
  }
  indexes.set(table, index);
  return index;
}

/**
 * Whether `stdout` of `bpftool -j batch file -` fed `plan.lines` found every key with the value
 * the plan expects. False for anything else: a different count, a changed or missing entry,
 * text that is not the JSON above (never throws).
 */
export function lookupsUnchanged(plan: LookupPlan, stdout: string): boolean {
  let outputs: unknown;
  try {
    outputs = JSON.parse(stdout);
  } catch {
    return false;
  }
  if (!Array.isArray(outputs) || outputs.length !== plan.expected.length) return false;
  return plan.expected.every((want, i) => {
    const out = (outputs as unknown[])[i] as { output?: { key?: unknown; value?: unknown } } | null;
    const output = out?.output;
    if (typeof output !== 'object' || output === null) return false;
    const key = hexBytes(output.key);
    const value = hexBytes(output.value);
    return key !== null && value !== null && bytesToHex(key) === want.key && bytesToHex(value) === want.value;
  });
}

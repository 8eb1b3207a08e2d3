/**
 * Cilium's LB maps for a generated node (kube-proxy replacement, Cilium 1.16+ layouts), as
 * `bpftool -j map dump pinned <map>` prints them: the table the node lab derives from a
 * scenario (`test/lab/cilium-scenario.ts`), encoded byte for byte by `encodeLbTable`.
 *
 * bpftool's JSON (bpftool/map.c `dump_map_elem` with `json_output`): one compact array of
 * `{"key":["0x0a",…],"value":[…]}` objects, bytes as two-digit lower-case hex, then a
 * newline; an empty map prints `[]`. A hash map iterates in a per-map random order, so any
 * order is one the real tool could print; this one is the table's.
 */
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { encodeLbTable, type EncodedLbMap } from '../../src/parsers/bpftool-lb-encode.js';
import { ciliumServicesOf, labCiliumTable } from '../../test/lab/cilium-scenario.js';

const HEX = Array.from({ length: 256 }, (_, i) => `"0x${i.toString(16).padStart(2, '0')}"`);

function bytesJson(bytes: Uint8Array): string {
  let out = '[';
  for (let i = 0; i < bytes.length; i++) out += (i ? ',' : '') + HEX[bytes[i]!];
  return `${out}]`;
}

/** One map as `bpftool -j map dump` prints it (newline-terminated). */
export function bpftoolDumpJson(map: EncodedLbMap): string {
  const parts = map.entries.map((e) => `{"key":${bytesJson(e.key)},"value":${bytesJson(e.value)}}`);
  return `[${parts.join(',')}]\n`;
}

/** Every current LB map of the scenario's node: full map name → dump text. */
export function generateCiliumDumps(scenario: LabScenario): Map<string, string> {
  const table = labCiliumTable(ciliumServicesOf(scenario), scenario.nodeIPs);
  return new Map(encodeLbTable(table).map((m) => [m.name, bpftoolDumpJson(m)]));
}

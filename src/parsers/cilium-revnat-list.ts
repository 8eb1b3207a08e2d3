/**
 * Reverse-NAT listings: `cilium-dbg bpf lb list --revnat` (`ID   BACKEND ADDRESS (REVNAT_ID) (SLOT)`
 * header, rows `5   10.96.0.10:53`) and `cilium map get cilium_lb{4,6}_reverse_nat`
 * (`Key  Value  State  Error` header, rows `34   [fd8b::65d0]:9090   sync`).
 *
 * Format source: cilium/cilium `cilium-dbg/cmd/bpf_lb_list.go` (`dumpRevNat`, `TablePrinter`),
 * `cilium-dbg/cmd/map_get.go`; `RevNat4Value.String()` is `net.JoinHostPort(addr, port)`.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { LbRevNat } from '../model/cilium.js';
import { parseAddrPort } from './cilium-addr.js';
import { isKubectlNotice, textLines } from './cilium-columns.js';

/** Parses either reverse-NAT listing into id → address entries, in input order. Never throws. */
export function parseCiliumRevNatList(text: string, origin: string): ParseResult<LbRevNat[]> {
  const diags: Diagnostic[] = [];
  const out: LbRevNat[] = [];
  textLines(text).forEach((line, i) => {
    if (line.trim() === '' || isKubectlNotice(line) || /^(ID|Key)\s+(BACKEND ADDRESS|Value)\b/.test(line)) return;
    const m = /^(\d+)\s+(\S+)(?:\s+(\S+))?(?:\s+(.*?))?\s*$/.exec(line);
    const addr = m ? parseAddrPort(m[2] ?? '') : null;
    if (!m || addr === null) {
      diags.push(diagnostic('error', origin, i + 1, line, 'unknown-line', 'not an "id  address" reverse-NAT row'));
      return;
    }
    if (m[3] !== undefined && m[3] !== 'sync') {
      diags.push(diagnostic('warning', origin, i + 1, line, 'not-synced', `map cache state "${m[3]}"${m[4] ? `: ${m[4]}` : ''}`));
    }
    out.push({ id: Number(m[1]), ip: addr.ip, port: addr.port });
  });
  return { value: out, diagnostics: diags };
}

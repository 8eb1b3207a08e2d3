/**
 * The `lb/maps-dump` lines of Cilium's load-balancer test harness (cilium/cilium
 * `pkg/loadbalancer/maps` `DumpLBMaps`, expected in `pkg/loadbalancer/tests/testdata/*.txtar`):
 *
 *     BE: ID=1 ADDR=10.244.0.112:8081/TCP STATE=active
 *     REV: ID=1 ADDR=10.96.116.33:8081
 *     SVC: ID=1 ADDR=10.96.116.33:8081/TCP SLOT=0 LBALG=undef AFFTimeout=0 COUNT=2 QCOUNT=0 FLAGS=ClusterIP+non-routable
 *     SVC: ID=1 ADDR=10.96.116.33:8081/TCP SLOT=1 BEID=1 COUNT=0 QCOUNT=0 FLAGS=ClusterIP+non-routable
 *
 * Not an agent command, but the same fields the BPF maps hold (slot, backend id, count,
 * qcount, flags) — upstream's own statement of what the maps contain for a scenario.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { LbAlgorithm, LbBackend, LbRevNat, LbService, LbTable } from '../model/cilium.js';
import { backendStateFromName, parseServiceFlags, serviceTypeFromFlags } from '../model/cilium.js';
import { compareFrontends, parseAddrPort, parseL3n4 } from './cilium-addr.js';
import { textLines } from './cilium-columns.js';

const KNOWN: Readonly<Record<string, readonly string[]>> = {
  BE: ['ID', 'ADDR', 'STATE'],
  REV: ['ID', 'ADDR'],
  SVC: ['ID', 'ADDR', 'SLOT', 'BEID', 'LBALG', 'AFFTimeout', 'COUNT', 'QCOUNT', 'FLAGS'],
};

interface SvcLine {
  fields: Record<string, string>;
  line: number;
  text: string;
}

/** Parses `BE:`/`REV:`/`SVC:` lines into a table (source `maps-dump`). Other lines become diagnostics. */
export function parseCiliumMapsDump(text: string, origin: string): ParseResult<LbTable> {
  const diags: Diagnostic[] = [];
  const backends: LbBackend[] = [];
  const revNats: LbRevNat[] = [];
  const svcLines = new Map<string, SvcLine[]>();
  textLines(text).forEach((line, i) => {
    const n = i + 1;
    if (line.trim() === '') return;
    const m = /^(BE|REV|SVC): (.*)$/.exec(line.trim());
    if (!m) {
      diags.push(diagnostic('error', origin, n, line, 'unknown-line', 'not a BE:/REV:/SVC: line'));
      return;
    }
    const kind = m[1] ?? '';
    const fields: Record<string, string> = {};
    for (const tok of (m[2] ?? '').split(/\s+/)) {
      const eq = tok.indexOf('=');
      if (eq <= 0) continue;
      fields[tok.slice(0, eq)] = tok.slice(eq + 1);
      if (!(KNOWN[kind] ?? []).includes(tok.slice(0, eq))) diags.push(diagnostic('warning', origin, n, line, 'unknown-field', `field ${tok.slice(0, eq)} not modelled`));
    }
    const bad = (msg: string) => diags.push(diagnostic('error', origin, n, line, 'bad-line', msg));
    if (kind === 'BE') {
      const addr = parseL3n4(fields.ADDR ?? '');
      const state = backendStateFromName(fields.STATE ?? 'active');
      if (addr === null || state === null || !/^\d+$/.test(fields.ID ?? '')) return bad('backend ID, ADDR or STATE not understood');
      backends.push({ id: Number(fields.ID), ip: addr.ip, port: addr.port, protocol: addr.protocol, state, weight: null, clusterId: addr.clusterId, zone: null, nodeName: null });
    } else if (kind === 'REV') {
      const addr = parseAddrPort(fields.ADDR ?? '');
      if (addr === null || !/^\d+$/.test(fields.ID ?? '')) return bad('rev-NAT ID or ADDR not understood');
      revNats.push({ id: Number(fields.ID), ip: addr.ip, port: addr.port });
    } else {
      const key = fields.ADDR ?? '';
      svcLines.set(key, [...(svcLines.get(key) ?? []), { fields, line: n, text: line }]);
    }
  });
  const byId = new Map(backends.map((b) => [b.id, b]));
  const services: LbService[] = [];
  for (const [addrText, lines] of svcLines) {
    const fe = parseL3n4(addrText);
    const master = lines.find((l) => l.fields.SLOT === '0');
    const flags = master ? parseServiceFlags(master.fields.FLAGS ?? '') : null;
    const first = lines[0];
    if (fe === null || (master && flags === null) || !first) {
      for (const l of lines) diags.push(diagnostic('error', origin, l.line, l.text, 'bad-line', 'service ADDR or FLAGS not understood'));
      continue;
    }
    const num = (v: string | undefined) => (v !== undefined && /^\d+$/.test(v) ? Number(v) : null);
    const slots = lines
      .filter((l) => l !== master)
      .map((l) => {
        const beId = num(l.fields.BEID);
        return { slot: num(l.fields.SLOT), backendId: beId, backend: (beId !== null && byId.get(beId)) || null, flags: parseServiceFlags(l.fields.FLAGS ?? '') };
      })
      .sort((a, b) => (a.slot ?? 0) - (b.slot ?? 0));
    const alg = master?.fields.LBALG;
    services.push({
      frontend: { ip: fe.ip, port: fe.port, protocol: fe.protocol, scope: fe.scope },
      id: num(master?.fields.ID ?? first.fields.ID),
      type: flags === null ? null : serviceTypeFromFlags(flags),
      flags,
      count: num(master?.fields.COUNT),
      qcount: num(master?.fields.QCOUNT),
      algorithm: alg === 'random' || alg === 'maglev' || alg === 'undef' ? (alg as LbAlgorithm) : null,
      affinityTimeout: num(master?.fields.AFFTimeout),
      l7ProxyPort: null,
      name: null,
      slots,
      raw: lines.map((l) => l.text).join('\n'),
    });
  }
  services.sort((a, b) => compareFrontends(a.frontend, b.frontend));
  return { value: { source: 'maps-dump', services, backends, revNats }, diagnostics: diags };
}

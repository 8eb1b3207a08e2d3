/**
 * Every file of shared/corpus/cilium/ through the parser its sections need.
 *
 * The captures are shell transcripts (a prompt line, then the command's output) or the
 * upstream testdata file with `=== file :: section ===` headers; each section goes to the
 * parser for its command. Sections with no parser by design: `cilium map list` (not LB
 * data) and the corpus file's own `#` notes. Expected diagnostics: none.
 */
import { describe, expect, it } from 'vitest';
import { parseCiliumBpfLbList, bpfLbListView, formatCiliumBpfLbList } from '../../src/parsers/cilium-bpf-lb-list.js';
import { parseCiliumRevNatList } from '../../src/parsers/cilium-revnat-list.js';
import { parseCiliumServiceList } from '../../src/parsers/cilium-service-list.js';
import { parseCiliumStateDbTables } from '../../src/parsers/cilium-statedb.js';
import { parseCiliumMapsDump } from '../../src/parsers/cilium-maps-dump.js';
import { identifyLbMap } from '../../src/parsers/bpftool-lb-decode.js';
import { LB_MAP_LAYOUTS } from '../../src/parsers/bpftool-lb-layouts.js';
import { formatFrontend } from '../../src/model/cilium.js';
import type { LbTable } from '../../src/model/cilium.js';
import { ciliumCorpus } from './cilium-builders.js';

const corpus = new Map(ciliumCorpus());
if (corpus.size === 0) console.warn('skipping Cilium corpus tests: ../shared/corpus/cilium not found');
const file = (name: string) => corpus.get(name) ?? '';

/** Splits a transcript at prompt lines (`$ …`, `# …`, `host# …`): command → output. */
function transcript(text: string): { command: string; output: string }[] {
  const out: { command: string; output: string }[] = [];
  for (const line of text.split('\n')) {
    const prompt = /^(?:\S*#|\$) (.*)$/.exec(line);
    if (prompt) out.push({ command: prompt[1] ?? '', output: '' });
    else if (out.length > 0) (out[out.length - 1] as { output: string }).output += `${line}\n`;
  }
  return out;
}

/** Splits the testdata file at `=== file :: section ===` headers. */
function sections(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let name: string | null = null;
  for (const line of text.split('\n')) {
    const m = /^=== (.*) ===$/.exec(line);
    if (m) out.set((name = m[1] ?? ''), '');
    else if (name !== null) out.set(name, `${out.get(name)}${line}\n`);
  }
  return out;
}

const section = (text: string, command: RegExp) => transcript(text).find((s) => command.test(s.command))?.output ?? '';
const slotsOf = (t: LbTable, fe: string) => t.services.find((s) => formatFrontend(s.frontend) === fe)?.slots.map((s) => `${s.slot}:${s.backend?.ip}:${s.backend?.port}`);

describe.skipIf(corpus.size === 0)('cilium-1.13-ipv6-eks-bpf-lb-list.txt', () => {
  const text = file('cilium-1.13-ipv6-eks-bpf-lb-list.txt');

  it('bpf lb list (1.13 layout: key once, bracketed IPv6, no /PROTO, unordered slots)', () => {
    const r = parseCiliumBpfLbList(section(text, /bpf lb list/), 'corpus');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services.map((s) => [formatFrontend(s.frontend), s.id, s.type, s.flags === null ? null : s.slots.length])).toEqual([
      ['[fd8b:bab:fcd3::d941]:7979', 40, 'ClusterIP', 1],
      ['[fd8b:bab:fcd3::89e2]:9090', 17, 'ClusterIP', 1],
      ['[::]:8126', 56, 'HostPort', 1],
      ['[fd8b:bab:fcd3::a697]:9090', 8, 'ClusterIP', 3],
    ]);
    expect(slotsOf(r.value, '[fd8b:bab:fcd3::a697]:9090')).toEqual(['1:2406:da14:8ba:1a00:af45::4:9090', '2:2406:da14:8ba:1a00:af45::3:9090', '3:2406:da14:8ba:1a00:af45::33:9090']);
    expect(r.value.services.every((s) => s.frontend.protocol === null && s.slots.every((sl) => sl.backend?.protocol === null))).toBe(true);
  });

  it('map get cilium_lb6_reverse_nat', () => {
    const r = parseCiliumRevNatList(section(text, /map get cilium_lb6_reverse_nat/), 'corpus');
    expect(r.diagnostics).toEqual([]);
    expect(r.value).toEqual([
      { id: 34, ip: 'fd8b:bab:fcd3::65d0', port: 9090 },
      { id: 8, ip: 'fd8b:bab:fcd3::a697', port: 9090 },
      { id: 37, ip: '::', port: 31559 },
    ]);
  });

  it('names every map `cilium map list` shows as an LB map nodescope knows', () => {
    const names = section(text, /map list/).split('\n').slice(1).map((l) => l.split(/\s+/)[0]).filter((n): n is string => !!n);
    expect(names).toEqual(['cilium_lb6_source_range', 'cilium_lb6_services_v2', 'cilium_lb6_backends_v3', 'cilium_lb6_reverse_nat']);
    for (const n of names) expect(LB_MAP_LAYOUTS.some((l) => l.maps.includes(n))).toBe(true);
  });
});

describe.skipIf(corpus.size === 0)('cilium-1.18-tke-empty-backends-bpf-lb-service-list.txt', () => {
  const text = file('cilium-1.18-tke-empty-backends-bpf-lb-service-list.txt');

  it('bpf lb list (1.18 layout, " (0)" keys, frontends without backends)', () => {
    const r = parseCiliumBpfLbList(section(text, /bpf lb list/), 'corpus');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services.map((s) => [formatFrontend(s.frontend), s.id, s.type, s.slots.length])).toEqual([
      ['10.15.1.8:443/TCP', 14, 'LoadBalancer', 0],
      ['0.0.0.0:30965/TCP', 12, 'NodePort', 0],
      ['192.168.60.179:443/TCP', 15, 'ClusterIP', 0],
    ]);
  });

  it('db/show frontends with an empty Backends column', () => {
    const r = parseCiliumStateDbTables(section(text, /db\/show frontends/), 'corpus');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.frontends.map((f) => [formatFrontend(f.address), f.type, f.serviceName, f.portName, f.backends.length, f.status, f.since])).toEqual([
      ['0.0.0.0:30965/TCP', 'NodePort', 'default/kubernetes-intranet', 'https', 0, 'Done', '4m20s'],
      ['10.15.1.8:443/TCP', 'LoadBalancer', 'default/kubernetes-intranet', 'https', 0, 'Done', '4m20s'],
      ['192.168.60.179:443/TCP', 'ClusterIP', 'default/kubernetes-intranet', 'https', 0, 'Done', '4m20s'],
    ]);
  });

  it('service list with an empty Backend column', () => {
    const r = parseCiliumServiceList(section(text, /service list/), 'corpus');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services.map((s) => [s.id, formatFrontend(s.frontend), s.type, s.slots.length])).toEqual([
      [4, '0.0.0.0:30965/TCP', 'NodePort', 0],
      [6, '10.15.1.8:443/TCP', 'LoadBalancer', 0],
      [7, '192.168.60.179:443/TCP', 'ClusterIP', 0],
    ]);
  });

  it('the three views agree on the frontends', () => {
    const lb = parseCiliumBpfLbList(section(text, /bpf lb list/), 'c').value.services.map((s) => formatFrontend(s.frontend)).sort();
    const sl = parseCiliumServiceList(section(text, /service list/), 'c').value.services.map((s) => formatFrontend(s.frontend)).sort();
    const db = parseCiliumStateDbTables(section(text, /db\/show frontends/), 'c').value.frontends.map((f) => formatFrontend(f.address)).sort();
    expect(lb).toEqual(sl);
    expect(db).toEqual(sl);
  });
});

describe.skipIf(corpus.size === 0)('cilium-lb-testdata-statedb-tables-and-lbmaps.txt', () => {
  const parts = sections(file('cilium-lb-testdata-statedb-tables-and-lbmaps.txt'));
  const tables = [...parts].filter(([name]) => name.endsWith('.table'));
  const dumps = [...parts].filter(([name]) => name.endsWith('.expected'));

  it('has the sections this test expects', () => {
    expect(tables.length).toBe(4);
    expect(dumps.length).toBe(4);
  });

  it.each(tables)('StateDB %s parses without diagnostics', (_name, text) => {
    const r = parseCiliumStateDbTables(text, 'corpus');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.frontends.length + r.value.backends.length + r.value.services.length).toBeGreaterThan(0);
  });

  it.each(dumps)('maps dump %s parses without diagnostics and round-trips through bpf lb list', (_name, text) => {
    const r = parseCiliumMapsDump(text, 'corpus');
    expect(r.diagnostics).toEqual([]);
    const listed = parseCiliumBpfLbList(formatCiliumBpfLbList(r.value), 'formatted');
    expect(listed.diagnostics).toEqual([]);
    expect(bpfLbListView(listed.value)).toEqual(bpfLbListView(r.value));
  });

  it('services.table splits PortNames into pairs', () => {
    const r = parseCiliumStateDbTables(parts.get('dualstack.txtar :: services.table') ?? '', 'c');
    expect(r.value.services).toMatchObject([{ name: 'default/echo-dualstack', source: 'k8s', portNames: [{ name: 'http', port: 80 }, { name: 'tftp', port: 69 }], trafficPolicy: 'Cluster' }]);
  });

  it('frontends.table and lbmaps.expected describe the same frontends and backends', () => {
    const fes = parseCiliumStateDbTables(parts.get('dualstack.txtar :: frontends.table') ?? '', 'c').value.frontends;
    const maps = parseCiliumMapsDump(parts.get('dualstack.txtar :: lbmaps.expected') ?? '', 'c').value;
    expect(fes).toHaveLength(8);
    for (const fe of fes) {
      const svc = maps.services.find((s) => formatFrontend(s.frontend) === formatFrontend(fe.address));
      expect(svc?.slots.map((s) => `${s.backend?.ip}:${s.backend?.port}`).sort()).toEqual(fe.backends.map((b) => `${b.ip}:${b.port}`).sort());
    }
    expect(maps.revNats).toHaveLength(12);
    expect(maps.backends).toHaveLength(8);
  });

  it('graceful termination: the terminating backend moves behind the active one and counts in QCOUNT', () => {
    const terminating = parseCiliumMapsDump(parts.get('graceful-termination.txtar :: lbmaps-terminating1.expected') ?? '', 'c').value;
    const svc = terminating.services[0];
    expect(svc).toMatchObject({ count: 1, qcount: 1, algorithm: 'undef' });
    expect(svc?.slots.map((s) => [s.slot, s.backend?.ip, s.backend?.state])).toEqual([
      [1, '10.244.0.113', 'active'],
      [2, '10.244.0.112', 'terminating'],
    ]);
    const backends = parseCiliumStateDbTables(parts.get('graceful-termination.txtar :: backends-terminating1.table') ?? '', 'c').value.backends;
    expect(backends.map((b) => [b.address.ip, b.instances[0]?.terminating, b.nodeName])).toEqual([
      ['10.244.0.112', true, 'graceful-term-control-plane'],
      ['10.244.0.113', false, 'graceful-term-control-plane'],
    ]);
  });
});

/** Sizes and field offsets of the C structs in lb-bpf-struct-versions.txt, per section. */
function structsOf(text: string): Map<string, { size: number; offsets: Map<string, number> }> {
  const sizes: Record<string, number> = { __u8: 1, __u16: 2, __be16: 2, __u32: 4, __be32: 4, __u64: 8, 'union v6addr': 16, __net_cookie: 8, 'struct bpf_lpm_trie_key': 4 };
  const out = new Map<string, { size: number; offsets: Map<string, number> }>();
  for (const m of text.matchAll(/struct (\w+) \{([\s\S]*?)\n\}([^;\n]*);/g)) {
    const packed = /packed/.test(m[3] ?? '');
    const offsets = new Map<string, number>();
    let off = 0;
    let align = 1;
    const place = (size: number, al: number) => {
      const a = packed ? 1 : al;
      off = Math.ceil(off / a) * a;
      align = Math.max(align, a);
      const at = off;
      off += size;
      return at;
    };
    const body = (m[2] ?? '').replace(/\/\*[\s\S]*?\*\//g, '');
    for (const u of body.matchAll(/union \{([^}]*)\};|([\w ]+?)\s+(\w+)(?:\[(\d+)\])?;/g)) {
      if (u[1] !== undefined) {
        const at = place(4, 4); // the LB unions are all __u32 members
        for (const f of u[1].matchAll(/(\w+);/g)) offsets.set(f[1] ?? '', at);
        continue;
      }
      const type = (u[2] ?? '').trim();
      const size = sizes[type];
      if (size === undefined) continue;
      const count = Number(u[4] ?? 1);
      offsets.set(u[3] ?? '', place(size * count, type === 'union v6addr' ? 8 : size));
    }
    out.set(m[1] ?? '', { size: Math.ceil(off / align) * align, offsets });
  }
  return out;
}

describe.skipIf(corpus.size === 0)('lb-bpf-struct-versions.txt', () => {
  const text = file('lb-bpf-struct-versions.txt');
  const [, sectionA = '', sectionB = '', sectionC = ''] = text.split(/^############ SECTION [ABC]/m);
  const a = structsOf(sectionA);
  const b = structsOf(sectionB);
  const c = structsOf(sectionC);
  const layout = (map: string, key: number, value: number) => identifyLbMap(map, key, value);

  it('every key/value size of each era is a layout nodescope decodes', () => {
    const size = (m: typeof a, s: string) => m.get(s)?.size ?? -1;
    expect(layout('cilium_lb4_services_v2', size(a, 'lb4_key_v2'), size(a, 'lb4_service_v2'))).toMatchObject({ kind: 'services' });
    expect(layout('cilium_lb4_backends', 2, size(a, 'lb4_backend'))).toMatchObject({ kind: 'backends' });
    expect(layout('cilium_lb6_backends', 2, size(a, 'lb6_backend'))).toMatchObject({ kind: 'backends' });
    expect(layout('cilium_lb6_reverse_nat', 2, size(a, 'lb6_reverse_nat'))).toMatchObject({ kind: 'revnat' });
    for (const era of [b, c]) {
      expect(layout('cilium_lb4_services_v2', size(era, 'lb4_key'), size(era, 'lb4_service'))).toMatchObject({ kind: 'services' });
      expect(layout('cilium_lb6_services_v2', size(era, 'lb6_key'), size(era, 'lb6_service'))).toMatchObject({ kind: 'services' });
      expect(layout('cilium_lb4_backends_v3', 4, size(era, 'lb4_backend'))).toMatchObject({ kind: 'backends' });
      expect(layout('cilium_lb6_backends_v3', 4, size(era, 'lb6_backend'))).toMatchObject({ kind: 'backends' });
    }
    expect(layout('cilium_lb4_reverse_nat', 2, size(b, 'lb4_reverse_nat'))).toMatchObject({ kind: 'revnat' });
    expect(layout('cilium_lb_affinity_match', size(b, 'lb_affinity_match'), 1)).toMatchObject({ kind: 'affinity-match' });
    expect(size(b, 'lb_affinity_val')).toBe(16);
    expect(layout('cilium_lb4_source_range', size(b, 'lb4_src_range_key'), 1)).toMatchObject({ kind: 'source-range' });
  });

  it('the newest structs put each field where the decoder reads it', () => {
    const off = (s: string, f: string) => c.get(s)?.offsets.get(f);
    expect([off('lb4_key', 'dport'), off('lb4_key', 'backend_slot'), off('lb4_key', 'proto'), off('lb4_key', 'scope')]).toEqual([4, 6, 8, 9]);
    expect([off('lb6_key', 'dport'), off('lb6_key', 'backend_slot'), off('lb6_key', 'proto'), off('lb6_key', 'scope')]).toEqual([16, 18, 20, 21]);
    expect([off('lb4_service', 'backend_id'), off('lb4_service', 'count'), off('lb4_service', 'rev_nat_index'), off('lb4_service', 'flags'), off('lb4_service', 'flags2'), off('lb4_service', 'qcount')]).toEqual([0, 4, 6, 8, 9, 10]);
    expect([off('lb4_backend', 'port'), off('lb4_backend', 'proto'), off('lb4_backend', 'flags'), off('lb4_backend', 'cluster_id'), off('lb4_backend', 'zone')]).toEqual([4, 6, 7, 8, 10]);
    expect([off('lb6_backend', 'port'), off('lb6_backend', 'cluster_id'), off('lb6_backend', 'zone')]).toEqual([16, 20, 22]);
    expect(b.get('lb4_backend')?.offsets.get('cluster_id')).toBe(8); // u8 in 1.13–1.15: same byte as the u16's low byte
  });

  it('knows every map the newest lb.h declares except the socket health maps', () => {
    const declared = /# maps declared by name in this version:\n((?:#.*\n)+)/.exec(sectionC)?.[1] ?? '';
    const names = [...declared.matchAll(/cilium_\w+/g)].map((m) => m[0]);
    expect(names.length).toBe(15);
    const unknown = names.filter((n) => !LB_MAP_LAYOUTS.some((l) => l.maps.includes(n)));
    expect(unknown).toEqual(['cilium_lb6_health', 'cilium_lb4_health']);
  });
});

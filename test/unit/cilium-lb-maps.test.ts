import { describe, expect, it } from 'vitest';
import { parseBpftoolMapDump } from '../../src/parsers/bpftool-map-dump.js';
import { assembleLbTable, decodeCiliumLbMaps, decodeLbMap, identifyLbMap, parseCiliumLbMapDump } from '../../src/parsers/bpftool-lb-decode.js';
import { encodeLbTable } from '../../src/parsers/bpftool-lb-encode.js';
import { bpfLbListView, formatCiliumBpfLbList, parseCiliumBpfLbList } from '../../src/parsers/cilium-bpf-lb-list.js';
import { SVC_FLAG } from '../../src/model/cilium.js';
import { BugError } from '../../src/errors.js';
import {
  backendKey,
  bpftoolJson,
  lb4BackendV2,
  lb4BackendV3,
  lb4BackendV3U8Cluster,
  lb4Key,
  lb4KeyV2Packed,
  lb4RevNat,
  lb4ServiceV2Packed,
  lb6BackendV3,
  lb6Key,
  lb6RevNat,
  lbService,
  makeBackend,
  StructBytes,
  makeService,
  makeTable,
  revNatKey,
} from './cilium-builders.js';
import { labCiliumTable } from '../lab/cilium-scenario.js';

const ip4 = (s: string) => s.split('.').map(Number);
const decode = (name: string, entries: { key: Uint8Array; value: Uint8Array }[], order?: 'little' | 'big') =>
  decodeLbMap(parseBpftoolMapDump(bpftoolJson(entries), name).value, name, order ? { hostByteOrder: order } : {});

describe('services map (lb4_key → lb4_service, Cilium 1.6+)', () => {
  it('decodes a frontend slot: network-order address/port/rev-NAT, host-order slot/count/qcount', () => {
    const key = lb4Key(ip4('10.96.0.10'), 53, 0, 17);
    const value = lbService({ union: (2 << 24) | 10800, count: 2, revNat: 0x0105, flags: SVC_FLAG.sessionAffinity, flags2: 0, qcount: 1 });
    const m = decode('cilium_lb4_services_v2', [{ key, value }]);
    expect(m.undecoded).toEqual([]);
    expect(m.entries[0]).toMatchObject({ kind: 'services', ip: '10.96.0.10', port: 53, proto: 17, scope: 0, slot: 0, count: 2, qcount: 1, revNatId: 0x0105, flags: SVC_FLAG.sessionAffinity });
    const table = assembleLbTable([m]).value;
    expect(table.services[0]).toMatchObject({ id: 0x0105, algorithm: 'maglev', affinityTimeout: 10800, type: 'ClusterIP' });
  });

  it('reads flags2 as the high byte of the u16 flags', () => {
    const m = decode('cilium_lb4_services_v2', [{ key: lb4Key(ip4('10.0.0.1'), 80, 0, 6), value: lbService({ union: 0, count: 0, revNat: 1, flags: 0, flags2: 0x80, qcount: 0 }) }]);
    expect(m.entries[0]).toMatchObject({ flags: SVC_FLAG.fwdModeDsr });
  });

  it('reads the L7 proxy port from the union when flags2 has SVC_FLAG_L7_LOADBALANCER', () => {
    const port = 15001;
    const union = ((port & 0xff) << 8) | (port >> 8); // Go SetL7LBProxyPort: uint32(htons(port))
    const m = decode('cilium_lb4_services_v2', [{ key: lb4Key(ip4('10.0.0.1'), 80, 0, 6), value: lbService({ union, count: 0, revNat: 9, flags: SVC_FLAG.routable, flags2: SVC_FLAG.l7LoadBalancer >> 8, qcount: 0 }) }]);
    const svc = assembleLbTable([m]).value.services[0];
    expect(svc).toMatchObject({ l7ProxyPort: 15001, algorithm: null, affinityTimeout: null });
  });

  it('honours a big-endian host for host-order fields only', () => {
    const key = lb4Key(ip4('10.0.0.1'), 80, 3, 6, 1, false);
    const value = lbService({ union: 42, count: 0, revNat: 7, flags: 0, flags2: 0, qcount: 0 }, false);
    expect(decode('cilium_lb4_services_v2', [{ key, value }], 'big').entries[0]).toMatchObject({ slot: 3, union: 42, revNatId: 7, scope: 1, port: 80 });
  });

  it('decodes IPv6 keys (24 bytes)', () => {
    const addr = [0xfd, 0, 0, 0x10, 0, 0x96, 0, 0, 0, 0, 0, 0, 0, 0, 0xb0, 0x50];
    const m = decode('cilium_lb6_services_v2', [{ key: lb6Key(addr, 80, 1, 6), value: lbService({ union: 4, count: 0, revNat: 12, flags: 0, flags2: 0, qcount: 0 }) }]);
    expect(m.entries[0]).toMatchObject({ family: 6, ip: 'fd00:10:96::b050', port: 80, slot: 1, union: 4 });
  });

  it('decodes the v1.5 packed layout (10-byte key, 8-byte value, no flags)', () => {
    const m = decode('cilium_lb4_services_v2', [{ key: lb4KeyV2Packed(ip4('10.96.0.1'), 443, 1), value: lb4ServiceV2Packed(0, 17, 3) }]);
    expect(m.layout?.era).toMatch(/1\.5/);
    expect(m.entries[0]).toMatchObject({ slot: 1, union: 17, revNatId: 3, flags: null, qcount: null });
  });
});

describe('backends map', () => {
  it('backends_v3 (1.16+): u16 cluster_id and zone', () => {
    const m = decode('cilium_lb4_backends_v3', [{ key: backendKey(513), value: lb4BackendV3(ip4('10.244.1.15'), 8080, 6, 1, 300, 2) }]);
    expect(m.entries[0]).toEqual(expect.objectContaining({ id: 513, ip: '10.244.1.15', port: 8080, proto: 6, stateFlags: 1, clusterId: 300, zone: 2 }));
  });

  it('backends_v3 written by 1.13–1.15 (u8 cluster_id + pad[3]) reads the same for ids < 256', () => {
    const m = decode('cilium_lb4_backends_v3', [{ key: backendKey(1), value: lb4BackendV3U8Cluster(ip4('10.0.0.9'), 80, 6, 0, 7) }]);
    expect(m.entries[0]).toMatchObject({ clusterId: 7, zone: 0 });
  });

  it('backends_v2 (8 bytes, no cluster id) and IPv6 backends_v3 (24 bytes)', () => {
    expect(decode('cilium_lb4_backends_v2', [{ key: backendKey(4), value: lb4BackendV2(ip4('10.0.0.4'), 53, 17, 2) }]).entries[0]).toMatchObject({ id: 4, port: 53, stateFlags: 2, clusterId: null });
    const v6 = [0xfd, 0, 0, 0x10, 2, 0x44, 0, 1, 0, 0, 0, 0, 0, 0, 0x24, 0x7e];
    expect(decode('cilium_lb6_backends_v3', [{ key: backendKey(1), value: lb6BackendV3(v6, 80, 6, 0) }]).entries[0]).toMatchObject({ ip: 'fd00:10:244:1::247e' });
  });
});

describe('reverse NAT map', () => {
  it('key is the rev-NAT index in network order', () => {
    const m = decode('cilium_lb4_reverse_nat', [{ key: revNatKey(0x0102), value: lb4RevNat(ip4('10.96.0.10'), 53) }]);
    expect(m.entries[0]).toMatchObject({ id: 0x0102, ip: '10.96.0.10', port: 53 });
    const v6 = decode('cilium_lb6_reverse_nat', [{ key: revNatKey(8), value: lb6RevNat([0xfd, 0x8b, 0x0b, 0xab, 0xfc, 0xd3, 0, 0, 0, 0, 0, 0, 0, 0, 0xa6, 0x97], 9090) }]);
    expect(v6.entries[0]).toMatchObject({ id: 8, ip: 'fd8b:bab:fcd3::a697', port: 9090 });
  });
});

describe('Maglev, affinity and source-range maps', () => {
  it('Maglev outer: network-order rev-NAT key → inner map id (bpftool inner_map_id wins)', () => {
    const text = '[{"key":["0x00","0x05"],"value":["0x2a","0x00","0x00","0x00"],"inner_map_id":77}]';
    expect(parseCiliumLbMapDump(text, 't', 'cilium_lb4_maglev').value.entries[0]).toMatchObject({ kind: 'maglev-outer', revNatId: 5, innerMapId: 77 });
  });

  it('Maglev inner: a LUT of u32 backend ids', () => {
    const lut = new StructBytes(12).u32(0, 1).u32(4, 2).u32(8, 1).bytes;
    expect(decode('cilium_maglev_inner', [{ key: new Uint8Array(4), value: lut }]).entries[0]).toMatchObject({ backendIds: [1, 2, 1] });
  });

  it('affinity match: host-order backend id, network-order rev-NAT id', () => {
    const key = new StructBytes(8).u32(0, 300).be16(4, 7).bytes;
    expect(decode('cilium_lb_affinity_match', [{ key, value: new Uint8Array(1) }]).entries[0]).toMatchObject({ backendId: 300, revNatId: 7 });
  });

  it('lb4 affinity: client IP, or netns cookie when netns_cookie is set', () => {
    const value = new StructBytes(16).u32(0, 1000).u32(8, 4).bytes; // last_used u64 (low word), backend_id
    const byIp = new StructBytes(16).addr(0, ip4('10.244.0.9')).be16(8, 3).bytes;
    const byCookie = new StructBytes(16).u32(0, 4096).be16(8, 3).u8(10, 1).bytes;
    const m = decode('cilium_lb4_affinity', [{ key: byIp, value }, { key: byCookie, value }]);
    expect(m.entries.map((e) => (e.kind === 'affinity' ? [e.client, e.revNatId, e.backendId, e.lastUsed] : null))).toEqual([
      ['10.244.0.9', 3, 4, 1000n],
      ['cookie:4096', 3, 4, 1000n],
    ]);
  });

  it('source range: LPM prefix length counts the 32 bits of rev_nat_id + pad', () => {
    const key = new StructBytes(12).u32(0, 32 + 24).be16(4, 2).addr(8, ip4('192.168.0.0')).bytes;
    expect(decode('cilium_lb4_source_range', [{ key, value: new Uint8Array(1) }]).entries[0]).toMatchObject({ revNatId: 2, cidr: '192.168.0.0/24' });
    const bad = new StructBytes(12).u32(0, 80).bytes;
    expect(decode('cilium_lb4_source_range', [{ key: bad, value: new Uint8Array(1) }]).undecoded[0]?.reason).toMatch(/prefix length 80/);
  });
});

describe('unknown layouts are never guessed', () => {
  it('a value size no Cilium version used stays undecoded with the known sizes in the reason', () => {
    const m = decode('cilium_lb4_services_v2', [{ key: lb4Key(ip4('10.0.0.1'), 80, 0, 6), value: new Uint8Array(16) }]);
    expect(m.entries).toEqual([]);
    expect(m.undecoded[0]?.reason).toMatch(/12\/16 bytes matches no known layout of cilium_lb4_services_v2: known 12\/12/);
    expect(m.undecoded[0]?.keyHex).toBe('0a 00 00 01 00 50 00 00 06 00 00 00');
  });

  it('an unknown map name is refused', () => {
    expect(identifyLbMap('cilium_ct4_global', 14, 56)).toMatch(/not a Cilium LB map/);
  });

  it('15-byte kernel names are told apart by sizes', () => {
    expect(identifyLbMap('cilium_lb4_back', 4, 12)).toMatchObject({ maps: ['cilium_lb4_backends_v3'] });
    expect(identifyLbMap('cilium_lb4_back', 4, 8)).toMatchObject({ maps: ['cilium_lb4_backends_v2'] });
    expect(identifyLbMap('cilium_lb4_back', 2, 8)).toMatchObject({ maps: ['cilium_lb4_backends'] });
    expect(identifyLbMap('/sys/fs/bpf/tc/globals/cilium_lb4_reverse_nat', 2, 6)).toMatchObject({ kind: 'revnat' });
  });

  it('surfaces undecoded entries as warnings with the entry line', () => {
    const text = bpftoolJson([{ key: revNatKey(1), value: new Uint8Array(5) }], { pretty: true });
    const r = parseCiliumLbMapDump(text, 'revnat.json', 'cilium_lb4_reverse_nat');
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['undecoded', 1]]);
  });
});

describe('bpftool -j output', () => {
  const entries = [
    { key: revNatKey(1), value: lb4RevNat(ip4('10.96.0.10'), 53) },
    { key: revNatKey(2), value: lb4RevNat(ip4('10.96.12.34'), 80) },
  ];

  it('reads plain, -p pretty, and BTF formatted output alike', () => {
    const formatted = entries.map((e) => ({ ...e, formatted: { key: 256, value: { address: 167772160, port: 13568 } } }));
    for (const text of [bpftoolJson(entries), bpftoolJson(entries, { pretty: true }), bpftoolJson(formatted)]) {
      const r = parseCiliumLbMapDump(text, 't', 'cilium_lb4_reverse_nat');
      expect(r.diagnostics).toEqual([]);
      expect(r.value.entries.map((e) => (e.kind === 'revnat' ? e.id : -1))).toEqual([1, 2]);
    }
  });

  it('keeps complete entries of a truncated dump and reports the cut', () => {
    const text = bpftoolJson(entries);
    const r = parseBpftoolMapDump(text.slice(0, text.length - 20), 't');
    expect(r.value.entries).toHaveLength(1);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['truncated']);
  });

  it('reports bpftool errors, empty output and non-JSON', () => {
    expect(parseBpftoolMapDump('{"error":"bpf obj get (/sys/fs/bpf/tc/globals): No such file or directory"}\n', 't').diagnostics[0]?.message).toMatch(/No such file/);
    expect(parseBpftoolMapDump('', 't').diagnostics[0]?.code).toBe('empty');
    expect(parseBpftoolMapDump('key: 0a 00\n', 't').diagnostics[0]?.code).toBe('not-json');
    expect(parseBpftoolMapDump('[]\n', 't')).toEqual({ value: { entries: [] }, diagnostics: [] });
  });

  it('flags entries whose bytes are not 0xNN strings', () => {
    const r = parseBpftoolMapDump('[{"key":["0x01","zz"],"value":["0x00"]},{"key":["0x01"],"value":"<no entry>"}]', 't');
    expect(r.diagnostics.map((d) => d.code)).toEqual(['bad-key', 'bad-value']);
  });
});

describe('table ⇄ maps', () => {
  it('encoded bytes equal the struct images built field by field', () => {
    const be = makeBackend({ id: 5, ip: '10.244.0.2', port: 53, protocol: 'UDP' });
    const table = makeTable([makeService({ id: 5, frontend: { ip: '10.96.0.10', port: 53, protocol: 'UDP', scope: 'external' } }, [be])]);
    const [services, backends, revNats] = encodeLbTable(table);
    expect(services?.entries[0]).toEqual({ key: lb4Key(ip4('10.96.0.10'), 53, 0, 17), value: lbService({ union: 0, count: 1, revNat: 5, flags: 0, flags2: 0, qcount: 0 }) });
    expect(services?.entries[1]).toEqual({ key: lb4Key(ip4('10.96.0.10'), 53, 1, 17), value: lbService({ union: 5, count: 0, revNat: 5, flags: 0, flags2: 0, qcount: 0 }) });
    expect(backends?.entries[0]).toEqual({ key: backendKey(5), value: lb4BackendV3(ip4('10.244.0.2'), 53, 17, 0) });
    expect(revNats?.entries[0]).toEqual({ key: revNatKey(5), value: lb4RevNat(ip4('10.96.0.10'), 53) });
  });

  it('decode(encode(table)) gives the table back (workshop scenario)', () => {
    const table = labCiliumTable();
    const dumps = encodeLbTable(table).map((m) => ({ name: m.name, text: bpftoolJson(m.entries), origin: m.name }));
    const r = decodeCiliumLbMaps(dumps);
    expect(r.diagnostics).toEqual([]);
    const byId = (t: typeof table) => t.services.map((s) => ({ ...s, name: null, raw: '' })).sort((a, b) => (a.id ?? 0) - (b.id ?? 0));
    expect(byId(r.value.table)).toEqual(byId(table));
    expect(r.value.table.backends).toEqual(table.backends);
    expect(r.value.table.revNats).toEqual(table.revNats);
  });

  it('the decoded maps print as bpf lb list, and that text parses back to the same view', () => {
    const table = labCiliumTable();
    const dumps = encodeLbTable(table).map((m) => ({ name: m.name, text: bpftoolJson(m.entries), origin: m.name }));
    const decoded = decodeCiliumLbMaps(dumps).value.table;
    const parsed = parseCiliumBpfLbList(formatCiliumBpfLbList(decoded), 'formatted');
    expect(parsed.diagnostics).toEqual([]);
    expect(bpfLbListView(parsed.value)).toEqual(bpfLbListView(decoded));
  });

  it('a slot pointing at a missing backend keeps its id and is reported', () => {
    const key0 = lb4Key(ip4('10.96.0.1'), 443, 0, 6);
    const key1 = lb4Key(ip4('10.96.0.1'), 443, 1, 6);
    const svc = decode('cilium_lb4_services_v2', [
      { key: key0, value: lbService({ union: 0, count: 1, revNat: 1, flags: 0, flags2: 0, qcount: 0 }) },
      { key: key1, value: lbService({ union: 99, count: 0, revNat: 1, flags: 0, flags2: 0, qcount: 0 }) },
    ]);
    const r = assembleLbTable([svc]);
    expect(r.value.services[0]?.slots[0]).toMatchObject({ slot: 1, backendId: 99, backend: null });
    expect(r.diagnostics.map((d) => d.code)).toEqual(['missing-backend']);
    expect(formatCiliumBpfLbList(r.value)).toContain('backend 99 not found');
  });

  it('refuses to encode a table parsed from a listing (no backend ids)', () => {
    const listed = parseCiliumBpfLbList(formatCiliumBpfLbList(labCiliumTable()), 'x').value;
    expect(() => encodeLbTable(listed)).toThrow(BugError);
  });
});

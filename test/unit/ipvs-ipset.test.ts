import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KUBE_IPSETS, type IpsetMember, type IpsetSet } from '../../src/model/ipvs.js';
import { createIpsetParser, formatIpsetList, parseIpsetList, parseIpsetPart } from '../../src/parsers/ipset.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping corpus tests: ${corpus} is absent`);

// ---- builders ----
const member = (element: string, parts: IpsetMember['parts'], options: IpsetMember['options'] = []): IpsetMember => ({
  element,
  parts,
  options,
  line: 0,
  raw: '',
});
const set = (o: Partial<IpsetSet> & Pick<IpsetSet, 'name' | 'type'>): IpsetSet => {
  const [method, dims] = o.type.split(':') as [string, string];
  return {
    method,
    dims: dims.split(',') as IpsetSet['dims'],
    revision: 5,
    family: 'inet',
    header: [['family', 'inet'], ['hashsize', '1024'], ['maxelem', '65536'], ['comment', null]],
    sizeInMemory: 640,
    references: 2,
    numberOfEntries: o.members ? o.members.length : 0,
    members: [],
    line: 0,
    ...o,
  };
};
const strip = (sets: readonly IpsetSet[]): unknown =>
  sets.map(({ line: _l, members, ...s }) => ({ ...s, members: members?.map(({ line: _ml, raw: _r, ...m }) => m) ?? null }));

describe.runIf(haveCorpus)('ipset corpus', () => {
  it('the ipset -L section of the mixed IPVS capture: KUBE-CLUSTER-IP hash:ip,port, "..." elisions reported', () => {
    const text = readFileSync(path.join(corpus, 'ipvs/ipvs-mode-ipvsadm-ipset-kube-ipvs0.txt'), 'utf8');
    const body = text.slice(text.indexOf('$ ipset -L\n') + '$ ipset -L\n'.length);
    const { value, diagnostics } = parseIpsetList(body, 'mixed');
    expect(value).toHaveLength(1);
    const s = value[0]!;
    expect([s.name, s.type, s.method, s.dims, s.revision, s.family]).toEqual(['KUBE-CLUSTER-IP', 'hash:ip,port', 'hash', ['ip', 'port'], 5, 'inet']);
    expect(s.type).toBe(KUBE_IPSETS['KUBE-CLUSTER-IP']);
    expect([s.sizeInMemory, s.references]).toEqual([640, 2]);
    expect(s.header).toEqual([['family', 'inet'], ['hashsize', '1024'], ['maxelem', '65536']]);
    // The capture elided other sets with "..." lines (quirk 26); they are reported, not dropped.
    const elided = body.split('\n').flatMap((l, i) => (l === '...' ? [i + 1] : []));
    expect(diagnostics.filter((d) => d.code === 'unrecognized-line').map((d) => d.line)).toEqual(elided.slice(0, 1));
    // The trailing "..." sits under Members: (the capture cut there) and does not decode as ip,port.
    expect(s.members!.filter((m) => m.parts === null).map((m) => m.element)).toEqual(['...']);
    const good = s.members!.filter((m) => m.parts !== null);
    expect(good).toHaveLength(s.numberOfEntries!);
    // Every member is a ClusterIP,proto:port matching an `inet X/32 … kube-ipvs0` address of the same capture.
    const dummy = new Set([...text.matchAll(/inet (\S+)\/32 scope global kube-ipvs0/g)].map((m) => m[1]));
    for (const m of good) {
      const [ip, port] = m.parts!;
      expect(ip!.dim === 'ip' && dummy.has(ip!.address), m.element).toBe(true);
      expect(port!.dim === 'port' && ['tcp', 'udp'].includes(port!.protocol ?? '') && port!.port! > 0).toBe(true);
    }
  });
});

describe('ipset list format', () => {
  const kube: IpsetSet[] = [
    set({
      name: 'KUBE-CLUSTER-IP',
      type: 'hash:ip,port',
      header: [['family', 'inet'], ['hashsize', '1024'], ['maxelem', '65536'], ['comment', null], ['bucketsize', '12'], ['initval', '0x7ab60033']],
      members: [
        member('10.96.0.10,udp:53', [{ dim: 'ip', address: '10.96.0.10' }, { dim: 'port', protocol: 'udp', port: 53, text: 'udp:53' }], [['comment', 'kube-system/kube-dns:dns']]),
        member('10.96.0.1,tcp:443', [{ dim: 'ip', address: '10.96.0.1' }, { dim: 'port', protocol: 'tcp', port: 443, text: 'tcp:443' }]),
      ],
    }),
    set({
      name: 'KUBE-LOOP-BACK',
      type: 'hash:ip,port,ip',
      members: [member('10.244.1.5,tcp:80,10.244.1.5', [
        { dim: 'ip', address: '10.244.1.5' },
        { dim: 'port', protocol: 'tcp', port: 80, text: 'tcp:80' },
        { dim: 'ip', address: '10.244.1.5' },
      ])],
    }),
    set({
      name: 'KUBE-NODE-PORT-TCP',
      type: 'bitmap:port',
      family: null,
      revision: 3,
      header: [['range', '0-65535'], ['comment', null]],
      members: [member('30080', [{ dim: 'port', protocol: null, port: 30080, text: '30080' }])],
    }),
    set({
      name: 'KUBE-LOAD-BALANCER-SOURCE-CIDR',
      type: 'hash:ip,port,net',
      family: 'inet6',
      header: [['family', 'inet6'], ['hashsize', '1024'], ['maxelem', '65536'], ['timeout', '300'], ['counters', null]],
      members: [member('fd00::1,tcp:443,fd00:ab::/64', [
        { dim: 'ip', address: 'fd00::1' },
        { dim: 'port', protocol: 'tcp', port: 443, text: 'tcp:443' },
        { dim: 'net', address: 'fd00:ab::', prefixLen: 64 },
      ], [['timeout', '299'], ['nomatch', null], ['packets', '0'], ['bytes', '0']])],
    }),
  ];

  it('parse(format(x)) == x for kube-proxy IPVS-mode sets (hash:ip,port / hash:ip,port,ip / bitmap:port / net)', () => {
    const text = formatIpsetList(kube);
    expect(text).toContain('\n\nName: KUBE-LOOP-BACK\n');
    expect(text).toContain('10.96.0.10,udp:53 comment "kube-system/kube-dns:dns"\n');
    const { value, diagnostics } = parseIpsetList(text, 'fmt');
    expect(diagnostics).toEqual([]);
    expect(strip(value)).toEqual(strip(kube));
    for (const s of value) if (s.name in KUBE_IPSETS) expect(s.type).toBe(KUBE_IPSETS[s.name as keyof typeof KUBE_IPSETS]);
  });

  it('terse output (-t) has no Members: section; old output has no Revision/Number of entries', () => {
    const terse = kube.map((s) => ({ ...s, members: null }));
    expect(strip(parseIpsetList(formatIpsetList(terse), 't').value)).toEqual(strip(terse));
    const old = kube.map((s) => ({ ...s, revision: null, numberOfEntries: null }));
    const back = parseIpsetList(formatIpsetList(old), 'old');
    expect(back.diagnostics).toEqual([]);
    expect(strip(back.value)).toEqual(strip(old));
  });

  it('decodes element parts by dimension, and refuses what does not fit', () => {
    expect(parseIpsetPart('port', 'icmp:echo-request')).toEqual({ dim: 'port', protocol: 'icmp', port: null, text: 'icmp:echo-request' });
    expect(parseIpsetPart('net', '10.1.0.1')).toEqual({ dim: 'net', address: '10.1.0.1', prefixLen: null });
    expect(parseIpsetPart('net', '10.0.0.0/33')).toBeNull();
    expect(parseIpsetPart('port', 'tcp:70000')).toBeNull();
    expect(parseIpsetPart('ip', '10.0.0.256')).toBeNull();
    expect(parseIpsetPart('mac', '5a:1e:de:69:7f:c7')).toEqual({ dim: 'mac', mac: '5a:1e:de:69:7f:c7' });
    expect(parseIpsetPart('iface', 'physdev:eth0')).toEqual({ dim: 'iface', name: 'eth0', physdev: true });
    expect(parseIpsetPart('mark', '0x4000')).toEqual({ dim: 'mark', mark: 0x4000 });
  });

  it('reports stray lines, wrong-shape members and count mismatches, never throws', () => {
    const text = [
      'Type: hash:ip', // before Name:
      'Name: S',
      'Type: hash:ip,port',
      'Header: family inet hashsize 1024 maxelem 65536',
      'References: many',
      'Number of entries: 2',
      'Members:',
      '10.0.0.1,tcp:80',
      '10.0.0.2', // missing port
      '',
      'garbage',
    ].join('\n');
    const { value, diagnostics } = parseIpsetList(text, 'bad');
    expect(value).toHaveLength(1);
    expect(value[0]!.members!.map((m) => m.parts !== null)).toEqual([true, false]);
    expect(diagnostics.map((d) => [d.line, d.code])).toEqual([
      [1, 'orphan-header'],
      [5, 'bad-number'],
      [9, 'bad-member'],
      [11, 'unrecognized-line'],
    ]);
    for (let i = 0; i < 100; i += 1) {
      const junk = Array.from({ length: 300 }, (_, j) => String.fromCharCode((i * 31 + j * 17) % 256)).join('');
      expect(() => parseIpsetList(junk, 'junk')).not.toThrow();
    }
  });

  it('warns when Number of entries and the listed members disagree (a cut capture)', () => {
    const cut = formatIpsetList([kube[0]!]).split('\n').slice(0, -2).join('\n');
    const { diagnostics } = parseIpsetList(cut, 'cut');
    expect(diagnostics.map((d) => d.code)).toEqual(['entry-count-mismatch']);
  });

  it('the line-fed parser equals the whole-text parser', () => {
    const text = formatIpsetList(kube);
    const p = createIpsetParser('s');
    for (const l of text.split('\n')) p.push(l);
    expect(p.end()).toEqual(parseIpsetList(text, 's'));
  });
});

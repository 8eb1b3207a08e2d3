import { describe, expect, it } from 'vitest';
import { canonicalIp, compareFrontends, formatIPv6, parseAddrPort, parseIPv4, parseIPv6, parseL3n4 } from '../../src/parsers/cilium-addr.js';
import { headerColumns, splitRow } from '../../src/parsers/cilium-columns.js';
import { tabwrite } from '../../src/parsers/cilium-tabwriter.js';
import { formatServiceFlags, kernelMapName, parseServiceFlags, SVC_FLAG } from '../../src/model/cilium.js';

describe('IP addresses', () => {
  it.each([
    ['fd8b:bab:fcd3:0:0:0:0:d941', 'fd8b:bab:fcd3::d941'],
    ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // RFC 5952 4.2.3: first of equal runs
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group is not shortened
    ['::', '::'],
    ['::1', '::1'],
    ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
    ['010.1.2.3', '10.1.2.3'],
  ])('%s is printed as %s', (input, expected) => {
    expect(canonicalIp(input)).toBe(expected);
  });

  it.each(['1.2.3', '256.1.1.1', '1:2:3:4:5:6:7:8:9', '1::2::3', 'fd00::g', '', ':::'])('rejects %j', (bad) => {
    expect(parseIPv4(bad) ?? parseIPv6(bad)).toBeNull();
  });

  it('formats 16 bytes back to what parsing read', () => {
    const bytes = parseIPv6('2406:da14:8ba:1a00:af45::33');
    expect(bytes).toHaveLength(16);
    expect(formatIPv6(bytes ?? [])).toBe('2406:da14:8ba:1a00:af45::33');
  });
});

describe('address:port and L3n4Addr strings', () => {
  it.each([
    ['10.96.0.10:53', { ip: '10.96.0.10', port: 53, clusterId: 0 }],
    ['[fd8b:bab:fcd3::d941]:7979', { ip: 'fd8b:bab:fcd3::d941', port: 7979, clusterId: 0 }],
    ['10.244.0.5@3:80', { ip: '10.244.0.5', port: 80, clusterId: 3 }],
    ['[fd00::5@7]:80', { ip: 'fd00::5', port: 80, clusterId: 7 }],
  ])('parseAddrPort(%s)', (text, expected) => {
    expect(parseAddrPort(text)).toEqual(expected);
  });

  it.each(['fd00::1:80', '10.0.0.1', '10.0.0.1:65536', '[fd00::1]80', 'x:1'])('parseAddrPort rejects %s', (bad) => {
    expect(parseAddrPort(bad)).toBeNull();
  });

  it.each([
    ['10.96.0.10:53/UDP', { protocol: 'UDP', scope: 'external' }],
    ['10.96.0.10:53/UDP/i', { protocol: 'UDP', scope: 'internal' }],
    ['10.96.0.10:53/i', { protocol: null, scope: 'internal' }],
    ['10.96.0.10:53', { protocol: null, scope: 'external' }],
    ['[::]:30181/TCP', { protocol: 'TCP', scope: 'external' }],
    ['10.96.0.10:53/ANY', { protocol: 'ANY', scope: 'external' }],
    ['10.96.0.10:53/NONE', { protocol: 'ANY', scope: 'external' }],
  ])('parseL3n4(%s)', (text, expected) => {
    expect(parseL3n4(text)).toMatchObject(expected);
  });

  it.each(['10.96.0.10:53/FOO', '10.96.0.10:53/TCP/x', '10.96.0.10:53/TCP/i/i'])('parseL3n4 rejects %s', (bad) => {
    expect(parseL3n4(bad)).toBeNull();
  });

  it('orders IPv4 before IPv6, then by bytes, port, protocol, scope', () => {
    const fe = (ip: string, port = 80, protocol: 'TCP' | 'UDP' = 'TCP', scope: 'external' | 'internal' = 'external') => ({ ip, port, protocol, scope });
    const sorted = [fe('fd00::1'), fe('10.96.12.34'), fe('10.96.0.10', 53, 'UDP'), fe('10.96.0.10', 53, 'TCP', 'internal'), fe('10.96.0.10', 53, 'TCP')].sort(compareFrontends);
    expect(sorted.map((f) => `${f.ip}:${f.port}/${f.protocol}/${f.scope}`)).toEqual([
      '10.96.0.10:53/TCP/external',
      '10.96.0.10:53/TCP/internal',
      '10.96.0.10:53/UDP/external',
      '10.96.12.34:80/TCP/external',
      'fd00::1:80/TCP/external',
    ]);
  });
});

describe('Go text/tabwriter emulation', () => {
  // Vectors from Go's src/text/tabwriter/tabwriter_test.go (flags 0): name, minwidth, padding, padchar, input, output.
  it.each([
    ['5b', 8, 1, '.', '*\t*\n', '*.......*\n'],
    ['5c', 8, 1, '.', '*\t*\t', '*.......*'],
    ['6', 8, 1, '.', '\t\n', '........\n'],
    ['7e', 8, 1, '.', 'e) foo\tbar\t\n', 'e) foo..bar.....\n'],
    ['9a', 1, 0, '.', '1\t2\t3\t4\n11\t222\t3333\t44444\n', '1.2..3...4\n11222333344444\n'],
    ['10b', 5, 0, '.', '1\t2\t3\t4\t\n', '1....2....3....4....\n'],
    ['12b', 2, 0, ' ', 'a\tb\tc\naa\tbbb\tcccc\naaa\tbbbb\n', 'a  b  c\naa bbbcccc\naaabbbb\n'],
    [
      '13b',
      4,
      3,
      '.',
      '4444\t333\t22\t1\t333\n999999999\t22\n7\t22\n\t\t\t88888888\n\n666666\t666666\t666666\t4444\n1\t1\t999999999\t0000000000\n',
      '4444........333...22...1...333\n999999999...22\n7...........22\n....................88888888\n\n666666...666666...666666......4444\n1........1........999999999...0000000000\n',
    ],
  ])('Go case %s', (_name, minwidth, padding, padchar, input, output) => {
    expect(tabwrite(input, { minwidth, padding, padchar })).toBe(output);
  });
});

describe('aligned columns', () => {
  const header = 'ID   Frontend                  Service Type   Backend';
  const cols = headerColumns(header, ['ID', 'Frontend', 'Service Type', 'Backend']);

  it('finds each header name at its offset', () => {
    expect(cols?.map((c) => c.start)).toEqual([0, 5, 31, 46]);
  });

  it('assigns runs to the column they start under, empty cells stay empty', () => {
    const row = `${'7'.padEnd(5)}${'192.168.60.179:443/TCP'.padEnd(26)}${'ClusterIP'.padEnd(15)}`;
    expect(splitRow(row, cols ?? [])).toEqual(['7', '192.168.60.179:443/TCP', 'ClusterIP', '']);
    const continuation = `${' '.repeat(46)}2 => 10.244.0.3:53/UDP (active)   `;
    expect(splitRow(continuation, cols ?? [])).toEqual(['', '', '', '2 => 10.244.0.3:53/UDP (active)']);
  });

  it('returns null when a header name is missing', () => {
    expect(headerColumns(header, ['ID', 'Frontend', 'Backend', 'Service Type'])).toBeNull();
  });
});

describe('service flags', () => {
  it.each([
    [0, 'ClusterIP, non-routable'],
    [SVC_FLAG.nodePort, 'NodePort, non-routable'],
    [SVC_FLAG.nodePort | SVC_FLAG.routable, 'NodePort'],
    [SVC_FLAG.loadBalancer | SVC_FLAG.routable, 'LoadBalancer'],
    [SVC_FLAG.hostPort, 'HostPort, non-routable'],
    [SVC_FLAG.extLocalScope | SVC_FLAG.intLocalScope, 'ClusterIP, Local, InternalLocal, non-routable'],
    [SVC_FLAG.loadBalancer | SVC_FLAG.routable | SVC_FLAG.sourceRange | SVC_FLAG.quarantined, 'LoadBalancer, check source-range, deny'],
    [SVC_FLAG.quarantined, 'ClusterIP, non-routable, quarantined'],
    [SVC_FLAG.hostPort | SVC_FLAG.loopback | SVC_FLAG.routable, 'HostPort, loopback'],
    [SVC_FLAG.nodePort | SVC_FLAG.loopback | SVC_FLAG.routable | SVC_FLAG.fwdModeDsr, 'NodePort, delegate-if-local, dsr'],
  ])('flags %i print as "%s" and parse back', (bits, text) => {
    expect(formatServiceFlags(bits)).toBe(text);
    expect(parseServiceFlags(text)).toBe(bits);
  });

  it('reads the test harness spelling with +', () => {
    expect(parseServiceFlags('NodePort+non-routable')).toBe(SVC_FLAG.nodePort);
  });

  it.each(['', 'Frobnicate', 'ClusterIP, sparkly'])('rejects %j', (bad) => {
    expect(parseServiceFlags(bad)).toBeNull();
  });
});

it('cuts kernel map names to 15 bytes as BPF_OBJ_NAME_LEN does', () => {
  expect(kernelMapName('cilium_lb4_services_v2')).toBe('cilium_lb4_serv');
  expect(kernelMapName('cilium_lb4_backends_v3')).toBe('cilium_lb4_back');
});

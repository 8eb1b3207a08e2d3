import { describe, expect, it } from 'vitest';
import {
  base32Encode,
  iptablesEndpointChain,
  iptablesServiceChain,
  nftChain,
  nftEndpointChainBase,
  nftHashAndTruncate,
  nftServiceChainBase,
  portProtoHash,
  servicePortName,
} from '../../src/analysis/kubeproxy-names.js';

describe('base32Encode (Go base32.StdEncoding)', () => {
  it.each([
    // RFC 4648 §10 test vectors
    ['', ''],
    ['f', 'MY======'],
    ['fo', 'MZXQ===='],
    ['foo', 'MZXW6==='],
    ['foob', 'MZXW6YQ='],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI======'],
  ])('encodes %j as %s', (text, encoded) => {
    expect(base32Encode(new TextEncoder().encode(text))).toBe(encoded);
  });
});

describe('servicePortName', () => {
  it('joins namespace, name and port name like ServicePortName.String()', () => {
    expect(servicePortName('default', 'kubernetes', 'https')).toBe('default/kubernetes:https');
  });
  it('omits the colon for an unnamed port', () => {
    expect(servicePortName('default', 'hostnames', '')).toBe('default/hostnames');
  });
});

describe('iptables chain names', () => {
  it('derives KUBE-SVC-NPX46M4PTMTKRN6Y for default/kubernetes:https tcp (real k3s capture)', () => {
    expect(portProtoHash('default/kubernetes:https', 'tcp')).toBe('NPX46M4PTMTKRN6Y');
    expect(iptablesServiceChain('KUBE-SVC-', 'default/kubernetes:https', 'tcp')).toBe('KUBE-SVC-NPX46M4PTMTKRN6Y');
  });

  it.each([
    // from kube-proxy's TestOverallIPTablesRules expectation (shared corpus)
    ['KUBE-SVC-', 'ns1/svc1:p80', 'KUBE-SVC-XPGD46QRK7WJZT7O'],
    ['KUBE-EXT-', 'ns2/svc2:p80', 'KUBE-EXT-GNZBNJ2PO5MGZ6GT'],
    ['KUBE-FW-', 'ns5/svc5:p80', 'KUBE-FW-NUKIZ6OKUXPJNT4C'],
    ['KUBE-SVL-', 'ns2/svc2:p80', 'KUBE-SVL-GNZBNJ2PO5MGZ6GT'],
  ] as const)('%s%s → %s', (kind, name, chain) => {
    expect(iptablesServiceChain(kind, name, 'tcp')).toBe(chain);
  });

  it('hashes the endpoint into KUBE-SEP names', () => {
    expect(iptablesEndpointChain('ns1/svc1:p80', 'tcp', '10.180.0.1:80')).toBe('KUBE-SEP-SXIVWICOYRO3J4NJ');
    expect(iptablesEndpointChain('ns4/svc4:p80', 'tcp', '10.180.0.5:80')).toBe('KUBE-SEP-C6EBXVWJJZMIWKLZ');
    expect(iptablesEndpointChain('default/kubernetes:https', 'tcp', '10.0.20.5:6443')).toBe('KUBE-SEP-VD5CM36UTN4SSMVL');
  });

  it('changes with the protocol', () => {
    expect(portProtoHash('kube-system/kube-dns:dns', 'udp')).not.toBe(portProtoHash('kube-system/kube-dns:dns', 'tcp'));
  });

  it('always fits the 28-character iptables chain name limit', () => {
    expect(iptablesServiceChain('KUBE-SVC-', `${'n'.repeat(63)}/${'s'.repeat(63)}:${'p'.repeat(15)}`, 'sctp').length).toBeLessThanOrEqual(28);
  });
});

describe('nftables chain names', () => {
  it.each([
    // from kube-proxy's TestOverallNFTablesRules expectation (shared corpus)
    [['ns1', 'svc1', 'tcp', 'p80'], 'ULMVA6XW-ns1/svc1/tcp/p80'],
    [['ns2', 'svc2', 'tcp', 'p80'], '42NFTM6N-ns2/svc2/tcp/p80'],
    [['ns5', 'svc5', 'tcp', 'p80'], 'HVFWP5L3-ns5/svc5/tcp/p80'],
  ] as const)('service base of %j is %s', ([ns, name, proto, port], base) => {
    expect(nftServiceChainBase(ns, name, proto, port)).toBe(base);
  });

  it('derives endpoint chain bases with __ip/port', () => {
    expect(nftEndpointChainBase('ns1', 'svc1', 'tcp', 'p80', '10.180.0.1:80')).toBe('5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
    expect(nftChain('endpoint-', nftEndpointChainBase('ns4', 'svc4', 'tcp', 'p80', '10.180.0.5:80'))).toBe(
      'endpoint-5RFCDDV7-ns4/svc4/tcp/p80__10.180.0.5/80',
    );
  });

  it('ends an unnamed port with a bare protocol and slash (real k3s capture)', () => {
    expect(nftServiceChainBase('riset', 'hellopod-np-svc', 'tcp', '')).toBe('P6J77WGM-riset/hellopod-np-svc/tcp/');
    expect(nftEndpointChainBase('riset', 'hellopod-np-svc', 'tcp', '', '10.42.2.218:8080')).toBe(
      'VNXJG24O-riset/hellopod-np-svc/tcp/__10.42.2.218/8080',
    );
  });

  it('replaces IPv6 colons with dots', () => {
    expect(nftEndpointChainBase('ns', 'svc', 'tcp', 'p', '[fd00::1]:80')).toMatch(/-ns\/svc\/tcp\/p__fd00\.\.1\/80$/);
  });

  it('truncates names longer than 240 characters with "..."', () => {
    const name = nftHashAndTruncate('x'.repeat(300));
    expect(name).toHaveLength(240);
    expect(name.endsWith('...')).toBe(true);
  });
});

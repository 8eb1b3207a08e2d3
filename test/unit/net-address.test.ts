/** The one address module: parse, format, CIDR containment, host:port, the hot-path IPv4 reader. */
import { describe, expect, it } from 'vitest';
import { addressFamily, cidrContains, formatAddress, ipv4Number, ipv4NumberAt, joinHostPort, parseAddress } from '../../src/net/address.js';

describe('net/address', () => {
  it('parses IPv4 and IPv6 to family and canonical text, refuses the rest', () => {
    expect(parseAddress('10.96.0.10')).toEqual({ family: 'ipv4', text: '10.96.0.10' });
    expect(parseAddress('FD00:0:0::0001')).toEqual({ family: 'ipv6', text: 'fd00::1' });
    expect(parseAddress('10.1')).toBeNull();
    expect(parseAddress('fe80::1%eth0')).toBeNull();
    expect(parseAddress('kube-dns')).toBeNull();
    expect(formatAddress('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(formatAddress('not an address')).toBe('not an address');
  });

  it('says whether a CIDR holds an address, per family', () => {
    expect(cidrContains('10.0.0.0/8', '10.244.1.5')).toBe(true);
    expect(cidrContains('10.0.0.0/8', '11.0.0.1')).toBe(false);
    expect(cidrContains('192.168.1.7', '192.168.1.7')).toBe(true);
    expect(cidrContains('fd00::/64', 'fd00::1234')).toBe(true);
    expect(cidrContains('fd00::/64', 'fd01::1')).toBe(false);
    expect(cidrContains('10.0.0.0/8', 'fd00::1')).toBe(false);
    expect(cidrContains('10.0.0.0/33', '10.0.0.1')).toBe(false);
    expect(cidrContains('0.0.0.0/0', '1.2.3.4')).toBe(true);
  });

  it('joins host and port with brackets for IPv6 only', () => {
    expect(joinHostPort('10.0.0.1', 80)).toBe('10.0.0.1:80');
    expect(joinHostPort('fd00::1', 53)).toBe('[fd00::1]:53');
  });

  it('reads dotted quads as unsigned numbers, in a whole text or a slice of a line', () => {
    expect(ipv4Number('255.255.255.255')).toBe(0xffffffff);
    expect(ipv4Number('10.96.0.1')).toBe((10 << 24) + (96 << 16) + 1);
    for (const bad of ['256.0.0.1', '1.2.3', '1.2.3.4.5', '1..2.3', '1.2.3.a', '']) expect(ipv4Number(bad)).toBeNull();
    const line = 'src=10.244.0.5 dst=10.96.0.10';
    expect(ipv4NumberAt(line, 4, 14)).toBe(ipv4Number('10.244.0.5'));
    expect(ipv4NumberAt(line, 0, 14)).toBe(-1);
  });
});

describe('addressFamily', () => {
  it('gives the family parseAddress gives, null where it gives null', () => {
    const texts = ['10.0.0.1', '0.0.0.0', '255.255.255.255', '256.1.1.1', '010.1.1.1', '10.1', '::1', 'fd00::1', '::ffff:10.0.0.1',
      'fe80::1%eth0', 'FD00:0:0:0:0:0:0:1', '', 'web', '10.0.0.1/32', ' 10.0.0.1', '1.2.3.4.5'];
    for (const t of texts) expect(addressFamily(t), t).toBe(parseAddress(t)?.family ?? null);
    expect(addressFamily('fd00::1')).toBe('ipv6');
    expect(addressFamily('10.96.0.1')).toBe('ipv4');
  });
});

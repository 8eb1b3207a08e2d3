/**
 * The packet words of `nodescope trace` and the entry point: validation (UserError for
 * every word to fix) and inference of pod / host / external from the node's routes.
 */
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { DEFAULT_SOURCE_PORT, parsePacketArgs, resolveEntry, type TracePacketArgs } from '../../src/trace/packet.js';
import { selectSourceAddress } from '../../src/trace/routing.js';
import { caliName } from '../lab/names.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { labInput, labPod } from './trace-builders.js';

const { addrs, routes } = labInput('iptables');
const netView = { interfaces: addrs, routes };
const nodeIP = LAB_SCENARIO.nodeIPs[0]!;

describe('parsePacketArgs', () => {
  it('reads address, port and protocol, with defaults for the rest', () => {
    const p = parsePacketArgs({ from: '10.244.0.9', to: '10.96.0.10:53/udp' });
    expect(p).toMatchObject({ family: 'ipv4', proto: 'udp', src: '10.244.0.9', sport: DEFAULT_SOURCE_PORT, dst: '10.96.0.10', dport: 53, tcpFlags: [], mark: 0, entry: 'auto' });
    const t = parsePacketArgs({ from: '10.244.0.9:5555', to: '10.96.12.34:80', flags: 'ack,syn', mark: '0x4000', entry: 'pod' });
    expect(t).toMatchObject({ proto: 'tcp', sport: 5555, tcpFlags: ['syn', 'ack'], mark: 0x4000, entry: 'pod' });
  });

  it('reads IPv6 with brackets, and ICMP without ports', () => {
    expect(parsePacketArgs({ from: '[fd00::9]:4000', to: '[fd00::10]:53/udp' })).toMatchObject({ family: 'ipv6', src: 'fd00::9', sport: 4000, dst: 'fd00::10', dport: 53 });
    expect(parsePacketArgs({ from: '10.0.0.1', to: '10.0.0.2/icmp' })).toMatchObject({ proto: 'icmp', sport: null, dport: null, icmpType: 8, icmpCode: 0 });
    expect(parsePacketArgs({ from: 'fd00::1', to: 'fd00::2/icmp' })).toMatchObject({ proto: 'icmpv6', icmpType: 128 });
  });

  it('lets a host packet leave out its source', () => {
    expect(parsePacketArgs({ to: '10.96.12.34:80/tcp', entry: 'host' }).src).toBeNull();
  });

  const bad: readonly [string, TracePacketArgs][] = [
    ['an empty destination', { from: '10.0.0.1', to: ' ' }],
    ['an unknown protocol', { from: '10.0.0.1', to: '10.0.0.2:80/gre' }],
    ['a destination that is not an address', { from: '10.0.0.1', to: 'web.default:80/tcp' }],
    ['a port out of range', { from: '10.0.0.1', to: '10.0.0.2:70000/tcp' }],
    ['tcp without a port', { from: '10.0.0.1', to: '10.0.0.2/tcp' }],
    ['icmp with a port', { from: '10.0.0.1', to: '10.0.0.2:80/icmp' }],
    ['mixed families', { from: 'fd00::1', to: '10.0.0.2:80/tcp' }],
    ['a missing source for a pod packet', { to: '10.0.0.2:80/tcp', entry: 'pod' }],
    ['an unknown entry', { from: '10.0.0.1', to: '10.0.0.2:80/tcp', entry: 'node' }],
    ['an unknown TCP flag', { from: '10.0.0.1', to: '10.0.0.2:80/tcp', flags: 'syn,foo' }],
    ['flags on udp', { from: '10.0.0.1', to: '10.0.0.2:53/udp', flags: 'syn' }],
    ['a mark wider than 32 bits', { from: '10.0.0.1', to: '10.0.0.2:80/tcp', mark: '0x100000000' }],
    ['an unclosed IPv6 bracket', { from: '[fd00::1:80', to: '[fd00::2]:80/tcp' }],
    ['a source port of 0', { from: '10.0.0.1:0', to: '10.0.0.2:80/tcp' }],
  ];
  it.each(bad)('refuses %s with a UserError saying what to do', (_what, args) => {
    let error: unknown;
    try {
      parsePacketArgs(args);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).hint).toBeTruthy();
  });
});

describe('resolveEntry on the lab node', () => {
  it('infers pod for a source routed to a pod veth, with that veth as input interface', () => {
    const client = labPod('client');
    const e = resolveEntry(parsePacketArgs({ from: client.ip, to: '10.96.12.34:80/tcp' }), netView);
    expect(e).toMatchObject({ entry: 'pod', iif: caliName(client), src: client.ip, inferred: true });
  });

  it('infers external for a source behind the uplink, even a pod of another node', () => {
    expect(resolveEntry(parsePacketArgs({ from: LAB_SCENARIO.outsideIP, to: `${nodeIP}:30080/tcp` }), netView)).toMatchObject({ entry: 'external', iif: 'eth0' });
    expect(resolveEntry(parsePacketArgs({ from: labPod('web-3').ip, to: '10.96.12.34:80/tcp' }), netView)).toMatchObject({ entry: 'external', iif: 'eth0' });
  });

  it('infers host for one of the node addresses, and picks the source for a host packet without one', () => {
    expect(resolveEntry(parsePacketArgs({ from: nodeIP, to: '10.96.12.34:80/tcp' }), netView)).toMatchObject({ entry: 'host', iif: null, src: nodeIP });
    expect(resolveEntry(parsePacketArgs({ to: '10.96.12.34:80/tcp', entry: 'host' }), netView)).toMatchObject({ entry: 'host', src: nodeIP, inferred: false });
  });

  it('honours an explicit entry, and refuses host entry for a foreign source', () => {
    expect(resolveEntry(parsePacketArgs({ from: LAB_SCENARIO.outsideIP, to: '10.96.12.34:80/tcp', entry: 'pod' }), netView)).toMatchObject({ entry: 'pod', iif: 'eth0', inferred: false });
    expect(() => resolveEntry(parsePacketArgs({ from: '10.244.0.9', to: '10.96.12.34:80/tcp', entry: 'host' }), netView)).toThrow(UserError);
  });
});

describe('selectSourceAddress (inet_select_addr)', () => {
  it('prefers an address of the output device in the next hop subnet, else falls back to the first global address', () => {
    expect(selectSourceAddress(netView, 'eth0', LAB_SCENARIO.outsideIP, 'ipv4')).toBe(nodeIP);
    // A pod veth has no IPv4 address: the kernel takes the first global address of any device (lo's is host scope).
    expect(selectSourceAddress(netView, caliName(labPod('web-1')), labPod('web-1').ip, 'ipv4')).toBe(nodeIP);
    expect(selectSourceAddress(netView, 'eth0', null, 'ipv6')).toBeNull();
  });
});

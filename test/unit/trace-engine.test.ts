/**
 * Step mode on the lab node, both proxy modes, table-driven: scenario → expected path
 * (the kube-proxy chains the packet must match, named by kube-proxy's own naming
 * functions), verdict, endpoint, rewrites and conntrack entry. The rulesets are the ones
 * kube-proxy would write for the lab scenario (generators), parsed by the real parsers.
 */
import { describe, expect, it } from 'vitest';
import {
  iptablesEndpointChain,
  iptablesServiceChain,
  nftChain,
  nftEndpointChainBase,
  nftServiceChainBase,
  servicePortName,
} from '../../src/analysis/kubeproxy-names.js';
import { UserError } from '../../src/errors.js';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { formatConntrackEntry } from '../../src/parsers/conntrack-format.js';
import { walkPacket } from '../../src/trace/engine.js';
import { kernelEventsOfWalk } from '../../src/trace/kernel-trace.js';
import type { TraceResult, VerdictKind } from '../../src/trace/types.js';
import { caliName } from '../lab/names.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { labInput, labPod, labService, packet } from './trace-builders.js';

type Mode = 'iptables' | 'nftables';
const MODES: readonly Mode[] = ['iptables', 'nftables'];

const client = labPod('client');
const { svc: web, port: webPort } = labService('web');
const { svc: dns, port: dnsPort } = labService('kube-dns');
const { svc: empty, port: emptyPort } = labService('empty');
const node = LAB_SCENARIO.nodes.find((n) => n.name === LAB_SCENARIO.nodeName)!;
const nodeIP = node.internalIP;

/** The kube-proxy chains a packet to `svc` port `port` reaching `endpoint` must match in the nat path. */
function serviceChains(mode: Mode, svc: typeof web, port: typeof webPort, endpoint: string): string[] {
  const proto = port.protocol.toLowerCase();
  if (mode === 'iptables') {
    const name = servicePortName(svc.namespace, svc.name, port.name);
    return [iptablesServiceChain('KUBE-SVC-', name, proto), iptablesEndpointChain(name, proto, endpoint)];
  }
  return [
    nftChain('service-', nftServiceChainBase(svc.namespace, svc.name, proto, port.name)),
    nftChain('endpoint-', nftEndpointChainBase(svc.namespace, svc.name, proto, port.name, endpoint)),
  ];
}

/** Chains with a matched rule, in order, at `hook`. */
function matchedChains(r: TraceResult, hook: string): string[] {
  const out: string[] = [];
  for (const s of r.steps) if (s.hook === hook && s.kind === 'rule' && s.matched && s.chain && out[out.length - 1] !== s.chain) out.push(s.chain);
  return out;
}

function podOf(ip: string) {
  return LAB_SCENARIO.pods.find((p) => p.ip === ip)!;
}

/** Where the node sends a packet for `ip`: the pod's veth on this node, else eth0. */
function oifFor(ip: string): string {
  const p = podOf(ip);
  return p.nodeName === LAB_SCENARIO.nodeName ? caliName(p) : 'eth0';
}

describe.each(MODES)('ClusterIP from a pod, %s mode, each endpoint', (mode) => {
  const input = labInput(mode);
  it.each(web.endpoints.map((e) => `${e.ip}:${webPort.targetPort}`))('reaches %s through the service and endpoint chains', (endpoint) => {
    const r = walkPacket(input, packet({ from: client.ip, to: `${web.clusterIP}:${webPort.port}/tcp` }), { branch: { kind: 'endpoint', endpoint } });
    const ip = endpoint.split(':')[0]!;
    expect(r.request.entry).toBe('pod');
    expect(r.request.packet.iif).toBe(caliName(client));
    expect(r.verdict.kind).toBe('forwarded');
    expect(r.verdict.endpoint).toBe(endpoint);
    expect(r.verdict.oif).toBe(oifFor(ip));
    expect(matchedChains(r, 'prerouting')).toEqual(expect.arrayContaining(serviceChains(mode, web, webPort, endpoint)));
    // A pod of the cluster CIDR is not masqueraded.
    expect(r.final.src).toBe(client.ip);
    expect(r.final.sport).toBe(r.request.packet.sport);
    expect(r.final.mark).toBe(0);
    // The DNAT happens at the NAT station, right after the nat chain that asked for it.
    const natStep = r.steps.find((s) => s.kind === 'nat')!;
    expect(natStep.header.dst).toBe(ip);
    expect(natStep.hook).toBe('prerouting');
    // Branch choice: three branches, 1/3 each, the chosen one leads to the endpoint.
    const branches = r.steps.find((s) => s.branches)!.branches!;
    expect(branches.map((b) => b.endpoint).sort()).toEqual(web.endpoints.map((e) => `${e.ip}:${webPort.targetPort}`).sort());
    for (const b of branches) expect(b.probability).toBeCloseTo(1 / web.endpoints.length, 9);
    expect(branches.filter((b) => b.chosen).map((b) => b.endpoint)).toEqual([endpoint]);
    // The rule taken says it was the random draw (the kernel's trace shows its statistic match).
    const chosen = branches.find((b) => b.chosen)!;
    const taken = r.steps.filter((s) => s.branches && s.matched);
    expect(taken).toHaveLength(1);
    if (mode === 'iptables') {
      const last = chosen.index === branches.length - 1;
      expect(taken[0]!.reason).toMatch(`branch ${chosen.index + 1} of ${branches.length}: `);
      expect(taken[0]!.reason).toMatch(last ? /: the earlier random draws were not taken$/ : /: random draw taken \(probability \d+\.\d% here\)$/);
    }
    // The conntrack entry, in conntrack's words, parses back to the same tuples.
    const ct = r.conntrack!;
    const parsed = parseConntrack(ct.text, 'walk').value.entries[0]!;
    expect(parsed.orig).toMatchObject({ src: client.ip, dst: web.clusterIP, sport: r.request.packet.sport, dport: webPort.port });
    expect(parsed.reply).toMatchObject({ src: ip, dst: client.ip, sport: webPort.targetPort, dport: r.request.packet.sport });
    expect(parsed.flags).toEqual(['UNREPLIED']);
    expect(formatConntrackEntry(parsed, 'conntrack')).toBe(ct.text);
    expect(r.reply?.received).toMatchObject({ src: web.clusterIP, sport: webPort.port, dst: client.ip });
  });
});

interface Case {
  readonly name: string;
  readonly from?: string;
  readonly to: string;
  readonly entry?: 'pod' | 'host' | 'external';
  readonly endpoint?: string;
  readonly verdict: Readonly<Record<Mode, VerdictKind>>;
  readonly check: (r: TraceResult, mode: Mode) => void;
}

const webEndpoint = (key: string) => `${labPod(key).ip}:${webPort.targetPort}`;

const CASES: readonly Case[] = [
  {
    name: 'NodePort from outside: marked, DNATed, masqueraded to the node address with a random port',
    from: LAB_SCENARIO.outsideIP,
    to: `${nodeIP}:${webPort.nodePort}/tcp`,
    endpoint: webEndpoint('web-3'),
    verdict: { iptables: 'forwarded', nftables: 'forwarded' },
    check: (r) => {
      expect(r.request.entry).toBe('external');
      expect(r.request.packet.iif).toBe('eth0');
      expect(r.verdict.endpoint).toBe(webEndpoint('web-3'));
      expect(r.verdict.nexthop).toBe(LAB_SCENARIO.nodes.find((n) => n.name !== node.name)!.internalIP);
      expect(r.final.src).toBe(nodeIP);
      expect(r.final.randomSport).toBe(true);
      expect(r.steps.some((s) => s.hook === 'prerouting' && s.header.mark === 0x4000)).toBe(true);
      expect(r.final.mark).toBe(0); // KUBE-POSTROUTING / masquerading clears the bit before MASQUERADE
      expect(r.conntrack?.text).toContain(`src=${labPod('web-3').ip} dst=${nodeIP} sport=${webPort.targetPort} dport=<random>`);
    },
  },
  {
    name: 'hairpin: a web pod to its own Service lands on itself, masqueraded so the reply comes back through the node',
    from: labPod('web-1').ip,
    to: `${web.clusterIP}:${webPort.port}/tcp`,
    endpoint: webEndpoint('web-1'),
    verdict: { iptables: 'forwarded', nftables: 'forwarded' },
    check: (r) => {
      expect(r.verdict.oif).toBe(caliName(labPod('web-1')));
      expect(r.final.iif).toBe(r.final.oif);
      expect(r.final.src).toBe(nodeIP);
      expect(r.final.dst).toBe(labPod('web-1').ip);
    },
  },
  {
    name: 'ClusterIP from the host: output path, source chosen from the route, masqueraded',
    to: `${web.clusterIP}:${webPort.port}/tcp`,
    entry: 'host',
    endpoint: webEndpoint('web-2'),
    verdict: { iptables: 'sent', nftables: 'sent' },
    check: (r) => {
      expect(r.request.entry).toBe('host');
      expect(r.request.packet.src).toBe(nodeIP);
      expect(r.steps.some((s) => s.kind === 'routing' && /re-route after DNAT/.test(s.reason))).toBe(true);
      expect(r.verdict.oif).toBe(caliName(labPod('web-2')));
      expect(matchedChains(r, 'output').length).toBeGreaterThan(0);
      expect(r.steps.some((s) => s.hook === 'prerouting')).toBe(false);
    },
  },
  {
    name: 'a Service without endpoints is rejected',
    from: client.ip,
    to: `${empty.clusterIP}:${emptyPort.port}/tcp`,
    verdict: { iptables: 'rejected', nftables: 'rejected' },
    check: (r, mode) => {
      const last = r.steps.filter((s) => s.kind === 'rule' && s.matched).at(-1)!;
      // REJECT is not DROP (issue 19 item 8): the client gets an ICMP error at once, not a timeout.
      expect(last.verdict).toBe('reject');
      expect(r.verdict.rejectWith).toBe('icmp-port-unreachable');
      expect(last.hook).toBe('forward');
      expect(last.chain).toBe(mode === 'iptables' ? 'KUBE-SERVICES' : 'reject-chain');
      expect(r.conntrack).toBeNull();
      expect(r.reply).toBeNull();
    },
  },
  {
    name: 'an unallocated port of a ClusterIP: no rule in iptables mode, rejected by cluster-ips-check in nftables mode',
    from: client.ip,
    to: `${web.clusterIP}:81/tcp`,
    verdict: { iptables: 'forwarded', nftables: 'rejected' },
    check: (r, mode) => {
      if (mode === 'iptables') {
        expect(r.verdict.nexthop).toBe(LAB_SCENARIO.outsideIP);
        expect(r.steps.some((s) => s.kind === 'nat')).toBe(false);
      } else {
        expect(r.steps.filter((s) => s.matched).at(-1)!.chain).toBe('cluster-ips-check');
      }
    },
  },
  {
    name: 'DNS over UDP to kube-dns',
    from: `${client.ip}:40000`,
    to: `${dns.clusterIP}:${dnsPort.port}/udp`,
    endpoint: `${labPod('coredns-2').ip}:53`,
    verdict: { iptables: 'forwarded', nftables: 'forwarded' },
    check: (r, mode) => {
      expect(matchedChains(r, 'prerouting')).toEqual(expect.arrayContaining(serviceChains(mode, dns, dnsPort, `${labPod('coredns-2').ip}:53`)));
      expect(r.conntrack?.text).toMatch(/^udp      17 30 src=/);
    },
  },
  {
    name: 'a packet to the node address itself is delivered locally',
    from: LAB_SCENARIO.outsideIP,
    to: `${nodeIP}:22/tcp`,
    verdict: { iptables: 'local', nftables: 'local' },
    check: (r) => {
      expect(r.steps.some((s) => s.hook === 'input')).toBe(true);
      expect(r.steps.some((s) => s.hook === 'forward')).toBe(false);
      expect(r.verdict.endpoint).toBe(`${nodeIP}:22`);
    },
  },
];

describe.each(MODES)('lab scenarios, %s mode', (mode) => {
  const input = labInput(mode);
  it.each(CASES)('$name', (c) => {
    const r = walkPacket(input, packet({ ...(c.from ? { from: c.from } : {}), to: c.to, ...(c.entry ? { entry: c.entry } : {}) }), c.endpoint ? { branch: { kind: 'endpoint', endpoint: c.endpoint } } : {});
    expect(r.verdict.kind).toBe(c.verdict[mode]);
    expect(r.steps.at(-1)!.index).toBe(r.steps.length - 1);
    expect(r.steps.every((s, i) => s.index === i)).toBe(true);
    c.check(r, mode);
  });
});

/** A `conntrack -L` line for a DNS flow from the client to kube-dns, DNATed to `endpoint`. */
function dnsFlowLine(sport: number, endpoint: string, replied: boolean): string {
  return `udp      17 29 src=${client.ip} dst=${dns.clusterIP} sport=${sport} dport=53 ${replied ? '' : '[UNREPLIED] '}src=${endpoint} dst=${client.ip} sport=53 dport=${sport} mark=0 use=1`;
}

describe.each(MODES)('known flows, %s mode', (mode) => {
  const endpoint = labPod('coredns-1').ip;
  const input = labInput(mode, { conntrack: [dnsFlowLine(40001, endpoint, true)] });

  it('the second packet skips the nat chains and gets the stored DNAT', () => {
    const r = walkPacket(input, packet({ from: `${client.ip}:40001`, to: `${dns.clusterIP}:53/udp` }));
    const ct = r.steps.find((s) => s.kind === 'conntrack')!;
    expect(ct.reason).toMatch(/known flow \(original direction, ct state established\)/);
    expect(ct.header.ct).toBe('established');
    const nat = r.steps.find((s) => s.kind === 'nat')!;
    expect(nat.reason).toMatch(/nat chains skipped .*stored destination NAT/);
    expect(nat.header.dst).toBe(endpoint);
    // No rule of a nat chain ran on prerouting.
    const natRules = r.steps.filter((s) => s.hook === 'prerouting' && s.kind === 'rule' && (s.table === 'nat' || s.chain === 'nat-prerouting'));
    expect(natRules).toEqual([]);
    expect(kernelEventsOfWalk(r).filter((e) => e.chain === 'services' || (e.table === 'nat' && e.chain === 'KUBE-SERVICES'))).toEqual([]);
    // Without the flow in the table, the same packet does run the nat chains.
    const fresh = walkPacket(labInput(mode), packet({ from: `${client.ip}:40001`, to: `${dns.clusterIP}:53/udp` }));
    expect(fresh.steps.filter((s) => s.hook === 'prerouting' && s.kind === 'rule' && (s.table === 'nat' || s.chain === 'nat-prerouting')).length).toBeGreaterThan(0);
    expect(r.verdict.kind).toBe('forwarded');
    expect(r.verdict.endpoint).toBe(`${endpoint}:53`);
    expect(r.conntrack?.existing).toBe(true);
  });

  it('a reply from the endpoint is un-DNATed back to the ClusterIP', () => {
    const r = walkPacket(input, packet({ from: `${endpoint}:53`, to: `${client.ip}:40001/udp` }));
    expect(r.request.entry).toBe('pod');
    expect(r.steps.find((s) => s.kind === 'conntrack')!.reason).toMatch(/reply direction/);
    expect(r.verdict.kind).toBe('forwarded');
    expect(r.final.src).toBe(dns.clusterIP);
    expect(r.final.sport).toBe(53);
    expect(r.verdict.oif).toBe(caliName(client));
    expect(r.reply).toBeNull();
  });

  it('an unreplied flow is still NEW for the rules', () => {
    const unreplied = labInput(mode, { conntrack: [dnsFlowLine(40002, endpoint, false)] });
    const r = walkPacket(unreplied, packet({ from: `${client.ip}:40002`, to: `${dns.clusterIP}:53/udp` }));
    expect(r.steps.find((s) => s.kind === 'conntrack')!.header.ct).toBe('new');
    expect(r.final.dst).toBe(endpoint);
  });
});

describe('branch choice', () => {
  const input = labInput('iptables');
  const to = `${web.clusterIP}:${webPort.port}/tcp`;
  it('follows a branch by index, the first by default', () => {
    const first = walkPacket(input, packet({ from: client.ip, to }));
    const third = walkPacket(input, packet({ from: client.ip, to }), { branch: { kind: 'index', index: 2 } });
    const branches = first.steps.find((s) => s.branches)!.branches!;
    expect(first.verdict.endpoint).toBe(branches[0]!.endpoint);
    expect(third.verdict.endpoint).toBe(branches[2]!.endpoint);
  });
  it('refuses an endpoint or index no branch has, naming those that exist', () => {
    expect(() => walkPacket(input, packet({ from: client.ip, to }), { branch: { kind: 'endpoint', endpoint: '10.9.9.9:80' } })).toThrow(UserError);
    expect(() => walkPacket(input, packet({ from: client.ip, to }), { branch: { kind: 'index', index: 3 } })).toThrow(UserError);
    try {
      walkPacket(input, packet({ from: client.ip, to }), { branch: { kind: 'endpoint', endpoint: '10.9.9.9:80' } });
    } catch (e) {
      expect((e as UserError).hint).toContain(webEndpoint('web-1'));
    }
  });
  it('accepts an endpoint given without its port', () => {
    const r = walkPacket(input, packet({ from: client.ip, to }), { branch: { kind: 'endpoint', endpoint: labPod('web-2').ip } });
    expect(r.verdict.endpoint).toBe(webEndpoint('web-2'));
  });
});

describe('missing parts of the capture', () => {
  it('without routes the walk stops with an unsupported step, not an exception', () => {
    const input = { ...labInput('iptables'), routes: [] };
    const r = walkPacket(input, packet({ from: client.ip, to: `${web.clusterIP}:80/tcp`, entry: 'pod' }));
    expect(r.verdict.kind).toBe('unsupported');
    expect(r.steps.at(-1)!.kind).toBe('unsupported');
  });
  it('without any ruleset the packet is only routed', () => {
    const { addrs, routes } = labInput('iptables');
    const r = walkPacket({ addrs, routes }, packet({ from: client.ip, to: `${labPod('web-2').ip}:8080/tcp` }));
    expect(r.verdict.kind).toBe('forwarded');
    expect(r.steps.map((s) => s.kind)).toEqual(['conntrack', 'routing', 'conntrack', 'final']);
  });
});

/**
 * Issue 19 ("Real-world faults: never a confident wrong answer"), the iptables items: each
 * test is named after the public report it reproduces, on input nodescope writes itself
 * (its kube-proxy rule generator, its own dumps); the kernel-made versions are in
 * test/lab/faults-iptables.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { walkPacket } from '../../src/trace/engine.js';
import { labInput, labPod, packet } from './trace-builders.js';

describe('kubernetes#66354: an eTP=Local NodePort without a local endpoint drops, and says why', () => {
  // web with externalTrafficPolicy Local and only its endpoint on lab-node2.
  const scenario = {
    ...LAB_SCENARIO,
    services: LAB_SCENARIO.services.map((s) =>
      s.name === 'web' ? { ...s, externalTrafficPolicy: 'Local' as const, endpoints: s.endpoints.filter((e) => e.nodeName !== LAB_SCENARIO.nodeName) } : s,
    ),
  };
  const web = scenario.services.find((s) => s.name === 'web')!;

  it('the verdict is dropped (not rejected) and quotes the rule\'s "has no local endpoints"', () => {
    expect(web.endpoints.length).toBeGreaterThan(0);
    const input = labInput('iptables', { scenario });
    const r = walkPacket(input, packet({ from: `${LAB_SCENARIO.outsideIP}:40000`, to: `${LAB_SCENARIO.nodeIPs[0]}:${web.ports[0]!.nodePort}/tcp` }));
    expect(r.verdict.kind).toBe('dropped');
    expect(r.verdict.rejectWith).toBeUndefined();
    expect(r.verdict.reason).toContain('"default/web:http has no local endpoints"');
  });

  it('a Service without any endpoint is rejected with icmp-port-unreachable, not dropped', () => {
    const empty = scenario.services.find((s) => s.name === 'empty')!;
    const r = walkPacket(labInput('iptables', { scenario }), packet({ from: labPod('client').ip, to: `${empty.clusterIP}:80/tcp` }));
    expect(r.verdict.kind).toBe('rejected');
    expect(r.verdict.rejectWith).toBe('icmp-port-unreachable');
    expect(r.steps.find((s) => s.kind === 'rule' && s.matched && s.chain === 'KUBE-SERVICES' && s.table === 'filter')?.verdict).toBe('reject');
    expect(r.verdict.reason).toContain('"default/empty has no endpoints"');
  });
});

/**
 * Regression (NOTES "Tour step 9 describes per-packet tc DNAT while trace describes
 * socket-LB at connect()"): a shipped tour's step on a Cilium kube-proxy-replacement
 * capture must say where the step engine rewrites the Service address on that capture.
 * The walk of the default step packet (a pod on the node to the step's frontend) decides:
 * rewritten at the socket (connect()) or per packet (tc), which map, and whether
 * slots after count (qcount) were skipped.
 */
import { describe, expect, it } from 'vitest';
import { detectProxyMode } from '../../src/analysis/proxy-mode.js';
import { defaultStepPacket } from '../../src/analysis/step-defaults.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { loadTour, tourNames } from '../../src/tour/load.js';
import type { TourStep } from '../../src/tour/model.js';
import { snapshotOf } from '../helpers/fixtures.js';

/** The Service whose ClusterIP is the frontend `ip:port/PROTO`. */
function serviceOf(snapshot: NodeSnapshot, frontend: string): { namespace: string; name: string } {
  const ip = frontend.replace(/:\d+\/\w+$/, '');
  const svc = snapshot.api!.value!.services.find((s) => s.clusterIPs.includes(ip))!;
  return { namespace: svc.meta.namespace, name: svc.meta.name };
}

const ciliumSteps: { tour: string; index: number; step: TourStep }[] = [];
for (const name of tourNames()) {
  for (const [index, step] of loadTour(name).steps.entries()) if (step.target.kind === 'lbEntry') ciliumSteps.push({ tour: name, index, step });
}

describe('tour steps on a Cilium capture say what the step engine shows', () => {
  it('there is such a step (where-rewritten has one)', () => {
    expect(ciliumSteps.map((s) => s.tour)).toContain('where-rewritten');
  });

  it.each(ciliumSteps.map((s) => [`${s.tour} step ${s.index + 1}`, s] as const))('%s', async (_name, { step }) => {
    const snapshot = await snapshotOf(step.capture);
    expect(detectProxyMode(snapshot).mode).toBe('cilium');
    const frontend = step.target.kind === 'lbEntry' ? step.target.frontend : '';
    const svc = serviceOf(snapshot, frontend);
    const packet = defaultStepPacket(snapshot, svc.namespace, svc.name);
    if (!('from' in packet)) throw new Error(packet.reason);
    const result = traceFromSnapshot(snapshot, { from: packet.from, to: packet.to });
    const nat = result.steps.find((s) => s.kind === 'nat');
    expect(nat, 'the walk rewrites the destination').toBeDefined();
    const lookup = result.steps.find((s) => s.kind === 'map-lookup' && s.matched === true)!;
    const { en, ja } = step.narration;
    for (const text of [en, ja]) {
      expect(text).toContain(frontend);
      expect(text).toContain(lookup.chain!);
      if (nat!.table === 'bpf_sock') {
        // Socket LB: the socket is connected to the backend at connect(); no per-packet DNAT.
        expect(text).toContain(nat!.chain!.startsWith('cgroup/sendmsg') ? 'sendmsg()' : 'connect()');
        expect(text).toMatch(/DNAT/);
      } else {
        expect(text).toMatch(/tc|XDP/);
      }
      if (result.steps.some((s) => s.reason.includes('in qcount'))) expect(text).toContain('qcount');
    }
    expect(en).toMatch(nat!.table === 'bpf_sock' ? /socket LB[^.]*connect\(\)|connect\(\)[^.]*socket LB/ : /per packet/);
    expect(en).not.toMatch(nat!.table === 'bpf_sock' ? /program on the Pod's interface[^.]*rewrites/ : /connect\(\)/);
    expect(ja).toContain(nat!.table === 'bpf_sock' ? 'ソケット' : 'パケットごと');
  });
});

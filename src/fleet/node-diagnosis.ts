/**
 * One node's per-Service diagnosis, as the fleet folds it into its matrix: a function of
 * the node's snapshot and the API objects ({@link DiagnoseNode}). The verdict and findings
 * are issue 17's (`diagnoseSnapshot`, src/analysis/diagnose/); the fleet adds each Service's
 * backend set — what the node programmed against what the API says
 * (src/analysis/programmed-backends.ts) — to compare the nodes with each other.
 */
import { diagnoseRules, finishDiagnosis, VERDICTS, type Finding, type RulesDiagnosis, type Verdict } from '../analysis/diagnose/index.js';
import { ciliumExpectedBackends, expectedBackends, isProgrammed, programmedBackendsOf } from '../analysis/programmed-backends.js';
import type { ApiObjects } from '../model/k8s.js';
import type { NodeSnapshot } from '../model/snapshot.js';

export type { Finding, Verdict };

/** The worse of two verdicts (issue 17's order, best first: ok, degraded, unknown, broken). */
export function worse(a: Verdict, b: Verdict): Verdict {
  return VERDICTS.indexOf(a) >= VERDICTS.indexOf(b) ? a : b;
}

/**
 * One Service's diagnosis on one node. `backends`: the node's programmed set (`ip:port`,
 * sorted), null when it was not read; `expected`: what the API says this node should program.
 */
export interface NodeServiceDiagnosis {
  /** `namespace/name`. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
  readonly backends: readonly string[] | null;
  readonly expected: readonly string[];
}

/** One node's diagnosis: its proxy mode and one entry per Service of the API. */
export interface NodeDiagnosis {
  readonly mode: string;
  readonly services: readonly NodeServiceDiagnosis[];
}

/**
 * What the fleet keeps of a node's rules between nodes: issue 17's rules diagnosis and each
 * programmed Service's backend sets (`ns/name` → programmed and expected), a function of what
 * src/fleet/node-key.ts digests — reused for every node with the same key.
 */
export interface NodeRules {
  readonly rules: RulesDiagnosis;
  /** `namespace/name` of each of `rules.services`, made once. */
  readonly keys: readonly string[];
  readonly backends: ReadonlyMap<string, { readonly programmed: readonly string[] | null; readonly expected: readonly string[] }>;
}

/**
 * The per-node functions the fleet runs: `rules` on a node's whole snapshot, `finish` with the
 * node's own conntrack table (`snapshot` may hold only the cheap probes and conntrack).
 * `node`: the Node's name in the fleet.
 */
export interface DiagnoseNode {
  readonly rules: (snapshot: NodeSnapshot, api: ApiObjects, options: { readonly node: string }) => NodeRules;
  readonly finish: (rules: NodeRules, snapshot: NodeSnapshot, api: ApiObjects) => NodeDiagnosis;
}

/**
 * Issue 17's diagnosis of the node, with each programmed Service's backend sets beside it: on
 * a Cilium node the expected set is the agent's (the rules diagnosis's expected ClusterIP
 * frontends), elsewhere kube-proxy's. Pure.
 */
export const fleetDiagnoseNode: DiagnoseNode = {
  rules: (snapshot, api, { node }) => {
    const rules = diagnoseRules(snapshot, api);
    const keys = rules.services.map(({ svc }) => `${svc.namespace}/${svc.name}`);
    const cilium = rules.header.dataplane === 'cilium' ? new Map(rules.services.map(({ svc }, i) => [keys[i]!, svc.frontends])) : null;
    const programmedBackends = programmedBackendsOf(snapshot);
    const backends = new Map<string, { programmed: readonly string[] | null; expected: readonly string[] }>();
    for (const svc of api.services) {
      if (!isProgrammed(svc)) continue;
      const key = `${svc.meta.namespace}/${svc.meta.name}`;
      const programmed = programmedBackends(svc);
      const expected = cilium ? ciliumExpectedBackends(cilium.get(key) ?? []) : expectedBackends(api, svc, node);
      backends.set(key, { programmed: programmed.kind === 'read' ? programmed.endpoints : null, expected });
    }
    return { rules, keys, backends };
  },
  finish: ({ rules, keys, backends }, snapshot, api) => {
    const d = finishDiagnosis(rules, snapshot, api);
    return {
      mode: d.header.mode,
      services: d.services.map((s, i) => {
        const key = keys[i]!;
        const b = backends.get(key);
        return { key, namespace: s.namespace, name: s.name, verdict: s.verdict, findings: s.findings, backends: b?.programmed ?? null, expected: b?.expected ?? NONE };
      }),
    };
  },
};

const NONE: readonly string[] = [];

/** Both of {@link DiagnoseNode}'s steps on one whole snapshot. */
export function diagnoseNode(d: DiagnoseNode, snapshot: NodeSnapshot, api: ApiObjects, options: { readonly node: string }): NodeDiagnosis {
  return d.finish(d.rules(snapshot, api, options), snapshot, api);
}

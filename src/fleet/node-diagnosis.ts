/**
 * One node's per-Service diagnosis, as the fleet folds it into its matrix: a function of
 * the node's snapshot and the API objects ({@link DiagnoseNode}). The verdict and findings
 * are issue 17's (`diagnoseSnapshot`, src/analysis/diagnose/); the fleet adds each Service's
 * backend set — what the node programmed against what the API says
 * (src/analysis/programmed-backends.ts) — to compare the nodes with each other.
 */
import { diagnoseSnapshot, VERDICTS, type Finding, type Verdict } from '../analysis/diagnose/index.js';
import { expectedBackends, isProgrammed, programmedBackendsOf } from '../analysis/programmed-backends.js';
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

/** The per-node function the fleet runs on each node's snapshot (`node`: the Node's name). */
export type DiagnoseNode = (snapshot: NodeSnapshot, api: ApiObjects, options: { readonly node: string }) => NodeDiagnosis;

/** Issue 17's diagnosis of the node, with each programmed Service's backend sets beside it. Pure. */
export const fleetDiagnoseNode: DiagnoseNode = (snapshot, api, { node }) => {
  const d = diagnoseSnapshot(snapshot, api);
  const byKey = new Map(api.services.map((s) => [`${s.meta.namespace}/${s.meta.name}`, s]));
  const programmedBackends = programmedBackendsOf(snapshot);
  return {
    mode: d.header.mode,
    services: d.services.map((s) => {
      const svc = byKey.get(`${s.namespace}/${s.name}`);
      const programmed = svc && isProgrammed(svc) ? programmedBackends(svc) : null;
      return {
        namespace: s.namespace,
        name: s.name,
        verdict: s.verdict,
        findings: s.findings,
        backends: programmed?.kind === 'read' ? programmed.endpoints : null,
        expected: svc && isProgrammed(svc) ? expectedBackends(api, svc, node) : [],
      };
    }),
  };
};

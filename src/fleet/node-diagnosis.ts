/**
 * One node's per-Service diagnosis, as the fleet folds it into its matrix: a function of
 * the node's snapshot and the API objects ({@link DiagnoseNode}). The fleet's own part is
 * the backend set — what the node programmed for each Service against what the API says
 * (src/analysis/programmed-backends.ts) — which it also compares across nodes.
 *
 * {@link backendSetDiagnosis} judges a Service by that backend set alone: `broken` when
 * the node has no rules for a Service the API has endpoints for (or DNATs to none of them),
 * `degraded` when its set differs (stale endpoints still programmed, current ones missing,
 * each named), `unknown` when the table was not read, `ok` when the sets are equal.
 * Issue 17's diagnosis (API → EndpointSlice → dataplane → conntrack → DNS) is the fuller
 * judge; {@link DiagnoseNode} is the seam where it plugs in.
 */
import { expectedBackends, isProgrammed, programmedBackends } from '../analysis/programmed-backends.js';
import type { ApiObjects } from '../model/k8s.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { detectProxyMode } from '../analysis/proxy-mode.js';

/** A Service's verdict on one node, best to worst: ok, unknown (not decidable, with why), degraded, broken. */
export type Verdict = 'ok' | 'unknown' | 'degraded' | 'broken';

/** Verdicts from best to worst (a node's or a Service's overall verdict is the worst of its cells). */
export const VERDICT_ORDER: readonly Verdict[] = ['ok', 'unknown', 'degraded', 'broken'];

/** The worse of two verdicts. */
export function worse(a: Verdict, b: Verdict): Verdict {
  return VERDICT_ORDER.indexOf(a) >= VERDICT_ORDER.indexOf(b) ? a : b;
}

/**
 * One finding: `code` a stable word (`stale-endpoints`, `missing-endpoints`,
 * `no-rules`, `table-not-read`), `message` in English, `endpoints` the `ip:port`s named.
 */
export interface Finding {
  /** The layer the finding is about (issue 17's: api, endpoints, dataplane, conntrack, dns). */
  readonly layer: string;
  readonly code: string;
  readonly message: string;
  readonly endpoints?: readonly string[];
}

/** One Service's diagnosis on one node. `backends`: the node's programmed set (`ip:port`, sorted), null when not read. */
export interface NodeServiceDiagnosis {
  readonly namespace: string;
  readonly name: string;
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
  readonly backends: readonly string[] | null;
  /** What the API says this node should program (`ip:port`, sorted). */
  readonly expected: readonly string[];
}

/** One node's diagnosis: its proxy mode and one entry per programmed Service of the API. */
export interface NodeDiagnosis {
  readonly mode: string;
  readonly services: readonly NodeServiceDiagnosis[];
}

/** The per-node function the fleet runs on each node's snapshot (`node`: the Node's name). */
export type DiagnoseNode = (snapshot: NodeSnapshot, api: ApiObjects, options: { readonly node: string }) => NodeDiagnosis;

const list = (xs: readonly string[]) => xs.join(', ');

/** The backend-set judge (see the module comment). Pure. */
export const backendSetDiagnosis: DiagnoseNode = (snapshot, api, { node }) => {
  const services: NodeServiceDiagnosis[] = [];
  for (const svc of api.services) {
    if (!isProgrammed(svc)) continue;
    const { namespace, name } = svc.meta;
    const expected = expectedBackends(api, svc, node);
    const got = programmedBackends(snapshot, svc);
    if (got.kind === 'unknown') {
      services.push({ namespace, name, verdict: 'unknown', findings: [{ layer: 'dataplane', code: 'table-not-read', message: got.reason }], backends: null, expected });
      continue;
    }
    const have = new Set(got.endpoints);
    const want = new Set(expected);
    const stale = got.endpoints.filter((e) => !want.has(e));
    const missing = expected.filter((e) => !have.has(e));
    const findings: Finding[] = [];
    let verdict: Verdict = 'ok';
    if (!got.hasRules && expected.length > 0) {
      verdict = 'broken';
      findings.push({ layer: 'dataplane', code: 'no-rules', message: `no ${got.via} rules for ${namespace}/${name} on this node, though the API has ${expected.length} endpoint(s): ${list(expected)}`, endpoints: expected });
    } else {
      if (stale.length) findings.push({ layer: 'dataplane', code: 'stale-endpoints', message: `programmed but not in the API: ${list(stale)}`, endpoints: stale });
      if (missing.length) findings.push({ layer: 'dataplane', code: 'missing-endpoints', message: `in the API but not programmed: ${list(missing)}`, endpoints: missing });
      if (findings.length) verdict = expected.length > 0 && stale.length === got.endpoints.length ? 'broken' : 'degraded';
    }
    services.push({ namespace, name, verdict, findings, backends: got.endpoints, expected });
  }
  return { mode: detectProxyMode(snapshot).mode, services };
};

/** The per-node function `fleet diagnose` runs. */
export const fleetDiagnoseNode: DiagnoseNode = backendSetDiagnosis;

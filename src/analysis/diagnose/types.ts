/**
 * The contract of `nodescope diagnose` (issue 17, item 8): one verdict per Service, made of
 * findings, each naming the layer it belongs to and the pane row that proves it. Plain data,
 * JSON-safe (no bigint, no class instances): the fleet matrix and `-o json` read it as is.
 */
import type { Said } from './say.js';

/** The layers a Service's traffic crosses on a node, in the order a reader checks them. */
export type DiagnoseLayer = 'api' | 'endpoints' | 'dataplane' | 'conntrack' | 'dns';

/** Every layer, in checking order. */
export const DIAGNOSE_LAYERS: readonly DiagnoseLayer[] = ['api', 'endpoints', 'dataplane', 'conntrack', 'dns'];

/**
 * A Service's verdict on one node:
 * - `ok`: every frontend the node should serve reaches exactly the endpoints the API says;
 * - `degraded`: some frontend or endpoint is wrong, but every frontend still reaches a ready endpoint;
 * - `broken`: some frontend has no path to a ready endpoint from this node;
 * - `unknown`: the data cannot decide (the findings name what is missing).
 */
export type Verdict = 'ok' | 'degraded' | 'broken' | 'unknown';

/** Every verdict, best first. */
export const VERDICTS: readonly Verdict[] = ['ok', 'degraded', 'unknown', 'broken'];

/**
 * What a finding does to the verdict: `info` nothing (a fact worth knowing, e.g. kube-proxy's
 * by-design drop of eTP=Local traffic on a node without a local endpoint), `degraded`, `broken`,
 * `unknown` (a part the verdict needs could not be read).
 */
export type Severity = 'info' | 'degraded' | 'broken' | 'unknown';

/**
 * The pane row that proves a finding. `pane`: the TUI pane id (`rules`, `lb`, `services`,
 * `conntrack`, `dns`, `compare`); `ref`: the row in that pane's words — `nat KUBE-SVC-X #3`
 * (table, chain, 1-based rule), `ip kube-proxy map service-ips 10.96.0.10 . tcp . 53`,
 * `10.96.0.10:53/TCP` (an LB frontend), a conntrack flow, a DNS name; `text`: the row as the
 * node printed it, when there is one (not terminal-safe: made safe where printed).
 */
export interface Evidence {
  readonly pane: 'services' | 'rules' | 'lb' | 'conntrack' | 'dns' | 'compare';
  readonly ref: string;
  readonly text?: string;
  /**
   * Where a Rules pane row is, for a jump to it: the ruleset as the Rules pane names it
   * (`iptables`, `iptables-legacy`, `nft`), the table (`nat`, `ip kube-proxy`), and the chain
   * with its 0-based rule, or the set/map.
   */
  readonly at?: { readonly ruleset: string; readonly table: string; readonly chain?: string; readonly rule?: number; readonly set?: string };
}

/**
 * One thing found wrong (or worth knowing) about a Service on a node. `code` is stable (tests
 * and scripts match on it, see {@link FindingCode}); `message` is the English sentence, `said`
 * the same as an i18n key and params (src/analysis/diagnose/say.ts: rendered in `ja` by the
 * report and the findings view; not part of the JSON document).
 * `port`: the Service port's name or number; `frontend`: `ip:port/PROTO` (`*:port/PROTO` for a
 * NodePort on every node address); `endpoint`: `ip:port`.
 */
export interface Finding {
  readonly layer: DiagnoseLayer;
  readonly code: FindingCode;
  readonly severity: Severity;
  readonly message: string;
  readonly said?: Said;
  readonly port?: string;
  readonly frontend?: string;
  readonly endpoint?: string;
  readonly evidence: readonly Evidence[];
}

/** The finding codes, one per kind of difference. */
export type FindingCode =
  // api / endpoints
  | 'no-api-objects'
  | 'selector-matches-nothing'
  | 'port-name-mismatch'
  | 'no-endpoints'
  | 'no-ready-endpoints'
  | 'duplicate-endpoint'
  | 'wrong-family-address'
  | 'externalname-ip'
  | 'headless-lb-ip'
  // dataplane
  | 'dataplane-not-read'
  | 'dataplane-not-understood'
  | 'frontend-missing'
  | 'frontend-unexpected'
  | 'frontend-rejects'
  | 'frontend-drops'
  | 'frontend-no-ready-endpoint'
  | 'endpoint-missing'
  | 'endpoint-extra'
  | 'endpoint-not-ready'
  | 'wrong-target-port'
  | 'wrong-protocol'
  | 'wrong-weights'
  | 'local-policy-drop'
  | 'affinity-differs'
  | 'leftover-rules'
  | 'legacy-nft-disagree'
  | 'cilium-listing-disagrees'
  | 'cilium-backend-state'
  | 'cilium-slot-count'
  | 'cilium-flags-differ'
  | 'cilium-expectation-undecided'
  // walks from a client (--from, src/trace/diagnose-from.ts)
  | 'from-reaches'
  | 'from-partly'
  | 'from-blocked'
  | 'from-unknown'
  // conntrack
  | 'conntrack-not-read'
  | 'conntrack-stale-endpoint'
  | 'conntrack-untranslated'
  | 'conntrack-udp-unreplied'
  // dns
  | 'dns-not-answered'
  | 'dns-wrong-answer';

/** One Service's verdict and findings. */
export interface ServiceDiagnosis {
  readonly namespace: string;
  readonly name: string;
  readonly verdict: Verdict;
  readonly findings: readonly Finding[];
}

/**
 * What the diagnosis compared against: the dataplane it read (`iptables`, `nftables`, `cilium`,
 * or `none`), the node's proxy mode as detected, and node-level findings that belong to no
 * Service (leftover rules of no known Service, a dataplane not read).
 */
export interface DiagnosisHeader {
  readonly node: string;
  readonly mode: string;
  readonly dataplane: 'iptables' | 'nftables' | 'cilium' | 'none';
  readonly services: number;
  readonly counts: Readonly<Record<Verdict, number>>;
  readonly nodeFindings: readonly Finding[];
  /** Whether `<svc>.<ns>.svc.<zone>` answers were compared (`zone`), or why not (`reason`). */
  readonly dns: { readonly checked: boolean; readonly zone?: string; readonly reason?: string; readonly said?: Said };
}

/**
 * The DNS layer as the caller read it (src/dns/diagnose-dns.ts, from a capture's recorded
 * answers): `checked` with each Service's `dns` findings by `ns/name` and the cluster domain
 * compared against, or not checked and why (no recorded answers: the layer is then neither
 * ok nor a finding).
 */
export type DnsLayer =
  | { readonly checked: true; readonly zone: string; readonly findings: ReadonlyMap<string, readonly Finding[]> }
  | { readonly checked: false; readonly reason: string; readonly said?: Said };

/** The whole diagnosis of one node. */
export interface Diagnosis {
  readonly header: DiagnosisHeader;
  readonly services: readonly ServiceDiagnosis[];
}

/**
 * Exit status of `nodescope diagnose`: 0 all ok, 1 any degraded or broken (like diff(1)),
 * 2 could not decide (some Service `unknown` and none degraded or broken; the CLI also exits 2
 * when it could not run at all).
 */
export function diagnoseExitStatus(d: Diagnosis): 0 | 1 | 2 {
  if (d.services.some((s) => s.verdict === 'degraded' || s.verdict === 'broken')) return 1;
  if (d.services.some((s) => s.verdict === 'unknown')) return 2;
  return d.services.length === 0 && d.header.nodeFindings.some((f) => f.severity === 'unknown') ? 2 : 0;
}

/**
 * Guided tours as data (`fixtures/tours/*.yaml`): a tour walks a workshop room through
 * the same screens, step by step. Each step names the capture it runs on (a fixture
 * bundle under `fixtures/`), the pane to show, one object to put the cursor on and
 * highlight, and a short narration in English and Japanese.
 *
 * The YAML shape (validated by `load.ts`, which reports file, line and field):
 *
 * ```yaml
 * id: where-rewritten
 * title: { en: "…", ja: "…" }
 * capture: lab-iptables            # default capture of every step
 * steps:
 *   - pane: rules
 *     capture: lab-nftables        # optional: another bundle for this step
 *     optional: true               # optional: skip the step when the bundle is absent
 *     target: { serviceChain: default/web, hop: endpoint, endpoint: 10.244.0.23 }
 *     narration: { en: "…", ja: "…" }
 * ```
 *
 * A target is a mapping with exactly one kind key (see {@link TourTarget}).
 */

/** A language narration exists in (the UI's languages). */
export type TourLang = 'en' | 'ja';

/** Every language a tour must be written in, in the order they are checked. */
export const TOUR_LANGS: readonly TourLang[] = ['en', 'ja'];

/** Text in every tour language. */
export type Localized = Readonly<Record<TourLang, string>>;

/** Every pane name a step may use: the app's panes a tour may show (src/ui/pane-registry.tsx checks it against its entries). */
export const TOUR_PANES = ['services', 'rules', 'lb', 'conntrack', 'dns', 'step', 'compare', 'ipvs'] as const;

/** The panes a step can show. */
export type TourPane = (typeof TOUR_PANES)[number];

/**
 * Which hop of a Service's kube-proxy rules: `services` the dispatch (its KUBE-SERVICES
 * rule, its `service-ips` element), `service` the per-Service chain (`KUBE-SVC-…`,
 * `service-…`), `endpoint` an endpoint's chain (`KUBE-SEP-…`, `endpoint-…`).
 */
export type ServiceHop = 'services' | 'service' | 'endpoint';

/**
 * The object a step highlights (YAML key in brackets):
 * - `service` [`service: ns/name`]: the Service's row on the Services pane;
 * - `endpoints` [`endpoints: ns/name`]: the same row, its EndpointSlice endpoints being the point;
 * - `chain` [`chain: NAME`, `table:`, optional `ruleset:` `iptables`|`nft` and `match:`]: a chain
 *   by name, the cursor on the first rule whose text contains `match`;
 * - `serviceChain` [`serviceChain: ns/name`, `hop:`, optional `endpoint:` IP, `port:` name]: the
 *   Service's chain in whichever rewrite table the capture has (iptables or nftables), opened
 *   the way a reader follows it (KUBE-SERVICES → KUBE-SVC → KUBE-SEP);
 * - `set` [`set: NAME`, `table:`, optional `match:`]: an nftables set or map, cursor on the
 *   first element containing `match`;
 * - `lbEntry` [`lbEntry: VIP:PORT/PROTO`]: a Cilium LB map frontend and its backend slots;
 * - `flow` [`flow: WORDS`, optional `service:`]: conntrack entries containing every word
 *   (`10.244.0.9:33052`), the first one highlighted;
 * - `packet` [`packet: FROM -> TO/PROTO`, optional `flags:`, `entry:`, `focus:`]: a step-mode
 *   walk; `focus` picks the step to highlight (`conntrack`, `nat`, `dnat`, `final`);
 * - `dns` [`dns: ns/name`]: what CoreDNS answers for the Service;
 * - `compare` [`compare: ns/name`]: what each proxy mode programs for the capture's Services.
 */
export type TourTarget =
  | { readonly kind: 'service'; readonly service: string }
  | { readonly kind: 'endpoints'; readonly service: string }
  | { readonly kind: 'chain'; readonly chain: string; readonly table: string; readonly ruleset: 'iptables' | 'nft' | null; readonly match: string | null }
  | { readonly kind: 'serviceChain'; readonly service: string; readonly hop: ServiceHop; readonly endpoint: string | null; readonly port: string | null }
  | { readonly kind: 'set'; readonly set: string; readonly table: string; readonly match: string | null }
  | { readonly kind: 'lbEntry'; readonly frontend: string }
  | { readonly kind: 'flow'; readonly words: string; readonly service: string | null }
  | { readonly kind: 'packet'; readonly from: string; readonly to: string; readonly flags: string | null; readonly entry: string | null; readonly focus: PacketFocus }
  | { readonly kind: 'dns'; readonly service: string }
  | { readonly kind: 'compare'; readonly service: string };

/** A target's kind (its YAML key). */
export type TourTargetKind = TourTarget['kind'];

/** Every target kind, as written in YAML. */
export const TOUR_TARGET_KINDS: readonly TourTargetKind[] = ['service', 'endpoints', 'chain', 'serviceChain', 'set', 'lbEntry', 'flow', 'packet', 'dns', 'compare'];

/** Which step of a packet walk to highlight. */
export type PacketFocus = 'conntrack' | 'nat' | 'dnat' | 'final';

/** Every packet focus word. */
export const PACKET_FOCI: readonly PacketFocus[] = ['conntrack', 'nat', 'dnat', 'final'];

/** The panes each target kind may be shown on (the first is the natural one). */
export const TARGET_PANES: Readonly<Record<TourTargetKind, readonly TourPane[]>> = {
  service: ['services', 'dns', 'conntrack', 'lb'],
  endpoints: ['services'],
  chain: ['rules'],
  serviceChain: ['rules'],
  set: ['rules'],
  lbEntry: ['lb'],
  flow: ['conntrack'],
  packet: ['step'],
  dns: ['dns'],
  compare: ['compare'],
};

/**
 * One step. `capture`: the fixture bundle it runs on (the tour's unless overridden);
 * `line`: 1-based line of the step in the YAML file (for messages); `optional`: the step
 * is dropped when its capture is not shipped (e.g. `lab-cilium`).
 */
export interface TourStep {
  readonly capture: string;
  readonly pane: TourPane;
  readonly target: TourTarget;
  readonly narration: Localized;
  readonly optional: boolean;
  readonly line: number;
}

/** A whole tour. `origin`: the file it was read from; `capture`: the default capture. */
export interface Tour {
  readonly id: string;
  readonly title: Localized;
  readonly capture: string;
  readonly steps: readonly TourStep[];
  readonly origin: string;
}

/** The distinct captures a tour's steps use, in first-use order. */
export function tourCaptures(tour: Tour): string[] {
  return [...new Set(tour.steps.map((s) => s.capture))];
}

/** A target as one line of YAML-like text (`serviceChain default/web hop=endpoint endpoint=10.244.0.23`), for messages and the bar. */
export function describeTarget(target: TourTarget): string {
  switch (target.kind) {
    case 'service':
    case 'endpoints':
    case 'dns':
    case 'compare':
      return `${target.kind} ${target.service}`;
    case 'chain':
      return `chain ${target.table}/${target.chain}${target.match ? ` "${target.match}"` : ''}`;
    case 'serviceChain':
      return `${target.hop} chain of ${target.service}${target.port ? `:${target.port}` : ''}${target.endpoint ? ` → ${target.endpoint}` : ''}`;
    case 'set':
      return `@${target.set} in ${target.table}${target.match ? ` "${target.match}"` : ''}`;
    case 'lbEntry':
      return `LB frontend ${target.frontend}`;
    case 'flow':
      return `conntrack ${target.words}`;
    case 'packet':
      return `packet ${target.from} → ${target.to}${target.flags ? ` [${target.flags}]` : ''}`;
  }
}

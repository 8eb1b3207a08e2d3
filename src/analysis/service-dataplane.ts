/**
 * Where a Service lives in the node's rewrite table: the kube-proxy chains that
 * implement each of its ports. Found the way a reader would find them — the
 * KUBE-SERVICES rule whose comment names the Service — with kube-proxy's own chain
 * name derivation as the fallback for dumps without comments. Pure.
 */
import { findChain, type IptablesRuleset } from '../model/iptables.js';
import type { NftRuleset } from '../model/nftables.js';
import type { ServiceRef } from '../model/service-ref.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { IPTABLES_CHAINS, iptablesServiceChain, servicePortName } from './kubeproxy-names.js';
import { buildLbView, lbFrontendIndexForService, type LbView } from './lb-view.js';
import { detectProxyMode, type ProxyMode } from './proxy-mode.js';

/** One Service port's entry chain: `KUBE-SVC-…` (or `KUBE-SVL-`/`KUBE-EXT-`/`KUBE-FW-`). */
export interface ServiceChainRef {
  /** The kube-proxy comment of the KUBE-SERVICES rule, e.g. `default/web:http cluster IP`. */
  readonly comment: string;
  readonly table: 'nat';
  readonly chain: string;
  /** 0-based index of the KUBE-SERVICES rule that jumps there; null when found by name only. */
  readonly servicesRuleIndex: number | null;
}

/**
 * The chains implementing Service `namespace/name` in `ruleset`, in KUBE-SERVICES
 * order. `ports` (name + protocol) enables the by-name fallback. Empty when the
 * Service has no rules (headless, ExternalName, or not programmed).
 */
export function iptablesServiceChains(
  ruleset: IptablesRuleset,
  namespace: string,
  name: string,
  ports: readonly { readonly name: string; readonly protocol: string }[] = [],
): ServiceChainRef[] {
  const out: ServiceChainRef[] = [];
  const services = findChain(ruleset, 'nat', IPTABLES_CHAINS.services);
  const prefix = `${namespace}/${name}:`;
  if (services) {
    services.rules.forEach((rule, i) => {
      const target = rule.target?.name ?? '';
      if (!rule.comment?.startsWith(prefix) || !/^KUBE-(SVC|SVL|EXT|FW)-/.test(target)) return;
      if (out.some((r) => r.chain === target)) return;
      out.push({ comment: rule.comment, table: 'nat', chain: target, servicesRuleIndex: i });
    });
  }
  if (out.length === 0) {
    for (const port of ports) {
      const chain = iptablesServiceChain('KUBE-SVC-', servicePortName(namespace, name, port.name), port.protocol);
      if (findChain(ruleset, 'nat', chain)) out.push({ comment: `${namespace}/${name}:${port.name}`, table: 'nat', chain, servicesRuleIndex: null });
    }
  }
  return out;
}

/** One Service port's chain in kube-proxy's nftables table (`service-<hash>-ns/name/proto/port`). */
export interface NftServiceChainRef {
  /** `family name` of the table, e.g. `ip kube-proxy`. */
  readonly table: string;
  readonly chain: string;
}

/**
 * The `service-…` chains of Service `namespace/name` in kube-proxy's nftables
 * tables (`ip kube-proxy`, `ip6 kube-proxy`), whose names end in
 * `-<namespace>/<name>/<proto>/<port name>` as kube-proxy's nftables proxier derives them.
 */
export function nftServiceChains(ruleset: NftRuleset, namespace: string, name: string): NftServiceChainRef[] {
  const out: NftServiceChainRef[] = [];
  const infix = `-${namespace}/${name}/`;
  for (const table of ruleset.tables) {
    if (table.name !== 'kube-proxy') continue;
    for (const chain of table.chains) {
      if (chain.name.startsWith('service-') && chain.name.includes(infix)) out.push({ table: `${table.family} ${table.name}`, chain: chain.name });
    }
  }
  return out;
}

/**
 * Which dataplane handles a Service on this node, and where in it:
 * - `iptables`: kube-proxy's chains for it in the iptables `nat` table (`ruleset`: the
 *   table read from iptables-save), KUBE-SERVICES order;
 * - `nft`: its `service-…` chains in kube-proxy's nftables tables;
 * - `cilium`: its frontend row in the LB view (`frontend`: index into `lb.frontends`, the
 *   ClusterIP frontend first);
 * - `none`: no rules, chains or LB entries of it were read (headless, ExternalName, not
 *   programmed, or the dataplane's tables were not read).
 */
export type ServiceDataplane =
  | { readonly kind: 'iptables'; readonly ruleset: IptablesRuleset; readonly chains: readonly ServiceChainRef[] }
  | { readonly kind: 'nft'; readonly ruleset: NftRuleset; readonly chains: readonly NftServiceChainRef[] }
  | { readonly kind: 'cilium'; readonly lb: LbView; readonly frontend: number }
  | { readonly kind: 'none' };

/** What {@link serviceDataplane} may be given to save work: the node's proxy mode and LB view when already made. */
export interface ServiceDataplaneOptions {
  /** The Service's ports (name + protocol), for the iptables by-name fallback. */
  readonly ports?: readonly { readonly name: string; readonly protocol: string }[];
  readonly mode?: ProxyMode;
  readonly lb?: LbView;
  /** False: do not look in Cilium's LB maps (the caller has no use for a frontend row). */
  readonly lbMaps?: boolean;
}

/**
 * The one answer to "which dataplane handles Service `ref` on this node" (the UI's Enter,
 * the tours, the dashboard and the reports ask it). The rewrite table of the node's proxy
 * mode is asked first (an nftables-mode node may keep stale iptables chains from before,
 * and the other way round), then the other, then Cilium's LB maps. Pure.
 */
export function serviceDataplane(snapshot: NodeSnapshot, ref: ServiceRef, options: ServiceDataplaneOptions = {}): ServiceDataplane {
  const mode = options.mode ?? detectProxyMode(snapshot).mode;
  const viaIptables = (): ServiceDataplane | null => {
    const ruleset = snapshot.iptables?.value;
    const chains = ruleset ? iptablesServiceChains(ruleset, ref.namespace, ref.name, options.ports ?? []) : [];
    return ruleset && chains.length ? { kind: 'iptables', ruleset, chains } : null;
  };
  const viaNft = (): ServiceDataplane | null => {
    const ruleset = snapshot.nft?.value;
    const chains = ruleset ? nftServiceChains(ruleset, ref.namespace, ref.name) : [];
    return ruleset && chains.length ? { kind: 'nft', ruleset, chains } : null;
  };
  const rewrite = mode === 'nftables' ? viaNft() ?? viaIptables() : viaIptables() ?? viaNft();
  if (rewrite) return rewrite;
  if (options.lbMaps === false) return { kind: 'none' };
  const lb = options.lb ?? buildLbView(snapshot, '');
  const frontend = lbFrontendIndexForService(lb, ref.namespace, ref.name);
  return frontend >= 0 ? { kind: 'cilium', lb, frontend } : { kind: 'none' };
}

/**
 * A kube-proxy filter rule that stops a Service's traffic: `REJECT` with the comment
 * `ns/name[:port] has no endpoints`, or `DROP` with `… has no local endpoints`
 * (externalTrafficPolicy/internalTrafficPolicy Local without a local endpoint). kube-proxy
 * writes these in the filter table's KUBE-SERVICES, KUBE-EXTERNAL-SERVICES and
 * KUBE-NODEPORTS chains (pkg/proxy/iptables/proxier.go, "filterRules").
 */
export interface ServiceFilterRuleRef {
  readonly comment: string;
  readonly table: 'filter';
  readonly chain: string;
  /** 0-based index of the rule in its chain. */
  readonly ruleIndex: number;
  readonly target: string;
}

const FILTER_CHAINS = [IPTABLES_CHAINS.services, 'KUBE-EXTERNAL-SERVICES', 'KUBE-NODEPORTS'] as const;

/** The filter rules of Service `namespace/name` (see {@link ServiceFilterRuleRef}), KUBE-SERVICES first. */
export function iptablesServiceFilterRules(ruleset: IptablesRuleset, namespace: string, name: string): ServiceFilterRuleRef[] {
  const out: ServiceFilterRuleRef[] = [];
  const whole = `${namespace}/${name}`;
  for (const chainName of FILTER_CHAINS) {
    const chain = findChain(ruleset, 'filter', chainName);
    chain?.rules.forEach((rule, i) => {
      const c = rule.comment;
      const target = rule.target?.name ?? '';
      if (!c || (target !== 'REJECT' && target !== 'DROP')) return;
      if (!(c.startsWith(`${whole}:`) || c.startsWith(`${whole} `))) return;
      if (!/ has no (local )?endpoints$/.test(c)) return;
      out.push({ comment: c, table: 'filter', chain: chainName, ruleIndex: i, target });
    });
  }
  return out;
}

/**
 * The kube-proxy nftables maps holding an element for Service `namespace/name` without
 * endpoints (`no-endpoint-services`, `no-endpoint-nodeports`: element comment
 * `ns/name:port`, verdict `goto reject-chain` or `drop`), as `{table: 'family name', set}`.
 */
export function nftServiceNoEndpointSets(ruleset: NftRuleset, namespace: string, name: string): { readonly table: string; readonly set: string }[] {
  const out: { table: string; set: string }[] = [];
  const whole = `${namespace}/${name}`;
  for (const table of ruleset.tables) {
    if (table.name !== 'kube-proxy') continue;
    for (const set of table.sets) {
      if (set.name !== 'no-endpoint-services' && set.name !== 'no-endpoint-nodeports') continue;
      if (set.elements.some((e) => e.comment === whole || e.comment?.startsWith(`${whole}:`))) out.push({ table: `${table.family} ${table.name}`, set: set.name });
    }
  }
  return out;
}

/**
 * What a node's kube-proxy iptables rules do with each frontend: the frontends of the `nat`
 * table's KUBE-SERVICES (ClusterIP, external and LoadBalancer IPs) and KUBE-NODEPORTS (NodePorts)
 * followed jump by jump to their DNAT targets, each with the share of new connections the
 * `-m statistic --mode random --probability` cascade gives it; the `filter` table's REJECT
 * ("has no endpoints") and DROP ("has no local endpoints") rules for frontends that the nat
 * table does not rewrite.
 *
 * The walk is the one of an ordinary client: a Pod for a ClusterIP, an outside address for the
 * external frontends. Rules that only match other clients (`-s CIDR`, `-m addrtype --src-type
 * LOCAL`) are passed over, `! -s CIDR` matches, `-m recent --rcheck` rules are the affinity
 * shortcut (their `--seconds` is the affinity timeout). Rule layout: kube-proxy
 * pkg/proxy/iptables/proxier.go (`syncProxyRules`, `writeServiceToEndpointRules`). Pure.
 */
import { findChain, findMatchOption, dnatDestination, statisticProbability, type IptablesRule, type IptablesRuleset } from '../../model/iptables.js';
import type { Evidence } from './types.js';
import type { FrontendKind, FrontendOutcome, ProgrammedEndpoint, ProgrammedFrontend } from './frontends.js';

/** Where a rule is, in the Rules pane's words: `nat KUBE-SVC-X #3`. */
export function iptablesRuleRef(table: string, rule: IptablesRule, ruleset = 'iptables'): Evidence {
  return { pane: 'rules', ref: `${table} ${rule.chain} #${rule.index}`, text: rule.raw, at: { ruleset, table, chain: rule.chain, rule: rule.index - 1 } };
}

/** Chains that only mark: passed over by the walk. */
const MARKING = new Set(['KUBE-MARK-MASQ', 'KUBE-MARK-DROP', 'MARK', 'CONNMARK', 'LOG']);
const MAX_DEPTH = 8;

/** An endpoint found by the walk; its evidence is made only when a finding quotes it (10,000 Services walk by). */
interface FoundEndpoint extends ProgrammedEndpoint {
  weight: number;
  readonly rules: IptablesRule[];
}

interface WalkState {
  readonly ruleset: IptablesRuleset;
  /** The Rules pane's name of the ruleset (`iptables`, `iptables-legacy`). */
  readonly id: string;
  readonly endpoints: FoundEndpoint[];
  affinity: number | null;
  readonly problems: string[];
  readonly rules: IptablesRule[];
}

/** What the walk needs of a rule's matches, read in one pass. */
interface RuleFacts {
  /** Matches only clients other than the ordinary one (see the module comment). */
  readonly conditional: boolean;
  /** `-m recent --rcheck|--update`: the affinity shortcut; its `--seconds` (NaN when absent). */
  readonly affinitySeconds: number | null;
  readonly statistic: boolean;
}

function factsOf(rule: IptablesRule, chain: string): RuleFacts {
  let conditional = (rule.source !== null && !rule.source.negated && !chain.startsWith('KUBE-FW-')) || (rule.inInterface !== null && !rule.inInterface.negated);
  let affinitySeconds: number | null = null;
  let statistic = false;
  for (const m of rule.matches) {
    if (m.module === 'addrtype' && m.options.some((o) => o.name === 'src-type')) conditional = true;
    else if (m.module === 'statistic') statistic = true;
    else if (m.module === 'recent' && m.options.some((o) => o.name === 'rcheck' || o.name === 'update')) {
      affinitySeconds = Number(m.options.find((o) => o.name === 'seconds')?.values[0] ?? NaN);
    }
  }
  return { conditional, affinitySeconds, statistic };
}

function addEndpoint(state: WalkState, rule: IptablesRule, share: number): void {
  const id = state.id;
  const dest = dnatDestination(rule);
  if (!dest?.address || dest.port === null || dest.addressMax !== null || dest.portMax !== null) {
    state.problems.push(`DNAT target not understood: ${rule.raw}`);
    return;
  }
  const have = state.endpoints.find((e) => e.ip === dest.address && e.port === dest.port);
  if (have) {
    have.weight += share;
    have.rules.push(rule);
    return;
  }
  const rules = [rule];
  state.endpoints.push({
    ip: dest.address,
    port: dest.port,
    protocol: rule.protocol && !rule.protocol.negated ? rule.protocol.value.toUpperCase() : null,
    weight: share,
    rules,
    get evidence(): Evidence[] {
      return rules.map((r) => iptablesRuleRef('nat', r, id));
    },
  });
}

/** Follows `chain` with `weight` of the frontend's new connections; returns the share that falls through. */
function walk(state: WalkState, chainName: string, weight: number, depth: number): number {
  if (depth > MAX_DEPTH) {
    state.problems.push(`jumps deeper than ${MAX_DEPTH} chains at ${chainName}`);
    return 0;
  }
  const chain = findChain(state.ruleset, 'nat', chainName);
  if (!chain) {
    state.problems.push(`chain ${chainName} is jumped to but not in the nat table`);
    return 0;
  }
  let remaining = 1;
  for (const rule of chain.rules) {
    if (remaining <= 1e-12) break;
    const target = rule.target?.name;
    if (!target || MARKING.has(target)) continue;
    const facts = factsOf(rule, chainName);
    if (facts.affinitySeconds !== null) {
      state.affinity = facts.affinitySeconds;
      continue;
    }
    if (facts.conditional) continue;
    const p = facts.statistic ? statisticProbability(rule) : null;
    if (facts.statistic && p === null) {
      state.problems.push(`statistic match not understood: ${rule.raw}`);
      return 0;
    }
    const share = remaining * (p ?? 1);
    if (target === 'DNAT') addEndpoint(state, rule, weight * share);
    else if (target === 'RETURN') return remaining;
    else if (target === 'ACCEPT' || target === 'DROP' || target === 'REJECT') state.rules.push(rule);
    else if (rule.target?.kind === 'jump' || rule.target?.kind === 'goto') {
      const through = walk(state, target, weight * share, depth + 1);
      // A `-j` chain that falls through returns here; a `-g` one does not.
      if (rule.target.kind === 'jump' && through > 0) remaining -= share * (1 - through);
      else remaining -= share;
      continue;
    } else {
      state.problems.push(`target ${target} not understood: ${rule.raw}`);
      return 0;
    }
    remaining -= share;
  }
  return remaining;
}

/** `ns/name:port cluster IP` → `{service: 'ns/name', portName: 'port'}`; nulls when the comment is not kube-proxy's. */
export function serviceOfComment(comment: string | null): { service: string | null; portName: string | null } {
  const m = comment ? /^([a-z0-9][-a-z0-9.]*\/[a-z0-9][-a-z0-9.]*)(?::(\S*))?(?: |$)/.exec(comment) : null;
  return m ? { service: m[1] ?? null, portName: m[2] ?? '' } : { service: null, portName: null };
}

function kindOfComment(comment: string | null): FrontendKind {
  if (comment?.endsWith(' external IP')) return 'externalIP';
  if (comment?.endsWith(' loadbalancer IP')) return 'loadBalancer';
  return 'clusterIP';
}

function dport(rule: IptablesRule): number | null {
  for (const m of rule.matches) {
    const o = m.options.find((x) => x.name === 'dport' || x.name === 'destination-port');
    if (o && !o.negated && /^\d+$/.test(o.values[0] ?? '')) return Number(o.values[0]);
  }
  return null;
}

function hostOf(rule: IptablesRule): string | null {
  const d = rule.destination;
  if (!d || d.negated) return null;
  const [ip = '', len] = d.value.split('/');
  return len === undefined || len === '32' || len === '128' ? ip : null;
}

function frontendOf(ruleset: IptablesRuleset, id: string, rule: IptablesRule, kind: FrontendKind, ip: string, port: number): ProgrammedFrontend {
  const state: WalkState = { ruleset, id, endpoints: [], affinity: null, problems: [], rules: [rule] };
  walk(state, rule.target?.name ?? '', 1, 0);
  const { service, portName } = serviceOfComment(rule.comment);
  const endpoints: readonly ProgrammedEndpoint[] = state.endpoints;
  const rules = state.rules;
  return {
    kind,
    ip,
    port,
    protocol: (rule.protocol?.value ?? 'tcp').toUpperCase(),
    service,
    portName,
    outcome: 'endpoints',
    endpoints,
    affinitySeconds: state.affinity,
    get evidence(): Evidence[] {
      return rules.map((r) => iptablesRuleRef('nat', r, id));
    },
    problems: state.problems,
  };
}

/** The filter table's REJECT/DROP rules of Services without (local) endpoints, as frontends. */
function filterFrontends(ruleset: IptablesRuleset, id: string): ProgrammedFrontend[] {
  const out: ProgrammedFrontend[] = [];
  for (const chainName of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-NODEPORTS']) {
    for (const rule of findChain(ruleset, 'filter', chainName)?.rules ?? []) {
      const target = rule.target?.name;
      if ((target !== 'REJECT' && target !== 'DROP') || !rule.comment || !/ has no (local )?endpoints$/.test(rule.comment)) continue;
      const port = dport(rule);
      if (port === null) continue;
      const nodePort = findMatchOption(rule, 'addrtype', 'dst-type')?.values[0] === 'LOCAL';
      const ip = nodePort ? '*' : hostOf(rule);
      if (ip === null) continue;
      const { service, portName } = serviceOfComment(rule.comment);
      const outcome: FrontendOutcome = target === 'REJECT' ? 'reject' : 'drop';
      const kind: FrontendKind = nodePort ? 'nodePort' : chainName === 'KUBE-SERVICES' ? 'clusterIP' : 'externalIP';
      out.push({ kind, ip, port, protocol: (rule.protocol?.value ?? 'tcp').toUpperCase(), service, portName, outcome, endpoints: [], affinitySeconds: null, evidence: [iptablesRuleRef('filter', rule, id)], problems: [] });
    }
  }
  return out;
}

/**
 * Every kube-proxy frontend of an iptables ruleset (see the module comment): nat frontends
 * first (KUBE-SERVICES order, then KUBE-NODEPORTS), then the filter table's reject/drop ones.
 * `id`: the Rules pane's name of the ruleset, for the evidence.
 * A frontend the nat table rewrites and the filter table also rejects keeps the nat one first
 * (the filter table sees the rewritten destination).
 */
export function readIptablesFrontends(ruleset: IptablesRuleset, id = 'iptables'): ProgrammedFrontend[] {
  const out: ProgrammedFrontend[] = [];
  for (const rule of findChain(ruleset, 'nat', 'KUBE-SERVICES')?.rules ?? []) {
    const target = rule.target?.name ?? '';
    if (!/^KUBE-(SVC|SVL|EXT|FW)-/.test(target)) continue;
    const ip = hostOf(rule);
    const port = dport(rule);
    if (ip === null || port === null) continue;
    out.push(frontendOf(ruleset, id, rule, kindOfComment(rule.comment), ip, port));
  }
  for (const rule of findChain(ruleset, 'nat', 'KUBE-NODEPORTS')?.rules ?? []) {
    const target = rule.target?.name ?? '';
    const port = dport(rule);
    // The `-d 127.0.0.0/8` twin (localhost NodePorts, with nfacct) is the same frontend.
    if (!/^KUBE-(SVC|SVL|EXT|FW)-/.test(target) || port === null || rule.destination) continue;
    out.push(frontendOf(ruleset, id, rule, 'nodePort', '*', port));
  }
  // The nat walk leaves external frontends of eTP=Local Services without a local endpoint with no
  // DNAT for an outside client; the filter rule then says what happens.
  const filter = filterFrontends(ruleset, id);
  const byKey = new Map(filter.map((f) => [`${f.ip}:${f.port}/${f.protocol}`, f]));
  const merged = out.map((f) => {
    const drop = f.endpoints.length === 0 ? byKey.get(`${f.ip}:${f.port}/${f.protocol}`) : undefined;
    return drop ? { ...f, outcome: drop.outcome, evidence: [...f.evidence, ...drop.evidence] } : f;
  });
  const seen = new Set(out.map((f) => `${f.ip}:${f.port}/${f.protocol}`));
  return [...merged, ...filter.filter((f) => !seen.has(`${f.ip}:${f.port}/${f.protocol}`))];
}

/**
 * What a node's kube-proxy nftables rules (`table ip kube-proxy`) do with each frontend: the
 * elements of the `service-ips` (ClusterIP, external and LoadBalancer IPs) and
 * `service-nodeports` verdict maps followed to their `dnat to` statements, each endpoint with
 * its share of the `numgen random mod N` map; the `no-endpoint-services` /
 * `no-endpoint-nodeports` elements (`goto reject-chain` → reject, `drop` → drop).
 *
 * The walk is the ordinary client's (see read-iptables.ts): rules matching `ip saddr` (other
 * than `!=`) or `fib saddr type local` are passed over; `ip saddr @affinity-…` rules are the
 * affinity shortcut (the set's `timeout` is the affinity timeout). Layout: kube-proxy
 * pkg/proxy/nftables/proxier.go (`syncProxyRules`, `writeServiceToEndpointRules`). Pure.
 */
import type { NftChain, NftExpr, NftRule, NftRuleset, NftSet, NftStatement, NftTable } from '../../model/nftables.js';
import type { Evidence } from './types.js';
import type { FrontendKind, FrontendOutcome, ProgrammedEndpoint, ProgrammedFrontend } from './frontends.js';

/** Where a rule is, in the Rules pane's words: `ip kube-proxy service-… #2` (1-based). */
export function nftRuleRef(table: NftTable, chain: NftChain, index: number, rule: NftRule): Evidence {
  const t = `${table.family} ${table.name}`;
  return { pane: 'rules', ref: `${t} ${chain.name} #${index + 1}`, text: rule.raw, at: { ruleset: 'nft', table: t, chain: chain.name, rule: index } };
}

/** Where a map element is: `ip kube-proxy map service-ips 10.96.0.10 . tcp . 53`. */
export function nftElementRef(table: NftTable, set: NftSet, key: string): Evidence {
  const t = `${table.family} ${table.name}`;
  return { pane: 'rules', ref: `${t} map ${set.name} ${key}`, at: { ruleset: 'nft', table: t, set: set.name } };
}

const MAX_DEPTH = 8;

/** An endpoint found by the walk; its evidence (rule text is printed on each read) is made only when a finding quotes it. */
interface FoundEndpoint extends ProgrammedEndpoint {
  weight: number;
  readonly at: { chain: NftChain; index: number; rule: NftRule }[];
}

interface WalkState {
  readonly table: NftTable;
  readonly chains: ReadonlyMap<string, NftChain>;
  readonly sets: ReadonlyMap<string, NftSet>;
  readonly endpoints: FoundEndpoint[];
  affinity: number | null;
  readonly problems: string[];
}

function valueText(e: NftExpr | undefined): string | null {
  return e?.kind === 'value' ? String(e.value) : null;
}

function isSaddr(e: NftExpr): boolean {
  return e.kind === 'payload' && (e.protocol === 'ip' || e.protocol === 'ip6') && e.field === 'saddr';
}

/** Whether a rule only matches clients other than the ordinary one; affinity rules return their set. */
function ruleCondition(rule: NftRule): { conditional: boolean; affinitySet: string | null } {
  for (const s of rule.statements) {
    if (s.kind !== 'match') continue;
    if (isSaddr(s.left) && s.op === '==' && s.right.kind === 'setref' && s.right.name.startsWith('affinity-')) return { conditional: true, affinitySet: s.right.name };
    if (isSaddr(s.left) && s.op === '==') return { conditional: true, affinitySet: null };
    if (s.left.kind === 'fib' && s.left.flags.includes('saddr')) return { conditional: true, affinitySet: null };
    if (s.left.kind === 'meta' && (s.left.key === 'iifname' || s.left.key === 'iif') && s.op === '==') return { conditional: true, affinitySet: null };
  }
  return { conditional: false, affinitySet: null };
}

function l4proto(rule: NftRule): string | null {
  for (const s of rule.statements) {
    if (s.kind === 'match' && s.left.kind === 'meta' && s.left.key === 'l4proto' && s.op === '==') return valueText(s.right)?.toUpperCase() ?? null;
  }
  return null;
}

function addDnat(state: WalkState, chain: NftChain, index: number, rule: NftRule, s: NftStatement & { kind: 'nat' }, weight: number): void {
  const ip = valueText(s.addr);
  const port = s.port ? Number(valueText(s.port)) : NaN;
  if (ip === null || !Number.isInteger(port)) {
    state.problems.push(`dnat not understood: ${rule.raw}`);
    return;
  }
  const have = state.endpoints.find((e) => e.ip === ip && e.port === port);
  if (have) {
    have.weight += weight;
    have.at.push({ chain, index, rule });
    return;
  }
  const at = [{ chain, index, rule }];
  const table = state.table;
  state.endpoints.push({
    ip,
    port,
    protocol: l4proto(rule),
    weight,
    at,
    get evidence(): Evidence[] {
      return at.map((x) => nftRuleRef(table, x.chain, x.index, x.rule));
    },
  });
}

/** The chains a `numgen … mod N vmap { i : goto chain }` sends to, each with its share of N. */
function numgenShares(state: WalkState, s: NftStatement & { kind: 'vmap' }): Map<string, number> | null {
  if (s.key.kind !== 'numgen' || s.data.kind !== 'set') return null;
  const shares = new Map<string, number>();
  for (const el of s.data.elements) {
    const n = Number(valueText(el.key));
    const v = el.value;
    if (!Number.isInteger(n) || v?.kind !== 'verdict' || !v.target) {
      state.problems.push('numgen map element not understood');
      continue;
    }
    if (n < s.key.offset || n >= s.key.offset + s.key.mod) continue;
    shares.set(v.target, (shares.get(v.target) ?? 0) + 1 / s.key.mod);
  }
  return shares;
}

/** Follows a chain with `weight`; returns the share that falls through (0 when it ends in a verdict). */
function walk(state: WalkState, name: string, weight: number, depth: number): number {
  const chain = state.chains.get(name);
  if (!chain || depth > MAX_DEPTH) {
    state.problems.push(chain ? `jumps deeper than ${MAX_DEPTH} chains at ${name}` : `chain ${name} is named but not in the table`);
    return 0;
  }
  let remaining = 1;
  for (const [index, rule] of chain.rules.entries()) {
    if (remaining <= 1e-12) break;
    const cond = ruleCondition(rule);
    if (cond.affinitySet !== null) {
      const set = state.sets.get(cond.affinitySet);
      state.affinity = set?.timeout ?? null;
      continue;
    }
    if (cond.conditional) continue;
    for (const s of rule.statements) {
      if (s.kind === 'nat' && s.type === 'dnat') {
        addDnat(state, chain, index, rule, s, weight * remaining);
        return 0;
      }
      if (s.kind === 'vmap') {
        const shares = numgenShares(state, s);
        if (!shares) continue;
        let used = 0;
        for (const [target, share] of shares) {
          walk(state, target, weight * remaining * share, depth + 1);
          used += share;
        }
        // A number with no element matches nothing and goes on to the next rule.
        remaining *= 1 - used;
        break;
      }
      if (s.kind === 'verdict' && (s.verdict === 'jump' || s.verdict === 'goto') && s.target) {
        if (s.target === 'mark-for-masquerade') break;
        const through = walk(state, s.target, weight * remaining, depth + 1);
        if (s.verdict === 'goto') return 0;
        remaining *= through;
        break;
      }
      if (s.kind === 'verdict' && (s.verdict === 'drop' || s.verdict === 'accept')) return 0;
      if (s.kind === 'verdict' && s.verdict === 'return') return remaining;
      if (s.kind === 'reject') return 0;
    }
  }
  return remaining;
}

/** `service-HASH-ns/name/proto/port` (or `external-`, `local-`, `firewall-`) → `ns/name` and port name. */
export function serviceOfChain(chain: string): { service: string | null; portName: string | null } {
  const m = /^(?:service|external|local|firewall)-[A-Z0-9]{8}-([^/]+)\/([^/]+)\/[a-z]+\/(.*)$/.exec(chain);
  return m ? { service: `${m[1]}/${m[2]}`, portName: m[3] ?? '' } : { service: null, portName: null };
}

function serviceOfComment(comment: string | undefined): { service: string | null; portName: string | null } {
  const m = comment ? /^([^/\s]+\/[^:\s]+)(?::(\S*))?$/.exec(comment) : null;
  return m ? { service: m[1] ?? null, portName: m[2] ?? '' } : { service: null, portName: null };
}

function elementFrontend(state: Omit<WalkState, 'endpoints' | 'problems' | 'affinity'>, set: NftSet, key: NftExpr, value: NftExpr | undefined, comment: string | undefined): ProgrammedFrontend | null {
  if (key.kind !== 'concat') return null;
  const parts = key.items.map(valueText);
  const nodePort = parts.length === 2;
  const [ip, proto, port] = nodePort ? ['*', parts[0], parts[1]] : parts;
  if (!ip || !proto || !port || !/^\d+$/.test(port)) return null;
  const keyText = parts.join(' . ');
  const evidence: Evidence[] = [nftElementRef(state.table, set, keyText)];
  const base = { ip, port: Number(port), protocol: proto.toUpperCase(), evidence };
  if (value?.kind !== 'verdict') return null;
  if (value.verdict === 'drop' || (value.verdict === 'goto' && value.target === 'reject-chain')) {
    const outcome: FrontendOutcome = value.verdict === 'drop' ? 'drop' : 'reject';
    return { ...base, kind: nodePort ? 'nodePort' : 'clusterIP', ...serviceOfComment(comment), outcome, endpoints: [], affinitySeconds: null, problems: [] };
  }
  if ((value.verdict !== 'goto' && value.verdict !== 'jump') || !value.target) return null;
  const walkState: WalkState = { ...state, endpoints: [], problems: [], affinity: null };
  walk(walkState, value.target, 1, 0);
  const endpoints: readonly ProgrammedEndpoint[] = walkState.endpoints;
  const kind: FrontendKind = nodePort ? 'nodePort' : value.target.startsWith('external-') || value.target.startsWith('firewall-') ? 'externalIP' : 'clusterIP';
  return { ...base, kind, ...serviceOfChain(value.target), outcome: 'endpoints', endpoints, affinitySeconds: walkState.affinity, problems: walkState.problems };
}

/**
 * Every kube-proxy frontend of the nftables ruleset's `family kube-proxy` table (`ip` unless
 * told), see the module comment: `service-ips` then `service-nodeports` elements, then the
 * no-endpoint maps' elements for keys not already seen. Empty when the table is absent.
 */
export function readNftFrontends(ruleset: NftRuleset, family: 'ip' | 'ip6' = 'ip'): ProgrammedFrontend[] {
  const table = ruleset.tables.find((t) => t.family === family && t.name === 'kube-proxy');
  if (!table) return [];
  const state = { table, chains: new Map(table.chains.map((c) => [c.name, c])), sets: new Map(table.sets.map((s) => [s.name, s])) };
  const out: ProgrammedFrontend[] = [];
  const seen = new Map<string, number>();
  for (const name of ['service-ips', 'service-nodeports', 'no-endpoint-services', 'no-endpoint-nodeports']) {
    const set = state.sets.get(name);
    for (const el of set?.elements ?? []) {
      const f = elementFrontend(state, set!, el.key, el.value, el.comment);
      if (!f) continue;
      const k = `${f.ip}:${f.port}/${f.protocol}`;
      const at = seen.get(k);
      if (at === undefined) {
        seen.set(k, out.length);
        out.push(f);
        continue;
      }
      // An external frontend whose walk rewrites nothing for an outside client (eTP=Local, no
      // local endpoint): the no-endpoint map's verdict is what happens to it.
      const first = out[at]!;
      if (first.outcome === 'endpoints' && first.endpoints.length === 0 && f.outcome !== 'endpoints') {
        out[at] = { ...first, outcome: f.outcome, evidence: [...first.evidence, ...f.evidence] };
      }
    }
  }
  return out;
}

/**
 * Runs one iptables base chain for the packet, rule by rule, as ipt_do_table does:
 * `-j CHAIN` pushes a return point, `-g CHAIN` does not, `RETURN` (or the end of a user
 * chain) goes back, the end of a built-in chain applies its policy; ACCEPT, DROP,
 * REJECT and the NAT targets end the chain; MARK, LOG and rules without a target go on.
 *
 * Random load balancing (`-m statistic --mode random --probability P` runs, kube-proxy's
 * KUBE-SVC-* chains) is a branch point: every branch is listed with its effective
 * probability and the endpoint it DNATs to, and the walk follows the chosen one.
 *
 * Each evaluated rule becomes a step; for iptables-nft dumps whose nft JSON is known,
 * the step carries the nft rule handle (the kernel trace's key for the rule). Rules a
 * prefilter rules out (iptables-prefilter.ts: kube-proxy's `-d VIP/32 …` and `--dport N`
 * shapes) still become their "no match" step, with the words a full evaluation gives;
 * a walk with `indexed: false` evaluates every rule in full.
 */
import type { IptablesChain, IptablesRule, IptablesRuleset, IptablesTableName } from '../model/iptables.js';
import { findChain, findTargetOption } from '../model/iptables.js';
import type { NftChain, NftTable } from '../model/nftables.js';
import { formatRule } from '../parsers/iptables-format.js';
import { chooseBranch, endpointText, natVerdict, type ChainOutcome, type NatBinding, type WalkContext } from './context.js';
import { percent, rejectMeaning } from './describe.js';
import { chainEndBack, chainEndPolicy, condsThen, andThen } from './reasons.js';
import { phrase, stepSaid, type StepSaid } from '../text/step-said.js';
import { iptablesNftTwin, type HookedChainItem } from './hooks.js';
import { evalIptablesMatches, NO_CONDITIONS } from './iptables-match.js';
import { prefilterAt, prefilterReject } from './iptables-prefilter.js';
import { chainRuleAt, chainRuleCount } from '../model/iptables-facts.js';
import type { TraceBranch, XtablesBackend } from './types.js';
import { parseMarkMask, parseNatTarget } from './values.js';

type IptablesItem = Extract<HookedChainItem, { kind: 'iptables' }>;

interface Frame {
  readonly chain: IptablesChain;
  pos: number;
  readonly nft: NftChain | null;
  /** Whether the chain's rules are prefiltered (false when the walk runs without indexes). */
  readonly filtered: boolean;
  /** The chain's rule texts, by position (filled as rules are met). */
  readonly texts: (string | undefined)[];
}

const chainTexts = new WeakMap<IptablesChain, (string | undefined)[]>();

function frameOf(ctx: WalkContext, chain: IptablesChain, nft: NftChain | null): Frame {
  let texts = chainTexts.get(chain);
  if (!texts) {
    texts = new Array<string | undefined>(chainRuleCount(chain));
    chainTexts.set(chain, texts);
  }
  return { chain, pos: 0, nft, filtered: ctx.indexed, texts };
}

/** {@link iptablesRuleText} of the rule at `pos` of the frame's chain, kept by position. */
function textAt(frame: Frame, pos: number): string {
  return (frame.texts[pos] ??= iptablesRuleText(chainRuleAt(frame.chain, pos)!));
}

/** A random branch group being followed in a chain: which rule ends it, which was chosen. */
interface BranchGroup {
  readonly rules: readonly number[];
  readonly chosenRule: number | null;
  readonly branches: readonly TraceBranch[];
}

const ruleTexts = new WeakMap<IptablesRule, string>();

/** The text of a rule as `iptables-save` writes it, without counters (cached per rule). */
export function iptablesRuleText(rule: IptablesRule): string {
  let text = ruleTexts.get(rule);
  if (text === undefined) {
    text = formatRule(rule, rule.chain);
    ruleTexts.set(rule, text);
  }
  return text;
}

/** The backend of an iptables dump: `legacy` when its header says so, else nf_tables (iptables-nft). */
export function xtablesOf(ruleset: IptablesRuleset): XtablesBackend {
  return ruleset.generator?.backend === 'legacy' ? 'legacy' : 'nft';
}

function verdictOfTarget(rule: IptablesRule): string {
  const t = rule.target;
  if (t === null) return 'continue';
  if (t.kind === 'jump') return `jump ${t.name}`;
  if (t.kind === 'goto') return `goto ${t.name}`;
  return t.name.toLowerCase();
}

/**
 * Where a chain leads when it DNATs: the `--to-destination` of its first DNAT rule,
 * looking one jump deep (KUBE-SEP-* chains DNAT themselves). Null when it does not DNAT.
 */
function chainEndpoint(ruleset: IptablesRuleset, table: IptablesTableName, name: string, dport: number | null, depth = 0): string | null {
  const chain = findChain(ruleset, table, name);
  if (!chain || depth > 2) return null;
  for (const r of chain.rules) {
    const ep = ruleEndpoint(ruleset, table, r, dport, depth + 1);
    if (ep !== null) return ep;
  }
  return null;
}

function ruleEndpoint(ruleset: IptablesRuleset, table: IptablesTableName, rule: IptablesRule, dport: number | null, depth: number): string | null {
  const t = rule.target;
  if (t === null) return null;
  if (t.name === 'DNAT') {
    const nat = parseNatTarget(findTargetOption(rule, 'to-destination')?.values[0] ?? '');
    if (!nat || nat.addr === null) return null;
    return endpointText(nat.addr, nat.port ?? dport);
  }
  if ((t.kind === 'jump' || t.kind === 'goto') && t.name !== 'KUBE-MARK-MASQ') return chainEndpoint(ruleset, table, t.name, dport, depth);
  return null;
}

/** Computes the random branch group that starts at rule `start` (0-based) of `frame`. */
function branchGroup(ctx: WalkContext, item: IptablesItem, frame: Frame, start: number): BranchGroup {
  const rules = frame.chain.rules;
  const members: { rule: number; p: number | null }[] = [];
  for (let j = start; j < rules.length; j++) {
    const rule = rules[j]!;
    if (frame.filtered && prefilterReject(prefilterAt(frame.chain, j, rule), ctx.pkt) !== null) continue;
    const v = evalIptablesMatches(ctx, rule);
    if (v.kind === 'unsupported') break;
    if (v.kind === 'nomatch') continue;
    members.push({ rule: j, p: v.probability });
    if (v.probability === null) break; // the rule every packet left reaches
  }
  let remaining = 1;
  const raw = members.map((m) => {
    const p = m.p === null ? remaining : remaining * m.p;
    remaining -= p;
    const rule = rules[m.rule]!;
    const target = rule.target === null ? 'continue' : rule.target.name;
    return { rule: m.rule, p, target, endpoint: ruleEndpoint(item.ruleset, item.table, rule, ctx.pkt.dport, 0) };
  });
  if (remaining > 1e-9 && (members.length === 0 || members[members.length - 1]!.p !== null)) {
    raw.push({ rule: -1, p: remaining, target: 'continue (no branch taken)', endpoint: null });
  }
  const chosen = chooseBranch(ctx.branch, raw);
  const branches = raw.map((b, i) => ({
    index: i,
    probability: b.p,
    target: b.target,
    endpoint: b.endpoint,
    ruleIndex: b.rule < 0 ? null : b.rule + 1,
    chosen: i === chosen,
  }));
  return { rules: raw.map((b) => b.rule).filter((r) => r >= 0), chosenRule: raw[chosen]!.rule < 0 ? null : raw[chosen]!.rule, branches };
}

function natBinding(rule: IptablesRule): NatBinding | { unsupported: StepSaid } {
  const t = rule.target!;
  const text = `${t.name}${t.options.map((o) => ` --${o.name}${o.values.length ? ' ' + o.values.join(' ') : ''}`).join('')}`;
  const randomFully = t.options.some((o) => o.name === 'random-fully');
  if (t.name === 'MASQUERADE' || t.name === 'REDIRECT') {
    const ports = findTargetOption(rule, 'to-ports')?.values[0];
    let port: number | null = null;
    if (ports !== undefined) {
      const r = parseNatTarget(`:${ports}`);
      if (!r || r.portMax !== null) return { unsupported: stepSaid('nat-port-range', { target: t.name, ports }) };
      port = r.port;
    }
    return { type: t.name === 'MASQUERADE' ? 'masquerade' : 'redirect', addr: null, port, randomFully, text };
  }
  const option = t.name === 'DNAT' ? 'to-destination' : 'to-source';
  const value = findTargetOption(rule, option)?.values[0];
  const nat = value === undefined ? null : parseNatTarget(value);
  if (!nat) return { unsupported: stepSaid('nat-option-unreadable', { target: t.name, option }) };
  if (nat.addrMax !== null || nat.portMax !== null) return { unsupported: stepSaid('nat-range', { target: t.name, option, value: value ?? '' }) };
  return { type: t.name === 'DNAT' ? 'dnat' : 'snat', addr: nat.addr, port: nat.port, randomFully, text };
}

function applyMark(ctx: WalkContext, rule: IptablesRule): StepSaid | null {
  const o = rule.target!.options[0];
  if (!o || rule.target!.options.length !== 1) return null;
  const before = ctx.pkt.mark;
  const vm = parseMarkMask(o.values[0] ?? '');
  if (!vm) return null;
  const [v, m] = vm;
  let next: number;
  switch (o.name) {
    case 'set-xmark':
      next = ((before & ~m) ^ v) >>> 0;
      break;
    case 'set-mark':
      next = ((before & ~m) | v) >>> 0;
      break;
    case 'or-mark':
      next = (before | v) >>> 0;
      break;
    case 'and-mark':
      next = (before & v) >>> 0;
      break;
    case 'xor-mark':
      next = (before ^ v) >>> 0;
      break;
    default:
      return null;
  }
  ctx.pkt.mark = next;
  return stepSaid('mark-set', { from: `0x${before.toString(16)}`, to: `0x${next.toString(16)}` });
}

// Per walk input (the nft ruleset is part of it), per ruleset, per table.
const twinCache = new WeakMap<object, Map<IptablesRuleset, Map<string, ReturnType<typeof iptablesNftTwin>>>>();

function nftChainOf(ctx: WalkContext, item: IptablesItem, name: string): NftChain | null {
  let perInput = twinCache.get(ctx.input);
  if (!perInput) {
    perInput = new Map();
    twinCache.set(ctx.input, perInput);
  }
  let perRuleset = perInput.get(item.ruleset);
  if (!perRuleset) {
    perRuleset = new Map();
    perInput.set(item.ruleset, perRuleset);
  }
  if (!perRuleset.has(item.table)) perRuleset.set(item.table, iptablesNftTwin(item.ruleset, item.table, ctx.input.nft));
  const twin = perRuleset.get(item.table);
  return twin ? (twinChains(twin).get(name) ?? null) : null;
}

const twinChainIndex = new WeakMap<NftTable, Map<string, NftChain>>();

/** The chains of an nft twin table by name (the first of a name, as a scan finds it); built once per table. */
function twinChains(table: NftTable): Map<string, NftChain> {
  let byName = twinChainIndex.get(table);
  if (!byName) {
    byName = new Map();
    for (const c of table.chains) if (!byName.has(c.name)) byName.set(c.name, c);
    twinChainIndex.set(table, byName);
  }
  return byName;
}

function handleOf(frame: Frame, rule: IptablesRule): number | null {
  if (!frame.nft || frame.nft.rules.length !== chainRuleCount(frame.chain)) return null;
  return frame.nft.rules[rule.index - 1]?.handle ?? null;
}

/**
 * Runs the built-in chain of `item` (and every chain it jumps to) for the packet in
 * `ctx`, recording a step per rule. Returns how the chain ended; NAT targets record
 * their binding in `ctx.flow` and end with `accept`.
 */
export function runIptablesChain(ctx: WalkContext, item: IptablesItem): ChainOutcome {
  const base = item.chain;
  const stack: Frame[] = [frameOf(ctx, base, item.nftChain)];
  const groups = new Map<IptablesChain, BranchGroup>();
  const xtables = ctx.dualBackends ? { xtables: xtablesOf(item.ruleset) } : {};
  const common = { backend: 'iptables' as const, family: item.family, table: item.table, priority: item.priority, ...xtables };
  const loop = ctx.enterChain(base.name);
  if (loop !== null) return { kind: 'unsupported', said: loop };
  while (stack.length > 0) {
    if (!ctx.budgetLeft()) return { kind: 'unsupported', said: stepSaid('too-many-steps') };
    const frame = stack[stack.length - 1]!;
    const chain = frame.chain;
    // The chain's rules read one by one: a walk that leaves a 10,000-rule chain early parses only what it read.
    const rule = chainRuleAt(chain, frame.pos);
    if (rule === undefined) {
      if (stack.length === 1) {
        if (base.policy === null) {
          ctx.record({ ...common, kind: 'unsupported', chain: base.name, said: stepSaid('policy-not-captured', { chain: base.name }) });
          return { kind: 'unsupported', said: stepSaid('policy-unknown', { chain: base.name }) };
        }
        const verdict = base.policy === 'ACCEPT' ? 'accept' : 'drop';
        ctx.record({ ...common, kind: 'policy', chain: base.name, verdict, counters: base.counters, said: chainEndPolicy(base.name, chain !== base ? chain.name : null, base.policy) });
        return verdict === 'accept' ? { kind: 'accept' } : { kind: 'drop', said: stepSaid('policy-drop', { table: item.table, chain: base.name }) };
      }
      stack.pop();
      const back = stack[stack.length - 1]!;
      ctx.record({ ...common, kind: 'return', chain: chain.name, verdict: 'return', said: chainEndBack(chain.name, back.chain.name, back.pos, chainRuleCount(back.chain)) });
      continue;
    }
    const ruleNo = frame.pos;
    frame.pos++;
    // Most rules of a big chain cannot match: say so cheaply, with the words a full evaluation gives.
    const rejected = frame.filtered ? prefilterReject(prefilterAt(chain, ruleNo, rule), ctx.pkt) : null;
    if (rejected !== null) {
      ctx.recordMiss(common, chain.name, rule.index, handleOf(frame, rule), textAt(frame, ruleNo), rule.counters, rejected);
      continue;
    }
    const stepBase = { ...common, kind: 'rule' as const, chain: chain.name, ruleIndex: rule.index, handle: handleOf(frame, rule), ruleText: textAt(frame, ruleNo), counters: rule.counters };
    const m = evalIptablesMatches(ctx, rule);
    if (m.kind === 'unsupported') {
      ctx.record({ ...stepBase, kind: 'unsupported', said: stepSaid('unsupported', { what: phrase(m.reason) }) });
      return { kind: 'unsupported', said: stepSaid('rule-conditions', { conds: phrase(m.reason) }) };
    }
    if (m.kind === 'nomatch') {
      ctx.record({ ...stepBase, matched: false, said: stepSaid('rule-no-match', { conds: phrase(m.reason) }) });
      continue;
    }
    let branches: readonly TraceBranch[] | null = null;
    let said = stepSaid('rule-conditions', { conds: phrase(m.reason) });
    if (m.probability !== null) {
      let group = groups.get(chain);
      if (!group || !group.rules.includes(ruleNo)) {
        group = branchGroup(ctx, item, frame, ruleNo);
        groups.set(chain, group);
      }
      branches = group.branches;
      if (group.chosenRule !== ruleNo) {
        const chosen = group.branches.find((b) => b.chosen)!;
        ctx.record({ ...stepBase, matched: false, branches, said: stepSaid('random-not-taken', { p: percent(m.probability), i: chosen.index + 1, n: group.branches.length, to: chosen.endpoint ?? chosen.target }) });
        continue;
      }
      // The kernel's trace shows this rule's `statistic` match: say it was the random draw, not "no conditions".
      const chosen = group.branches.find((b) => b.chosen)!;
      const taken = stepSaid('random-taken', { i: chosen.index + 1, n: group.branches.length, p: percent(m.probability) });
      said = m.reason === NO_CONDITIONS ? taken : condsThen(m.reason, taken);
    } else {
      const group = groups.get(chain);
      if (group && group.chosenRule === ruleNo) {
        branches = group.branches;
        // The group's last rule has no draw of its own: every packet the others left reaches it.
        const last = stepSaid('random-last-branch', { n: group.branches.length });
        said = m.reason === NO_CONDITIONS ? last : condsThen(m.reason, last);
      }
    }
    const outcome = applyTarget(ctx, item, rule, stack, frame, { ...stepBase, said, branches });
    if (outcome) return outcome;
  }
  throw new Error('unreachable: the base frame always ends the loop');
}

type RuleStep = Parameters<WalkContext['record']>[0];

/** Applies the matched rule's target; returns an outcome when the base chain ends. */
function applyTarget(ctx: WalkContext, item: IptablesItem, rule: IptablesRule, stack: Frame[], frame: Frame, step: RuleStep): ChainOutcome | null {
  const t = rule.target;
  const matched = { ...step, matched: true };
  if (t === null) {
    ctx.record({ ...matched, verdict: 'continue', said: stepSaid('no-target', { a: step.said }) });
    return null;
  }
  if (t.kind === 'jump' || t.kind === 'goto') {
    const target = findChain(item.ruleset, item.table, t.name);
    if (!target) {
      ctx.record({ ...matched, kind: 'unsupported', verdict: verdictOfTarget(rule), said: stepSaid('jump-to-missing-chain', { how: t.kind, chain: t.name }) });
      return { kind: 'unsupported', said: stepSaid('chain-missing', { chain: t.name }) };
    }
    const loop = ctx.enterChain(t.name);
    if (loop !== null) {
      ctx.record({ ...matched, kind: 'unsupported', verdict: verdictOfTarget(rule), said: stepSaid('unsupported', { what: loop }) });
      return { kind: 'unsupported', said: loop };
    }
    ctx.record({ ...matched, verdict: verdictOfTarget(rule) });
    const next = frameOf(ctx, target, nftChainOf(ctx, item, target.name));
    if (t.kind === 'goto' && stack.length > 1) stack[stack.length - 1] = next;
    else {
      // goto from the built-in chain: no return point, its end falls to the policy.
      if (t.kind === 'goto') frame.pos = chainRuleCount(frame.chain);
      stack.push(next);
    }
    return null;
  }
  switch (t.name) {
    case 'ACCEPT':
      ctx.record({ ...matched, verdict: 'accept' });
      return { kind: 'accept' };
    case 'DROP':
      ctx.record({ ...matched, verdict: 'drop' });
      // kube-proxy's comment says why ("ns/name:port has no local endpoints" for eTP=Local): quote it.
      return { kind: 'drop', said: rule.comment ? stepSaid('rule-drop-comment', { table: item.table, chain: rule.chain, n: rule.index, comment: rule.comment }) : stepSaid('rule-drop', { table: item.table, chain: rule.chain, n: rule.index }) };
    case 'RETURN': {
      ctx.record({ ...matched, verdict: 'return' });
      frame.pos = chainRuleCount(frame.chain);
      return null;
    }
    case 'REJECT': {
      const how = findTargetOption(rule, 'reject-with')?.values[0] ?? (ctx.pkt.family === 'ipv6' ? 'icmp6-port-unreachable' : 'icmp-port-unreachable');
      ctx.record({ ...matched, verdict: 'reject', said: andThen(step.said, stepSaid('reject-with', { how })) });
      const at = { table: item.table, chain: rule.chain, n: rule.index, how, meaning: rejectMeaning(how) };
      return { kind: 'reject', said: rule.comment ? stepSaid('rule-reject-comment', { ...at, comment: rule.comment }) : stepSaid('rule-reject', at), rejectWith: how };
    }
    case 'DNAT':
    case 'SNAT':
    case 'MASQUERADE':
    case 'REDIRECT': {
      const b = natBinding(rule);
      if ('unsupported' in b) {
        ctx.record({ ...matched, kind: 'unsupported', said: stepSaid('unsupported', { what: b.unsupported }) });
        return { kind: 'unsupported', said: b.unsupported };
      }
      if (b.type === 'dnat' || b.type === 'redirect') ctx.flow.dstBinding = b;
      else ctx.flow.srcBinding = b;
      ctx.record({ ...matched, verdict: natVerdict(b), said: andThen(step.said, stepSaid('nat-binding', { binding: b.text })) });
      return { kind: 'accept' };
    }
    case 'MARK': {
      const change = applyMark(ctx, rule);
      if (change === null) {
        ctx.record({ ...matched, kind: 'unsupported', said: stepSaid('unsupported', { what: `MARK ${t.options.map((o) => `--${o.name} ${o.values.join(' ')}`).join(' ')}` }) });
        return { kind: 'unsupported', said: stepSaid('mark-option') };
      }
      ctx.record({ ...matched, verdict: 'continue', said: andThen(step.said, change) });
      return null;
    }
    case 'LOG':
    case 'NFLOG':
    case 'ULOG':
    case 'TRACE':
      ctx.record({ ...matched, verdict: 'continue', said: andThen(step.said, stepSaid('log-target', { target: t.name })) });
      return null;
    case 'NOTRACK':
      ctx.flow.tracked = 'untracked';
      ctx.pkt.ct = 'untracked';
      ctx.record({ ...matched, verdict: 'continue', said: andThen(step.said, stepSaid('notrack')) });
      return null;
    case 'CT':
      if (t.options.length === 1 && t.options[0]!.name === 'notrack') {
        ctx.flow.tracked = 'untracked';
        ctx.pkt.ct = 'untracked';
        ctx.record({ ...matched, verdict: 'continue', said: andThen(step.said, stepSaid('ct-notrack')) });
        return null;
      }
      break;
    default:
      break;
  }
  ctx.record({ ...matched, kind: 'unsupported', said: stepSaid('target-not-modelled', { target: t.name }) });
  return { kind: 'unsupported', said: stepSaid('target-unsupported', { target: t.name }) };
}

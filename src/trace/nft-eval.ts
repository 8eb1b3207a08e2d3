/**
 * Runs one nft base chain for the packet, rule by rule, as nft_do_chain does: the
 * statements of a rule run left to right, a failed match ends the rule, a verdict
 * (`accept`, `drop`, `jump`, `goto`, `return`, a vmap hit) ends it and acts; `jump`
 * pushes a return point, `goto` does not; the end of a regular chain returns; the end
 * of the base chain (or `return` in it) applies the chain's policy. NAT statements set
 * up a binding and accept; `reject` drops with an error to the sender.
 *
 * Sets and maps (named and anonymous, concatenations, intervals, prefixes) are looked
 * up in their listed elements. `numgen random mod N` in a vmap or a dnat map is a
 * branch point: every element is a branch with its probability (its share of 0…N-1).
 *
 * Source: net/netfilter/nf_tables_core.c `nft_do_chain`, nft_lookup.c, nft_numgen.c,
 * nft_nat.c (`nft_nat_eval` returns NF_ACCEPT), nft_reject.c (NF_DROP).
 */
import type { NftChain, NftElement, NftExpr, NftMatchStmt, NftNatStmt, NftRule, NftSet, NftStatement, NftTable, NftVerdict } from '../model/nftables.js';
import { findChain, findSet } from '../model/nftables.js';
import { formatExpr } from '../parsers/nft-format-expr.js';
import { exprType } from '../parsers/nft-types.js';
import { chooseBranch, endpointText, natVerdict, type ChainOutcome, type NatBinding, type WalkContext } from './context.js';
import { nftRejectWith, rejectMeaning } from './describe.js';
import { NO_CONDITIONS } from './iptables-match.js';
import { chainEndBack, chainEndPolicy, condsThen } from './reasons.js';
import { phrase, stepSaid } from '../text/step-said.js';
import type { HookedChainItem } from './hooks.js';
import { constant, elementTest, evalNftExpr, exactKeyOf, isStop, keyTypesOf, showValue, valueKey, valueTest, type NftEvalStop, type NftValue, type ValueTest } from './nft-values.js';
import type { TraceBranch } from './types.js';
import { NFT_NAMES } from '../analysis/kubeproxy-names.js';

type NftItem = Extract<HookedChainItem, { kind: 'nft' }>;

/** What one statement did. */
type StmtResult =
  | { readonly kind: 'held'; readonly text: string }
  | { readonly kind: 'failed'; readonly text: string }
  | { readonly kind: 'verdict'; readonly verdict: NftVerdict; readonly text: string; readonly branches?: readonly TraceBranch[]; readonly why?: string; readonly element?: { readonly set: string; readonly index: number } }
  | { readonly kind: 'nat'; readonly binding: NatBinding; readonly text: string; readonly branches?: readonly TraceBranch[] }
  | { readonly kind: 'reject'; readonly text: string; readonly rejectWith: string }
  | { readonly kind: 'unsupported'; readonly text: string };

interface Frame {
  chain: NftChain;
  pos: number;
  /** Why the walk came here: the vmap element (with its comment) whose `goto` made this frame, quoted by a drop or reject in it. */
  why?: string;
}

function verdictText(v: NftVerdict): string {
  return v.target ? `${v.verdict} ${v.target}` : v.verdict;
}

function elementsOf(table: NftTable, data: NftExpr): { elements: readonly NftElement[]; set: NftSet | null } | NftEvalStop {
  if (data.kind === 'setref') {
    const set = findSet(table, data.name);
    if (!set) return { stop: 'unsupported', why: `set @${data.name} is not in table ${table.family} ${table.name}` };
    return { elements: set.elements, set };
  }
  if (data.kind === 'set') return { elements: data.elements, set: null };
  return { stop: 'unsupported', why: `lookup in a ${data.kind}` };
}

/** Elements compiled for lookups: exact keys in a hash map, prefixes/ranges/wildcards scanned. */
interface CompiledElements {
  readonly exact: Map<string, NftElement>;
  readonly scanned: readonly { readonly el: NftElement; readonly test: ValueTest }[];
}

// Per element list and key types: sets and maps of thousands of Services are compiled once.
const compiled = new WeakMap<readonly NftElement[], Map<string, CompiledElements | NftEvalStop>>();

function compile(elements: readonly NftElement[], types: readonly (string | undefined)[]): CompiledElements | NftEvalStop {
  const key = types.join(',');
  let perList = compiled.get(elements);
  if (!perList) {
    perList = new Map();
    compiled.set(elements, perList);
  }
  const hit = perList.get(key);
  if (hit) return hit;
  const exact = new Map<string, NftElement>();
  const scanned: { el: NftElement; test: ValueTest }[] = [];
  let result: CompiledElements | NftEvalStop = { exact, scanned };
  for (const el of elements) {
    const k = exactKeyOf(el, types);
    if (k !== null) {
      if (!exact.has(k)) exact.set(k, el);
      continue;
    }
    const test = elementTest(el, types);
    if (isStop(test)) {
      result = test;
      break;
    }
    scanned.push({ el, test });
  }
  perList.set(key, result);
  return result;
}

/** Finds the element whose key matches `value` (nft sets never overlap); `unsupported` when an element cannot be read. */
function lookup(elements: readonly NftElement[], value: NftValue, types: readonly (string | undefined)[]): NftElement | null | NftEvalStop {
  const c = compile(elements, types);
  if (isStop(c)) return c;
  const exact = c.exact.get(valueKey(value));
  if (exact) return exact;
  for (const { el, test } of c.scanned) if (test(value)) return el;
  return null;
}

function setName(e: NftExpr): string {
  return e.kind === 'setref' ? `@${e.name}` : 'the anonymous set';
}

function evalMatch(ctx: WalkContext, table: NftTable, s: NftMatchStmt): StmtResult {
  const left = evalNftExpr(ctx, s.left);
  const what = formatExpr(s.left);
  if (isStop(left)) return left.stop === 'absent' ? { kind: 'failed', text: left.why } : { kind: 'unsupported', text: left.why };
  const types = keyTypesOf(s.left);
  const shown = s.left.kind === 'binop' ? `(${what}) = ${showValue(left, s.left)}` : `${what} ${showValue(left, s.left)}`;
  const right = s.right;
  if (right.kind === 'setref' || right.kind === 'set') {
    if (s.op !== '==' && s.op !== '!=') return { kind: 'unsupported', text: `${s.op} with a set` };
    const els = elementsOf(table, right);
    if (isStop(els)) return { kind: 'unsupported', text: els.why };
    const keyTypes = els.set && types.every((t) => t === undefined) ? els.set.keyTypes : types;
    const hit = lookup(els.elements, left, keyTypes);
    if (isStop(hit)) return { kind: 'unsupported', text: hit.why };
    const member = hit !== null;
    const ok = s.op === '!=' ? !member : member;
    return { kind: ok ? 'held' : 'failed', text: `${shown} ${member ? 'is' : 'is not'} in ${setName(right)}` };
  }
  const wanted = formatExpr(right, exprType(s.left));
  if (s.op === 'in') {
    const bits = constant(right, types[0]);
    if (isStop(bits)) return { kind: 'unsupported', text: bits.why };
    if (left.t !== 'int' || bits.t !== 'int') return { kind: 'unsupported', text: 'flag test on non-integers' };
    const ok = (left.v & bits.v) !== 0n;
    return { kind: ok ? 'held' : 'failed', text: `${shown} ${ok ? 'is one of' : 'is none of'} ${wanted}` };
  }
  if (s.op === '==' || s.op === '!=') {
    const tests = right.kind === 'list' ? right.items.map((i) => valueTest(i, types[0])) : [valueTest(right, types[0])];
    const stop = tests.find(isStop);
    if (stop) return { kind: 'unsupported', text: stop.why };
    const eq = tests.some((t) => !isStop(t) && t(left));
    const ok = s.op === '==' ? eq : !eq;
    const relation = right.kind === 'prefix' || right.kind === 'range' ? (eq ? 'is in' : 'is not in') : eq ? '==' : '!=';
    return { kind: ok ? 'held' : 'failed', text: `${shown} ${relation} ${wanted}` };
  }
  const c = constant(right, types[0]);
  if (isStop(c)) return { kind: 'unsupported', text: c.why };
  if (left.t !== 'int' || c.t !== 'int') return { kind: 'unsupported', text: `${s.op} on non-integers` };
  const ok = s.op === '<' ? left.v < c.v : s.op === '>' ? left.v > c.v : s.op === '<=' ? left.v <= c.v : left.v >= c.v;
  return { kind: ok ? 'held' : 'failed', text: `${shown} ${ok ? s.op : `is not ${s.op}`} ${wanted}` };
}

/** Where a chain DNATs to (its first `dnat to ADDR[:PORT]`), following jumps one deep. */
function chainEndpoint(table: NftTable, name: string, dport: number | null, depth = 0): string | null {
  const chain = findChain(table, name);
  if (!chain || depth > 2) return null;
  for (const rule of chain.rules) {
    for (const s of rule.statements) {
      if (s.kind === 'nat' && s.type === 'dnat' && s.addr?.kind === 'value') {
        const port = s.port?.kind === 'value' && typeof s.port.value === 'number' ? s.port.value : dport;
        return endpointText(String(s.addr.value), port);
      }
      if (s.kind === 'verdict' && (s.verdict === 'jump' || s.verdict === 'goto') && s.target) {
        const ep = chainEndpoint(table, s.target, dport, depth + 1);
        if (ep !== null) return ep;
      }
    }
  }
  return null;
}

/** The branches of `numgen random mod N [offset K]` looked up in `elements`. */
function numgenBranches(
  ctx: WalkContext,
  key: Extract<NftExpr, { kind: 'numgen' }>,
  elements: readonly NftElement[],
  endpointOf: (el: NftElement) => string | null,
  targetOf: (el: NftElement) => string,
): { branches: TraceBranch[]; chosen: NftElement | null } | NftEvalStop {
  if (key.mode !== 'random') return { stop: 'unsupported', why: 'numgen inc: depends on packets seen before' };
  const counts = new Map<NftElement | null, number>();
  for (let n = key.offset; n < key.offset + key.mod; n++) {
    const hit = lookup(elements, { t: 'int', v: BigInt(n) }, ['integer']);
    if (isStop(hit)) return hit;
    counts.set(hit, (counts.get(hit) ?? 0) + 1);
  }
  const entries = [...counts.entries()].sort(([a], [b]) => (a === null ? 1 : b === null ? -1 : elements.indexOf(a) - elements.indexOf(b)));
  const raw = entries.map(([el, count]) => ({
    el,
    probability: count / key.mod,
    endpoint: el === null ? null : endpointOf(el),
    target: el === null ? 'no element (the rule does not match)' : targetOf(el),
  }));
  const chosen = chooseBranch(ctx.branch, raw);
  const branches = raw.map((b, i) => ({ index: i, probability: b.probability, target: b.target, endpoint: b.endpoint, ruleIndex: null, chosen: i === chosen }));
  return { branches, chosen: raw[chosen]!.el };
}

function evalVmap(ctx: WalkContext, table: NftTable, s: Extract<NftStatement, { kind: 'vmap' }>): StmtResult {
  const els = elementsOf(table, s.data);
  if (isStop(els)) return { kind: 'unsupported', text: els.why };
  if (s.key.kind === 'numgen') {
    const targetOf = (el: NftElement) => (el.value?.kind === 'verdict' ? verdictText(el.value) : 'a non-verdict value');
    const endpointOf = (el: NftElement) => (el.value?.kind === 'verdict' && el.value.target ? chainEndpoint(table, el.value.target, ctx.pkt.dport) : null);
    const r = numgenBranches(ctx, s.key, els.elements, endpointOf, targetOf);
    if (isStop(r)) return { kind: 'unsupported', text: r.why };
    const chosen = r.branches.find((b) => b.chosen)!;
    if (r.chosen === null || r.chosen.value?.kind !== 'verdict') return { kind: 'failed', text: `numgen random mod ${s.key.mod}: the chosen number has no element` };
    return { kind: 'verdict', verdict: r.chosen.value, branches: r.branches, text: `numgen random mod ${s.key.mod}: branch ${chosen.index + 1} of ${r.branches.length} (probability ${(chosen.probability * 100).toFixed(1)}%)` };
  }
  const key = evalNftExpr(ctx, s.key);
  if (isStop(key)) return key.stop === 'absent' ? { kind: 'failed', text: key.why } : { kind: 'unsupported', text: key.why };
  const types = keyTypesOf(s.key);
  const keyTypes = els.set && types.every((t) => t === undefined) ? els.set.keyTypes : types;
  const hit = lookup(els.elements, key, keyTypes);
  if (isStop(hit)) return { kind: 'unsupported', text: hit.why };
  const shown = `${formatExpr(s.key)} ${showValue(key, s.key)}`;
  if (hit === null) return { kind: 'failed', text: `${shown} is not in ${setName(s.data)}` };
  if (hit.value?.kind !== 'verdict') return { kind: 'unsupported', text: `vmap element without a verdict in ${setName(s.data)}` };
  const why = hit.comment ? `"${hit.comment}" in ${setName(s.data)}${noEndpointMeaning(table, s.data, hit.value)}` : undefined;
  // A named map's element is a row of the Rules pane (Enter on the step opens it).
  const at = els.set ? els.elements.indexOf(hit) : -1;
  const element = els.set && at >= 0 ? { set: els.set.name, index: at } : undefined;
  return { kind: 'verdict', verdict: hit.value, text: `${shown} is in ${setName(s.data)}${hit.comment ? ` ("${hit.comment}")` : ''}`, ...(why ? { why } : {}), ...(element ? { element } : {}) };
}

/**
 * What an element of kube-proxy's `no-endpoint-services` / `no-endpoint-nodeports` maps
 * means (kube-proxy pkg/proxy/nftables/proxier.go, syncProxyRules): `goto reject-chain`
 * when the Service has no endpoints at all; `drop` when its traffic policy (internal for
 * a ClusterIP, external for the other frontends) is Local and no endpoint is on this node.
 * The element's comment is only the Service port's name, so the meaning is said here; ''
 * for any other map or table.
 */
function noEndpointMeaning(table: NftTable, data: NftExpr, v: NftVerdict): string {
  if (table.name !== NFT_NAMES.table || data.kind !== 'setref') return '';
  if (data.name !== NFT_NAMES.noEndpointServices && data.name !== NFT_NAMES.noEndpointNodePorts) return '';
  if (v.verdict === 'drop') return ': has no local endpoints (traffic policy Local)';
  if (v.verdict === 'goto' && v.target === NFT_NAMES.rejectChain) return ': has no endpoints';
  return '';
}

function natValueText(v: NftValue, e: NftExpr | undefined): string {
  return showValue(v, e);
}

function evalNat(ctx: WalkContext, table: NftTable, s: NftNatStmt): StmtResult {
  const randomFully = s.flags.includes('fully-random');
  let addr: string | null = null;
  let port: number | null = null;
  let branches: TraceBranch[] | undefined;
  if (s.port) {
    if (s.port.kind !== 'value' || typeof s.port.value !== 'number') return { kind: 'unsupported', text: `${s.type} port ${s.port.kind}: not a single port` };
    port = s.port.value;
  }
  if (s.addr) {
    const a = s.addr;
    if (a.kind === 'value') addr = String(a.value);
    else if (a.kind === 'map') {
      const els = elementsOf(table, a.data);
      if (isStop(els)) return { kind: 'unsupported', text: els.why };
      let el: NftElement | null;
      if (a.key.kind === 'numgen') {
        const show = (x: NftElement) => (x.value?.kind === 'value' ? String(x.value.value) : x.value?.kind ?? '?');
        const r = numgenBranches(ctx, a.key, els.elements, (x) => (x.value?.kind === 'value' ? endpointText(String(x.value.value), port ?? ctx.pkt.dport) : null), show);
        if (isStop(r)) return { kind: 'unsupported', text: r.why };
        branches = r.branches;
        el = r.chosen;
      } else {
        const key = evalNftExpr(ctx, a.key);
        if (isStop(key)) return { kind: key.stop === 'absent' ? 'failed' : 'unsupported', text: key.why };
        const hit = lookup(els.elements, key, keyTypesOf(a.key));
        if (isStop(hit)) return { kind: 'unsupported', text: hit.why };
        el = hit;
      }
      if (el === null) return { kind: 'failed', text: `${s.type}: no map element for this packet (the rule ends, nothing rewritten)` };
      const v = el.value;
      if (v?.kind === 'value') addr = String(v.value);
      else if (v?.kind === 'concat' && v.items.length === 2 && v.items[0]!.kind === 'value' && v.items[1]!.kind === 'value') {
        addr = String(v.items[0].value);
        port = Number(v.items[1].value);
      } else return { kind: 'unsupported', text: `${s.type} map value of kind ${v?.kind ?? 'none'}` };
    } else {
      const v = evalNftExpr(ctx, a);
      if (isStop(v)) return { kind: 'unsupported', text: v.why };
      addr = natValueText(v, a);
    }
  }
  if ((s.type === 'dnat' || s.type === 'snat') && addr === null && port === null) return { kind: 'unsupported', text: `${s.type} without address` };
  const text = `${s.type}${addr !== null ? ` to ${endpointText(addr, port)}` : port !== null ? ` to :${port}` : ''}${s.flags.length ? ` ${s.flags.join(',')}` : ''}`;
  const binding: NatBinding = { type: s.type, addr, port, randomFully, text };
  return { kind: 'nat', binding, text, ...(branches ? { branches } : {}) };
}

function evalMangle(ctx: WalkContext, s: Extract<NftStatement, { kind: 'mangle' }>): StmtResult {
  const isMark = (e: NftExpr) => (e.kind === 'meta' && e.key === 'mark') || (e.kind === 'ct' && e.key === 'mark' && e.dir === undefined);
  if (!isMark(s.key)) return { kind: 'unsupported', text: `setting ${s.key.kind === 'meta' ? `meta ${s.key.key}` : s.key.kind} is not modelled` };
  const v = evalNftExpr(ctx, s.value);
  if (isStop(v)) return { kind: 'unsupported', text: v.why };
  if (v.t !== 'int') return { kind: 'unsupported', text: 'mark from a non-integer' };
  const next = Number(v.v & 0xffffffffn) >>> 0;
  if (s.key.kind === 'meta') {
    const before = ctx.pkt.mark;
    ctx.pkt.mark = next;
    return { kind: 'held', text: `mark 0x${before.toString(16)} → 0x${next.toString(16)}` };
  }
  const before = ctx.flow.ctMark;
  ctx.flow.ctMark = next;
  return { kind: 'held', text: `ct mark 0x${before.toString(16)} → 0x${next.toString(16)}` };
}

function evalStatement(ctx: WalkContext, table: NftTable, s: NftStatement): StmtResult {
  switch (s.kind) {
    case 'match':
      return evalMatch(ctx, table, s);
    case 'vmap':
      return evalVmap(ctx, table, s);
    case 'verdict':
      return { kind: 'verdict', verdict: s, text: verdictText(s) };
    case 'nat':
      return evalNat(ctx, table, s);
    case 'reject':
      return { kind: 'reject', text: `reject${s.type ? ` with ${s.type}${s.code ? ` ${s.code}` : ''}` : ''}`, rejectWith: nftRejectWith(s, ctx.pkt.family) };
    case 'mangle':
      return evalMangle(ctx, s);
    case 'counter':
      return { kind: 'held', text: '' };
    case 'log':
      return { kind: 'held', text: 'logged' };
    case 'notrack':
      ctx.flow.tracked = 'untracked';
      ctx.pkt.ct = 'untracked';
      return { kind: 'held', text: 'notrack: conntrack will ignore this packet' };
    case 'set-update':
      return { kind: 'held', text: `${s.op} @${s.set}: the set learns this packet` };
    case 'limit':
      return { kind: 'unsupported', text: 'limit: depends on the rate of earlier packets' };
    case 'xt':
      return { kind: 'unsupported', text: `${s.raw}: an iptables-nft expression outside the iptables dump` };
    case 'unknown':
      return { kind: 'unsupported', text: `statement ${s.raw}` };
  }
}

/**
 * Runs the base chain of `item` (and the chains it jumps to) for the packet in `ctx`,
 * recording a step per rule. NAT statements record their binding in `ctx.flow`.
 */
export function runNftChain(ctx: WalkContext, item: NftItem): ChainOutcome {
  const { table, base } = item;
  const stack: Frame[] = [{ chain: item.chain, pos: 0 }];
  const common = { backend: 'nft' as const, family: table.family, table: table.name, priority: item.priority };
  const loop = ctx.enterChain(item.chain.name);
  if (loop !== null) return { kind: 'unsupported', said: loop };
  while (stack.length > 0) {
    if (!ctx.budgetLeft()) return { kind: 'unsupported', said: stepSaid('too-many-steps') };
    const frame = stack[stack.length - 1]!;
    if (frame.pos >= frame.chain.rules.length) {
      if (stack.length === 1) {
        ctx.record({ ...common, kind: 'policy', chain: item.chain.name, verdict: base.policy, said: chainEndPolicy(item.chain.name, frame.chain !== item.chain ? frame.chain.name : null, base.policy) });
        return base.policy === 'accept' ? { kind: 'accept' } : { kind: 'drop', said: stepSaid('nft-policy-drop', { table: `${table.family} ${table.name}`, chain: item.chain.name }) };
      }
      stack.pop();
      const back = stack[stack.length - 1]!;
      ctx.record({ ...common, kind: 'return', chain: frame.chain.name, verdict: 'return', said: chainEndBack(frame.chain.name, back.chain.name, back.pos, back.chain.rules.length) });
      continue;
    }
    const rule = frame.chain.rules[frame.pos]!;
    frame.pos++;
    const outcome = runRule(ctx, item, stack, frame, rule, { ...common, chain: frame.chain.name, ruleIndex: frame.pos, handle: rule.handle ?? null, ruleText: rule.raw, counters: rule.counters ?? null });
    if (outcome) return outcome;
  }
  throw new Error('unreachable: the base frame always ends the loop');
}

type RuleStep = Omit<Parameters<WalkContext['record']>[0], 'kind' | 'said'>;

function runRule(ctx: WalkContext, item: NftItem, stack: Frame[], frame: Frame, rule: NftRule, step: RuleStep): ChainOutcome | null {
  const held: string[] = [];
  const conds = (last?: string) => stepSaid('rule-conditions', { conds: phrase([...held, ...(last ? [last] : [])].filter((t) => t !== '').join('; ') || NO_CONDITIONS) });
  for (const s of rule.statements) {
    const r = evalStatement(ctx, item.table, s);
    switch (r.kind) {
      case 'held':
        held.push(r.text);
        continue;
      case 'failed':
        ctx.record({ ...step, kind: 'rule', matched: false, said: stepSaid('rule-no-match', { conds: phrase(r.text) }) });
        return null;
      case 'unsupported':
        ctx.record({ ...step, kind: 'unsupported', said: stepSaid('unsupported', { what: phrase(r.text) }) });
        return { kind: 'unsupported', said: stepSaid('rule-conditions', { conds: phrase(r.text) }) };
      case 'reject':
        ctx.record({ ...step, kind: 'rule', matched: true, verdict: 'reject', said: conds(r.text) });
        // Reached by a quoted map element (kube-proxy's reject-chain): say which Service and why, as the iptables walk quotes its REJECT's comment.
        const at = { table: `${item.table.family} ${item.table.name}`, chain: frame.chain.name, what: phrase(r.text), meaning: rejectMeaning(r.rejectWith) };
        return { kind: 'reject', said: frame.why ? stepSaid('nft-reject-why', { ...at, why: frame.why }) : stepSaid('nft-reject', at), rejectWith: r.rejectWith };
      case 'nat': {
        if (r.binding.type === 'dnat' || r.binding.type === 'redirect') ctx.flow.dstBinding = r.binding;
        else ctx.flow.srcBinding = r.binding;
        ctx.record({ ...step, kind: 'rule', matched: true, verdict: natVerdict(r.binding), branches: r.branches ?? null, said: held.some((t) => t !== '') ? condsThen(held.filter((t) => t !== '').join('; '), stepSaid('nat-binding', { binding: r.text })) : stepSaid('nat-binding', { binding: r.text }) });
        return { kind: 'accept' };
      }
      case 'verdict':
        ctx.record({ ...step, kind: 'rule', matched: true, verdict: verdictText(r.verdict), branches: r.branches ?? null, said: conds(r.text), ...(r.element ? { element: r.element } : {}) });
        return applyVerdict(ctx, item, stack, frame, r.verdict, r.why);
    }
  }
  ctx.record({ ...step, kind: 'rule', matched: true, verdict: 'continue', said: conds() });
  return null;
}

/**
 * Acts on a verdict in `frame`. `why`: the quoted map element that gave it (a vmap hit with
 * a comment): a drop says it, and a jump or goto hands it to the chain it enters.
 */
function applyVerdict(ctx: WalkContext, item: NftItem, stack: Frame[], frame: Frame, v: NftVerdict, why?: string): ChainOutcome | null {
  switch (v.verdict) {
    case 'accept':
      return { kind: 'accept' };
    case 'drop':
      // kube-proxy's eTP=Local drop is a map element: quote it, as the iptables walk quotes its DROP's comment (kubernetes#66354).
      return { kind: 'drop', said: stepSaid(why ? 'nft-drop-why' : 'nft-drop', { table: `${item.table.family} ${item.table.name}`, chain: frame.chain.name, why: why ?? '' }) };
    case 'continue':
      return null;
    case 'return':
      frame.pos = frame.chain.rules.length;
      return null;
    case 'jump':
    case 'goto': {
      const target = v.target === undefined ? undefined : findChain(item.table, v.target);
      if (!target) {
        ctx.record({ backend: 'nft', family: item.table.family, table: item.table.name, chain: frame.chain.name, kind: 'unsupported', said: stepSaid('jump-to-missing-chain', { how: v.verdict, chain: v.target ?? '?' }) });
        return { kind: 'unsupported', said: stepSaid('chain-missing', { chain: v.target ?? '?' }) };
      }
      const loop = ctx.enterChain(target.name);
      if (loop !== null) {
        ctx.record({ backend: 'nft', family: item.table.family, table: item.table.name, chain: frame.chain.name, kind: 'unsupported', said: stepSaid('unsupported', { what: loop }) });
        return { kind: 'unsupported', said: loop };
      }
      const next: Frame = { chain: target, pos: 0, ...(why ? { why } : {}) };
      if (v.verdict === 'goto' && stack.length > 1) stack[stack.length - 1] = next;
      else {
        if (v.verdict === 'goto') frame.pos = frame.chain.rules.length;
        stack.push(next);
      }
      return null;
    }
  }
}

/**
 * The walk's moving parts shared by the engine and both evaluators: the packet as it
 * changes, the flow's conntrack facts, NAT bindings set up along the way, the branch
 * choice for random rules, and the recorder that turns each decision into a
 * {@link TraceStep}. Nothing here reads the UI; nothing here does I/O.
 */
import { BugError, said, UserError } from '../errors.js';
import type { NetfilterHook } from '../model/iptables.js';
import type { TraceInput } from './input.js';
import type { PacketFamily, TcpFlag, TraceProtocol } from './packet.js';
import type { NetView } from './routing.js';
import type { CtStateName, PacketHeader, StepBackend, StepCounters, StepKind, TraceBranch, TraceStep, XtablesBackend } from './types.js';
import { joinHostPort } from '../net/address.js';
import { phrase, stepSaid, stepSaidEn, type StepSaid } from '../text/step-said.js';

/** The packet during the walk (mutable copy of a {@link PacketHeader}). */
export class WalkPacket {
  family: PacketFamily;
  proto: TraceProtocol;
  src: string;
  dst: string;
  sport: number | null;
  dport: number | null;
  icmpType: number | null;
  icmpCode: number | null;
  icmpId: number | null;
  tcpFlags: readonly TcpFlag[];
  mark: number;
  iif: string | null;
  oif: string | null;
  ct: CtStateName;
  randomSport: boolean;

  constructor(h: PacketHeader) {
    this.family = h.family;
    this.proto = h.proto;
    this.src = h.src;
    this.dst = h.dst;
    this.sport = h.sport;
    this.dport = h.dport;
    this.icmpType = h.icmpType;
    this.icmpCode = h.icmpCode;
    this.icmpId = h.icmpId;
    this.tcpFlags = h.tcpFlags;
    this.mark = h.mark;
    this.iif = h.iif;
    this.oif = h.oif;
    this.ct = h.ct;
    this.randomSport = h.randomSport;
  }

  /** A frozen copy for a step. */
  header(): PacketHeader {
    return {
      family: this.family,
      proto: this.proto,
      src: this.src,
      dst: this.dst,
      sport: this.sport,
      dport: this.dport,
      icmpType: this.icmpType,
      icmpCode: this.icmpCode,
      icmpId: this.icmpId,
      tcpFlags: this.tcpFlags,
      mark: this.mark,
      iif: this.iif,
      oif: this.oif,
      ct: this.ct,
      randomSport: this.randomSport,
    };
  }

  /** `IP:PORT` (IPv6 in brackets) of the destination, or the bare address for ICMP. */
  dstEndpoint(): string {
    return endpointText(this.dst, this.dport);
  }
}

/**
 * `IP:PORT` with IPv6 in brackets (RFC 3986 host syntax); the bare address when there is no
 * port. `port` may be a word for a port not known (`<random>`).
 */
export function endpointText(addr: string, port: number | string | null): string {
  if (port === null) return addr;
  return joinHostPort(addr, port);
}

/**
 * A NAT binding requested by a rule: `dnat`/`redirect` rewrite the destination,
 * `snat`/`masquerade` the source. `addr` null: masquerade (source chosen from the
 * output interface) or a port-only rewrite; `port` null: port unchanged;
 * `randomFully`: the source port is chosen at random (`--random-fully`, `fully-random`).
 */
export interface NatBinding {
  readonly type: 'dnat' | 'snat' | 'masquerade' | 'redirect';
  readonly addr: string | null;
  readonly port: number | null;
  readonly randomFully: boolean;
  /** The rule's words for it (`DNAT --to-destination 10.244.0.23:8080`, `dnat to …`). */
  readonly text: string;
}

/**
 * A NAT rule's verdict as the step engine shows it: what the rule binds — `DNAT 10.244.0.23:8080`,
 * `SNAT 192.168.49.2`, `MASQUERADE`, `REDIRECT :8080` (iptables-extensions target names, for the
 * nft statements too). The kernel's own verdict for such a rule is NF_ACCEPT (`nft monitor trace`
 * prints `verdict accept`); {@link isNatVerdict} lets the kernel-trace check map it back.
 */
export function natVerdict(b: NatBinding): string {
  const to = b.addr !== null ? endpointText(b.addr, b.port) : b.port !== null ? `:${b.port}` : '';
  return `${b.type.toUpperCase()}${to ? ` ${to}` : ''}`;
}

/** True for a verdict {@link natVerdict} wrote. */
export function isNatVerdict(verdict: string): boolean {
  return /^(?:DNAT|SNAT|MASQUERADE|REDIRECT)(?: |$)/.test(verdict);
}

/** Conntrack facts of the packet's flow that rules can test (`ct status`, `--ctstate DNAT`). */
export interface FlowFacts {
  /** Set by the conntrack station; `untracked` after NOTRACK / `notrack`. */
  tracked: 'not-yet' | 'new' | 'known' | 'untracked';
  direction: 'original' | 'reply' | null;
  seenReply: boolean;
  assured: boolean;
  confirmed: boolean;
  dnat: boolean;
  snat: boolean;
  ctMark: number;
  /** Bindings requested by the nat chains now running (new flows). */
  dstBinding: NatBinding | null;
  srcBinding: NatBinding | null;
  /** The NAT station of that manip type has run for the flow (binding set, maybe a null one). */
  dstNatDone: boolean;
  srcNatDone: boolean;
}

/** How to pick among the outcomes of a random rule. */
export type BranchChoice =
  | { readonly kind: 'first' }
  | { readonly kind: 'index'; readonly index: number }
  | { readonly kind: 'endpoint'; readonly endpoint: string };

/** What a chain run ended with, for the hook that ran it. */
export type ChainOutcome =
  | { readonly kind: 'accept' }
  | { readonly kind: 'drop'; readonly said: StepSaid }
  | { readonly kind: 'reject'; readonly said: StepSaid; readonly rejectWith: string }
  | { readonly kind: 'unsupported'; readonly said: StepSaid };

/** Fields of a step the recorder does not fill itself. */
export interface StepFields {
  readonly kind: StepKind;
  readonly backend: StepBackend;
  readonly family?: string | null;
  readonly table?: string | null;
  readonly chain?: string | null;
  readonly priority?: number | null;
  readonly ruleIndex?: number | null;
  readonly handle?: number | null;
  readonly ruleText?: string | null;
  readonly matched?: boolean | null;
  readonly verdict?: string | null;
  /** Why, as a key of src/text/messages/steps.ts; the step's English `reason` is rendered from it. */
  readonly said: StepSaid;
  readonly counters?: StepCounters | null;
  readonly branches?: readonly TraceBranch[] | null;
  readonly xtables?: XtablesBackend;
  readonly element?: TraceStep['element'];
}

/** Where a chain's rule steps happen: backend, family, table, priority (fields of {@link StepFields}). */
export interface RuleWhere {
  readonly backend: StepBackend;
  readonly family: string;
  readonly table: string;
  readonly priority: number;
  readonly xtables?: XtablesBackend;
}

/**
 * Chain entries one walk may make before it is stopped as a jump loop: every base chain
 * run, `-j`/`-g`, nft `jump`/`goto`. A walk that enters no chain again only moves forward
 * through finite rule lists, so only repeated entries can loop; rule counts do not matter
 * (a 25,000-Service KUBE-SERVICES is one entry).
 */
export const MAX_CHAIN_ENTRIES = 10_000;

/** Steps one walk may record at most: a safety net behind {@link MAX_CHAIN_ENTRIES}. */
export const MAX_STEPS = 5_000_000;

/** Everything a walk carries from hook to hook. */
export class WalkContext {
  readonly steps: TraceStep[] = [];
  readonly notes: string[] = [];
  hook: NetfilterHook | null = null;
  /** Chains entered so far (see {@link MAX_CHAIN_ENTRIES}). */
  chainEntries = 0;
  readonly flow: FlowFacts = {
    tracked: 'not-yet',
    direction: null,
    seenReply: false,
    assured: false,
    confirmed: false,
    dnat: false,
    snat: false,
    ctMark: 0,
    dstBinding: null,
    srcBinding: null,
    dstNatDone: false,
    srcNatDone: false,
  };
  /** The header of the last step, reused while the packet has not changed. */
  private lastHeader: PacketHeader | null = null;

  /**
   * `indexed`: evaluators may use the indexes built once per capture (rule prefilters,
   * the conntrack index); false evaluates every rule in full and scans every flow.
   */
  constructor(
    readonly input: TraceInput,
    readonly net: NetView,
    readonly pkt: WalkPacket,
    readonly branch: BranchChoice,
    readonly indexed = true,
    /** Both iptables backends hold rules: iptables steps say which (TraceStep.xtables). */
    readonly dualBackends = false,
  ) {}

  /** The packet's header now: the previous step's object when no field changed (steps never mutate it). */
  private header(): PacketHeader {
    const h = this.lastHeader;
    const p = this.pkt;
    if (
      h !== null &&
      h.src === p.src &&
      h.dst === p.dst &&
      h.sport === p.sport &&
      h.dport === p.dport &&
      h.mark === p.mark &&
      h.iif === p.iif &&
      h.oif === p.oif &&
      h.ct === p.ct &&
      h.proto === p.proto &&
      h.family === p.family &&
      h.icmpType === p.icmpType &&
      h.icmpCode === p.icmpCode &&
      h.icmpId === p.icmpId &&
      h.tcpFlags === p.tcpFlags &&
      h.randomSport === p.randomSport
    ) {
      return h;
    }
    this.lastHeader = p.header();
    return this.lastHeader;
  }

  /** Appends a step with the packet as it is now; returns it. Throws BugError past {@link MAX_STEPS}. */
  record(f: StepFields): TraceStep {
    if (this.steps.length >= MAX_STEPS) throw new BugError(`the walk took more than ${MAX_STEPS} steps (a rule loop?)`);
    const step: TraceStep = {
      index: this.steps.length,
      kind: f.kind,
      backend: f.backend,
      hook: this.hook,
      family: f.family ?? null,
      table: f.table ?? null,
      chain: f.chain ?? null,
      priority: f.priority ?? null,
      ruleIndex: f.ruleIndex ?? null,
      handle: f.handle ?? null,
      ruleText: f.ruleText ?? null,
      matched: f.matched ?? null,
      verdict: f.verdict ?? null,
      reason: stepSaidEn(f.said),
      said: f.said,
      header: this.header(),
      counters: f.counters ?? null,
      branches: f.branches ?? null,
      ...(f.xtables ? { xtables: f.xtables } : {}),
      ...(f.element ? { element: f.element } : {}),
    };
    this.steps.push(step);
    return step;
  }

  /**
   * {@link record} of a rule that did not match, without the intermediate fields object
   * (the steps of a 10,000-rule chain are mostly these): the same step `record` makes
   * from `{ ...where, kind: 'rule', chain, ruleIndex, handle, ruleText, counters, matched: false, reason }`.
   */
  recordMiss(where: RuleWhere, chain: string, ruleIndex: number, handle: number | null, ruleText: string, counters: StepCounters | null, reason: string): void {
    if (this.steps.length >= MAX_STEPS) throw new BugError(`the walk took more than ${MAX_STEPS} steps (a rule loop?)`);
    this.steps.push({
      index: this.steps.length,
      kind: 'rule',
      backend: where.backend,
      hook: this.hook,
      family: where.family,
      table: where.table,
      chain,
      priority: where.priority,
      ruleIndex,
      handle,
      ruleText,
      matched: false,
      verdict: null,
      reason,
      said: stepSaid('rule-no-match', { conds: phrase(reason) }),
      header: this.header(),
      counters,
      branches: null,
      ...(where.xtables ? { xtables: where.xtables } : {}),
    });
  }

  /**
   * Counts the entry into `chain` (a base chain run, a jump or goto); returns the reason to
   * stop when the walk has entered more than {@link MAX_CHAIN_ENTRIES} chains (a jump loop),
   * else null.
   */
  enterChain(chain: string): StepSaid | null {
    this.chainEntries++;
    if (this.chainEntries <= MAX_CHAIN_ENTRIES) return null;
    return stepSaid('jump-loop', { max: MAX_CHAIN_ENTRIES, chain });
  }

  /** True when the walk may record more steps (a safety net for evaluators). */
  budgetLeft(): boolean {
    return this.steps.length < MAX_STEPS - 10;
  }

  /** Adds a note once. */
  note(text: string): void {
    if (!this.notes.includes(text)) this.notes.push(text);
  }
}

/**
 * Chooses one of `branches` (each with its endpoint, when known) following the walk's
 * {@link BranchChoice}. Throws {@link UserError} when the asked index does not exist or
 * no branch leads to the asked endpoint (the message lists those that exist).
 */
export function chooseBranch(choice: BranchChoice, branches: readonly { endpoint: string | null; target: string }[]): number {
  if (branches.length === 0) throw new BugError('a random choice without branches');
  switch (choice.kind) {
    case 'first':
      return 0;
    case 'index':
      if (choice.index < 0 || choice.index >= branches.length) {
        throw new UserError(said('ue.branch.range', { index: choice.index, n: branches.length, last: branches.length - 1 }), said('ue.branch.rangeHint'));
      }
      return choice.index;
    case 'endpoint': {
      const want = choice.endpoint;
      const i = branches.findIndex((b) => b.endpoint !== null && (b.endpoint === want || b.endpoint.replace(/:\d+$/, '') === want || b.endpoint.replace(/^\[(.*)\]:\d+$/, '$1') === want));
      if (i < 0) {
        const have = branches.map((b) => b.endpoint ?? b.target).join(', ');
        throw new UserError(said('ue.endpoint.noBranch', { want }), said('ue.endpoint.noBranchHint', { have }));
      }
      return i;
    }
  }
}

/**
 * The walk's moving parts shared by the engine and both evaluators: the packet as it
 * changes, the flow's conntrack facts, NAT bindings set up along the way, the branch
 * choice for random rules, and the recorder that turns each decision into a
 * {@link TraceStep}. Nothing here reads the UI; nothing here does I/O.
 */
import { BugError, UserError } from '../errors.js';
import type { NetfilterHook } from '../model/iptables.js';
import type { TraceInput } from './input.js';
import type { PacketFamily, TcpFlag, TraceProtocol } from './packet.js';
import type { NetView } from './routing.js';
import type { CtStateName, PacketHeader, StepBackend, StepCounters, StepKind, TraceBranch, TraceStep } from './types.js';

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

/** `IP:PORT` with IPv6 in brackets; the bare address when there is no port. */
export function endpointText(addr: string, port: number | null): string {
  if (port === null) return addr;
  return addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`;
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
  | { readonly kind: 'drop'; readonly reason: string }
  | { readonly kind: 'reject'; readonly reason: string }
  | { readonly kind: 'unsupported'; readonly reason: string };

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
  readonly reason: string;
  readonly counters?: StepCounters | null;
  readonly branches?: readonly TraceBranch[] | null;
}

/** Steps one walk may take before it is stopped as a loop (rules, policies, stations). */
export const MAX_STEPS = 20_000;

/** Everything a walk carries from hook to hook. */
export class WalkContext {
  readonly steps: TraceStep[] = [];
  readonly notes: string[] = [];
  hook: NetfilterHook | null = null;
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

  constructor(
    readonly input: TraceInput,
    readonly net: NetView,
    readonly pkt: WalkPacket,
    readonly branch: BranchChoice,
  ) {}

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
      reason: f.reason,
      header: this.pkt.header(),
      counters: f.counters ?? null,
      branches: f.branches ?? null,
    };
    this.steps.push(step);
    return step;
  }

  /** True when the walk may run more rules (a loop guard for evaluators). */
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
        throw new UserError(`--branch ${choice.index}: there are ${branches.length} branches (0–${branches.length - 1})`, 'choose an index from the list');
      }
      return choice.index;
    case 'endpoint': {
      const want = choice.endpoint;
      const i = branches.findIndex((b) => b.endpoint !== null && (b.endpoint === want || b.endpoint.replace(/:\d+$/, '') === want || b.endpoint.replace(/^\[(.*)\]:\d+$/, '$1') === want));
      if (i < 0) {
        const have = branches.map((b) => b.endpoint ?? b.target).join(', ');
        throw new UserError(`--endpoint ${want}: no branch of this random choice leads there`, `the branches lead to: ${have}`);
      }
      return i;
    }
  }
}

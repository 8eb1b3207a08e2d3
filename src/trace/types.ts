/**
 * What step mode produces: the packet's walk through the node's netfilter hooks, one
 * {@link TraceStep} per rule, policy, kernel station (conntrack, NAT, routing) and stop,
 * and a {@link TraceResult} with the verdict, the packet as it leaves, the conntrack
 * entry it creates and the reply's way back.
 *
 * Hook and table words are netfilter's (`prerouting`, `nat`, `KUBE-SERVICES`); verdict
 * words are nft's (`accept`, `drop`, `continue`, `return`, `jump X`, `goto X`), which is
 * also how `nft monitor trace` reports iptables-nft rules.
 */
import type { NetfilterHook } from '../model/iptables.js';
import type { PacketFamily, TcpFlag, TraceEntry, TraceProtocol } from './packet.js';
import type { StepSaid } from '../text/step-said.js';

/** The conntrack state a rule sees (`ct state` / `--ctstate` words, lower case). */
export type CtStateName = 'invalid' | 'new' | 'established' | 'related' | 'untracked';

/**
 * The packet header (and its metadata) at one point of the walk.
 * - `sport`/`dport`: null for icmp; `sport` is also null after fully-random source NAT
 *   (the kernel picks a random port: see `randomSport`);
 * - `mark`: `skb->mark`, u32;
 * - `iif`/`oif`: interface names where known (oif after the routing decision);
 * - `ct`: the conntrack state rules see at this point (`invalid` before conntrack ran).
 */
export interface PacketHeader {
  readonly family: PacketFamily;
  readonly proto: TraceProtocol;
  readonly src: string;
  readonly dst: string;
  readonly sport: number | null;
  readonly dport: number | null;
  readonly icmpType: number | null;
  readonly icmpCode: number | null;
  readonly icmpId: number | null;
  readonly tcpFlags: readonly TcpFlag[];
  readonly mark: number;
  readonly iif: string | null;
  readonly oif: string | null;
  readonly ct: CtStateName;
  /** Source port was replaced by a random one (MASQUERADE/SNAT `--random-fully`). */
  readonly randomSport: boolean;
}

/**
 * Which engine produced a step: an iptables ruleset, an nft table, the kernel itself, or
 * Cilium's eBPF datapath (programs and LB maps, `src/trace/cilium.ts`).
 */
export type StepBackend = 'iptables' | 'nft' | 'kernel' | 'ebpf';

/**
 * What a step is.
 * - `rule`: one rule evaluated (matched or not);
 * - `policy`: the end of a base chain, its policy applies;
 * - `return`: the end of a user chain, back to the caller;
 * - `conntrack`: the conntrack lookup (new or existing flow) or its confirmation;
 * - `nat`: the NAT station (bindings made, or nat chains skipped for a known flow);
 * - `routing`: a routing decision;
 * - `final`: where the packet ends (delivered, sent, dropped, rejected);
 * - `unsupported`: something nodescope cannot evaluate: the walk stops here;
 * - `bpf-prog`: a Cilium eBPF program runs at its attach point (`table`: the program's
 *   object, e.g. `bpf_lxc`; `chain`: the attach point, e.g. `tc ingress lxc…`);
 * - `map-lookup`: a lookup in a Cilium map (`chain`: the map name; `ruleText`: the key
 *   and value bytes as `bpftool map dump` shows them).
 */
export type StepKind = 'rule' | 'policy' | 'return' | 'conntrack' | 'nat' | 'routing' | 'final' | 'unsupported' | 'bpf-prog' | 'map-lookup';

/** Packet and byte counters of a rule (packets, bytes), exact. */
export interface StepCounters {
  readonly packets: bigint;
  readonly bytes: bigint;
}

/**
 * One possible outcome of a random choice (`-m statistic --mode random`, `numgen random`).
 * - `probability`: chance of this branch, 0–1 (the effective one: 1/N for kube-proxy);
 * - `target`: the chain the branch goes to (or `continue` when no rule is taken);
 * - `endpoint`: the `IP:PORT` the branch DNATs to, found by following the target chain;
 * - `ruleIndex`/`handle`: the rule (iptables, 1-based) or element that makes the branch.
 */
export interface TraceBranch {
  readonly index: number;
  readonly probability: number;
  readonly target: string;
  readonly endpoint: string | null;
  readonly ruleIndex: number | null;
  readonly chosen: boolean;
}

/**
 * One step of the walk.
 * - `index`: 0-based position in {@link TraceResult.steps};
 * - `hook`: the netfilter hook (null for steps between hooks, e.g. routing);
 * - `family`: nft family of the table (`ip`, `ip6`, `inet`), `ip`/`ip6` for iptables;
 * - `table`/`chain`: where the rule lives (null for kernel steps);
 * - `ruleIndex`: 1-based position of the rule in its chain (iptables `--line-numbers`,
 *   and the position of an nft rule); null for non-rule steps;
 * - `handle`: the nft rule handle, for nft rules and for iptables-nft rules when the nft
 *   JSON of the same kernel is known (what `nft monitor trace` prints);
 * - `ruleText`: the rule as written (`-A CHAIN …` / nft text);
 * - `matched`: true/false for rules, null for other steps;
 * - `verdict`: what the step did (`continue`, `jump X`, `accept`, `drop`, …), null when
 *   the rule did not match;
 * - `reason`: why, in English words (rendered from `said` when the step has it);
 * - `said`: why, as a key of src/text/messages/steps.ts with params (a rule that did
 *   not match says `rule-no-match` with its condition list as a phrase);
 * - `header`: the packet as it is after this step;
 * - `counters`: the rule's counters in the capture, null when none;
 * - `branches`: every outcome of a random choice made at this step, with probabilities.
 */
export interface TraceStep {
  readonly index: number;
  readonly kind: StepKind;
  readonly backend: StepBackend;
  readonly hook: NetfilterHook | null;
  readonly family: string | null;
  readonly table: string | null;
  readonly chain: string | null;
  readonly priority: number | null;
  readonly ruleIndex: number | null;
  readonly handle: number | null;
  readonly ruleText: string | null;
  readonly matched: boolean | null;
  readonly verdict: string | null;
  readonly reason: string;
  readonly said?: StepSaid;
  readonly header: PacketHeader;
  readonly counters: StepCounters | null;
  readonly branches: readonly TraceBranch[] | null;
  /**
   * For iptables steps on a node where iptables-legacy and iptables-nft both hold rules:
   * which backend's table the rule is in (kubernetes#109811). Absent otherwise.
   */
  readonly xtables?: XtablesBackend;
  /**
   * For Cilium's eBPF steps: where the program runs, in bpftool's attach words (`tc ingress`,
   * `tc egress`, `connect4`, `sendmsg6`, `xdp`) — the eBPF counterpart of {@link hook}. Absent otherwise.
   */
  readonly attach?: string;
  /**
   * The element of a named set or map the rule's lookup hit (`vmap @service-ips`): the set's
   * name and the element's 0-based position in it, as `nft list set` prints them. Absent otherwise.
   */
  readonly element?: { readonly set: string; readonly index: number };
}

/** The two iptables backends: x_tables (`iptables-legacy`) and nf_tables (`iptables-nft`). */
export type XtablesBackend = 'legacy' | 'nft';

/**
 * One possible answer when the walk depends on something no capture records: with both
 * iptables backends holding rules, the kernel runs their chains of equal priority in the
 * order the tables were registered (`order`: whose chains run first).
 */
export interface TraceCandidate {
  readonly order: string;
  readonly result: TraceResult;
}

/**
 * How the walk ends.
 * - `local`: accepted and delivered to a process on the node;
 * - `forwarded`: forwarded out of `oif` (to a pod on this node, or towards `nexthop`);
 * - `sent`: a packet the node sent itself leaves through `oif`;
 * - `dropped` / `rejected`: a rule or the routing decision stopped it (`rejected`: the
 *   sender gets an ICMP error or a TCP reset);
 * - `unsupported`: nodescope met something it cannot evaluate (see the last step);
 * - `unknown`: the capture lacks what decides it (a count the listing does not print, a map
 *   no known layout decodes); the last step names the missing part;
 * - `ambiguous`: the capture cannot decide between {@link TraceResult.candidates} that differ
 *   (both iptables backends hold rules; the steps shown are the first candidate's).
 */
export type VerdictKind = 'local' | 'forwarded' | 'sent' | 'dropped' | 'rejected' | 'unsupported' | 'unknown' | 'ambiguous';

/** The verdict, where it came from and the endpoint reached. */
export interface TraceVerdict {
  readonly kind: VerdictKind;
  readonly reason: string;
  /** `reason` as a key with params (src/text/messages/steps.ts); absent for a verdict made of several walks (`ambiguous`). */
  readonly said?: StepSaid;
  /** Index of the step that decided it. */
  readonly step: number;
  /** Output interface and next hop (gateway, or the destination itself when on-link). */
  readonly oif: string | null;
  readonly nexthop: string | null;
  /** `IP:PORT` the packet reaches (its destination as it leaves), for local/forwarded/sent. */
  readonly endpoint: string | null;
  /**
   * For `rejected`: what the sender gets back, in iptables' `--reject-with` words
   * (`icmp-port-unreachable`, `tcp-reset`, `icmp-net-unreachable`, `icmp-host-unreachable`,
   * `icmp-admin-prohibited`; nft's `icmpx` codes as `icmpx-port-unreachable`). The client
   * sees an error at once, where a drop leaves it waiting for its timeout. Absent when
   * the walk did not end in a reject, or when the reject's kind is not known.
   */
  readonly rejectWith?: string;
}

/**
 * A conntrack tuple in conntrack's words (`src= dst= sport= dport=`, or `type= code= id=`).
 * `dport`/`sport` null: chosen at random by NAT (`--random-fully`).
 */
export interface TraceTuple {
  readonly src: string;
  readonly dst: string;
  readonly sport: number | null;
  readonly dport: number | null;
  readonly icmpType: number | null;
  readonly icmpCode: number | null;
  readonly icmpId: number | null;
}

/**
 * The conntrack entry the packet creates (or the one it belongs to).
 * - `text`: the entry as `conntrack -L` prints it (random ports shown as `*`);
 * - `existing`: true when the packet matched an entry of the capture.
 */
export interface TraceConntrack {
  readonly proto: TraceProtocol;
  readonly original: TraceTuple;
  readonly reply: TraceTuple;
  readonly state: string | null;
  readonly dnat: boolean;
  readonly snat: boolean;
  readonly existing: boolean;
  readonly text: string;
}

/**
 * The reply's way back: the reply packet as the endpoint sends it, and as conntrack
 * rewrites it (reverse NAT) before the client sees it.
 */
export interface TraceReply {
  /** The reply as it leaves the endpoint (the entry's reply tuple). */
  readonly sent: TraceTuple;
  /** The reply as the original sender receives it (the entry's original tuple, reversed). */
  readonly received: TraceTuple;
  readonly reason: string;
}

/** The request that was walked, resolved (entry point, source address, options). */
export interface TraceRequest {
  readonly entry: TraceEntry;
  readonly entryInferred: boolean;
  readonly entryReason: string;
  /** The packet as it enters the first hook. */
  readonly packet: PacketHeader;
  /** The branch option given (`endpoint IP:PORT`, `index N`), or null (first branch). */
  readonly branch: string | null;
}

/** Everything step mode found for one packet. */
export interface TraceResult {
  readonly request: TraceRequest;
  readonly steps: readonly TraceStep[];
  readonly verdict: TraceVerdict;
  /** The packet as it leaves (after DNAT and SNAT), or as it was when stopped. */
  readonly final: PacketHeader;
  readonly conntrack: TraceConntrack | null;
  readonly reply: TraceReply | null;
  /** Things the walk could not take into account (rp_filter, policy routing, …). */
  readonly notes: readonly string[];
  /** Each walk the capture cannot rule out, when more than one (see {@link TraceCandidate}); absent otherwise. */
  readonly candidates?: readonly TraceCandidate[];
}

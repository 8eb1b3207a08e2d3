/**
 * The kernel's view of a walk, for checking step mode against `nft monitor trace`.
 *
 * The kernel reports only what nf_tables does (net/netfilter/nf_tables_core.c
 * `nft_do_chain` → `nft_trace_packet`): a `rule` event for each rule whose matches all
 * held (with the verdict it gave, `continue` for a rule without one), and a `policy`
 * event when a base chain ran to its end. Rules that did not match, implicit returns,
 * kernel stations and chains the kernel skips (nat chains of a known flow) leave no
 * event. {@link kernelEventsOfWalk} projects a walk onto those events;
 * {@link kernelEventsOfTrace} reads them from parsed trace output; {@link diffKernelEvents}
 * compares the two.
 */
import type { NftTraceEvent } from '../parsers/nft-trace.js';
import type { PacketHeader, TraceResult } from './types.js';
import { isNatVerdict } from './context.js';

/**
 * One event the kernel reports: where (`family table chain`), which rule (`handle`, or
 * `ruleText` when no handle is known), and the verdict (`policy` events: the policy).
 */
export interface KernelEvent {
  readonly kind: 'rule' | 'policy';
  readonly family: string;
  readonly table: string;
  readonly chain: string;
  readonly handle: number | null;
  readonly ruleText: string | null;
  readonly verdict: string;
}

/** The header the kernel printed when the packet entered a base chain, with where. */
export interface KernelPacketSeen {
  readonly family: string;
  readonly table: string;
  readonly chain: string;
  readonly src: string | null;
  readonly dst: string | null;
  readonly sport: number | null;
  readonly dport: number | null;
}

/** The events the kernel would report for `result`, in order. */
export function kernelEventsOfWalk(result: TraceResult): KernelEvent[] {
  const out: KernelEvent[] = [];
  for (const s of result.steps) {
    if (s.table === null || s.chain === null || s.family === null || s.verdict === null) continue;
    if (s.kind === 'rule' && s.matched === true) {
      // REJECT / nft reject send their error and return NF_DROP: the kernel's trace says `drop`;
      // a NAT rule (`DNAT 10.244.0.23:8080`) sets up its binding and returns NF_ACCEPT: `accept`.
      const verdict = s.verdict === 'reject' ? 'drop' : isNatVerdict(s.verdict) ? 'accept' : s.verdict;
      out.push({ kind: 'rule', family: s.family, table: s.table, chain: s.chain, handle: s.handle, ruleText: s.ruleText, verdict });
    } else if (s.kind === 'policy') {
      out.push({ kind: 'policy', family: s.family, table: s.table, chain: s.chain, handle: null, ruleText: null, verdict: s.verdict.toLowerCase() });
    }
  }
  return out;
}

/**
 * The rule and policy events of one traced packet, leaving out tables in `skipTables`
 * (`family table`, e.g. the table that set nftrace).
 */
export function kernelEventsOfTrace(events: readonly NftTraceEvent[], skipTables: readonly string[] = []): KernelEvent[] {
  const skip = new Set(skipTables);
  const out: KernelEvent[] = [];
  for (const e of events) {
    if (e.table === null || e.chain === null || e.verdict === null) continue;
    if (skip.has(`${e.family} ${e.table}`)) continue;
    if (e.kind === 'rule' || e.kind === 'policy') {
      out.push({ kind: e.kind, family: e.family, table: e.table, chain: e.chain, handle: e.handle, ruleText: e.ruleText, verdict: e.verdict });
    }
  }
  return out;
}

/** The headers the kernel printed on entering base chains (`packet:` lines), leaving out `skipTables`. */
export function packetsOfTrace(events: readonly NftTraceEvent[], skipTables: readonly string[] = []): KernelPacketSeen[] {
  const skip = new Set(skipTables);
  const num = (v: string | undefined) => (v === undefined || !/^\d+$/.test(v) ? null : Number(v));
  return events
    .filter((e) => e.kind === 'packet' && e.table !== null && e.chain !== null && !skip.has(`${e.family} ${e.table}`))
    .map((e) => {
      const f = e.fields;
      const l4 = ['tcp', 'udp', 'sctp'].find((p) => f[`${p} dport`] !== undefined);
      return {
        family: e.family,
        table: e.table!,
        chain: e.chain!,
        src: f['ip saddr'] ?? f['ip6 saddr'] ?? null,
        dst: f['ip daddr'] ?? f['ip6 daddr'] ?? null,
        sport: l4 ? num(f[`${l4} sport`]) : null,
        dport: l4 ? num(f[`${l4} dport`]) : null,
      };
    });
}

/** One line per event, for printing both sides of a mismatch. */
export function formatKernelEvent(e: KernelEvent): string {
  const rule = e.kind === 'policy' ? 'policy' : e.handle !== null ? `handle ${e.handle}` : `rule ${e.ruleText ?? '?'}`;
  return `${e.family} ${e.table} ${e.chain} ${rule} → ${e.verdict}`;
}

function sameEvent(a: KernelEvent, b: KernelEvent): boolean {
  if (a.kind !== b.kind || a.family !== b.family || a.table !== b.table || a.chain !== b.chain || a.verdict !== b.verdict) return false;
  if (a.kind === 'policy') return true;
  if (a.handle !== null && b.handle !== null) return a.handle === b.handle;
  return true;
}

/**
 * Differences between the walk's events and the kernel's, in words (empty when they
 * agree): a position where they differ, or events one side has and the other lacks.
 * Rules compare by handle when both sides have one.
 */
export function diffKernelEvents(walk: readonly KernelEvent[], kernel: readonly KernelEvent[]): string[] {
  const out: string[] = [];
  const n = Math.max(walk.length, kernel.length);
  for (let i = 0; i < n; i++) {
    const a = walk[i];
    const b = kernel[i];
    if (a && b && sameEvent(a, b)) continue;
    out.push(`#${i + 1}: nodescope ${a ? formatKernelEvent(a) : '(nothing)'} | kernel ${b ? formatKernelEvent(b) : '(nothing)'}`);
    break; // after the first difference the rest is shifted; both walks are printed by the caller
  }
  return out;
}

/**
 * Compares the headers the kernel printed on entering each base chain with the walk's
 * header at its first step in that chain. Returns differences in words.
 */
export function diffPacketsSeen(result: TraceResult, seen: readonly KernelPacketSeen[]): string[] {
  const out: string[] = [];
  let from = 0;
  for (const p of seen) {
    const i = result.steps.findIndex((s, k) => k >= from && s.table === p.table && s.chain === p.chain && s.family === p.family);
    if (i < 0) {
      out.push(`kernel entered ${p.family} ${p.table} ${p.chain}; nodescope did not`);
      continue;
    }
    from = i;
    const h: PacketHeader = i > 0 ? result.steps[i - 1]!.header : result.request.packet;
    const wrong: string[] = [];
    if (p.src !== null && p.src !== h.src) wrong.push(`saddr ${h.src} ≠ ${p.src}`);
    if (p.dst !== null && p.dst !== h.dst) wrong.push(`daddr ${h.dst} ≠ ${p.dst}`);
    if (p.sport !== null && h.sport !== null && p.sport !== h.sport) wrong.push(`sport ${h.sport} ≠ ${p.sport}`);
    if (p.dport !== null && h.dport !== null && p.dport !== h.dport) wrong.push(`dport ${h.dport} ≠ ${p.dport}`);
    if (wrong.length) out.push(`${p.family} ${p.table} ${p.chain}: ${wrong.join(', ')}`);
  }
  return out;
}

/**
 * Short words for a walk, shared by `nodescope trace -o text` and the Step pane: the
 * packet header on one line, where a step happened, its mark (✓ matched, ✗ not), and
 * branch probabilities. Pure text; no colours, no terminal widths.
 */
import { stepSaid, type StepSaid } from '../text/step-said.js';
import type { PacketHeader, TraceBranch, TraceStep, TraceTuple } from './types.js';
import { endpointText } from './context.js';

/**
 * `tcp 10.244.0.9:43210 → 10.96.12.34:80 [syn] mark 0x4000 ct new iif cali… oif eth0`.
 * A header before the conntrack hook (ct `invalid`: the kernel has no entry yet, so nft's
 * `ct state` reads invalid there, and the walk only sets invalid then) says
 * `ct (not tracked yet)`, so the packet line does not contradict the conntrack step
 * right after it that starts a NEW flow.
 */
export function formatHeader(h: PacketHeader): string {
  const src = endpointText(h.src, h.randomSport ? '<random>' : h.sport);
  const parts = [`${h.proto} ${src} → ${endpointText(h.dst, h.dport)}`];
  if (h.proto === 'tcp' && h.tcpFlags.length) parts.push(`[${h.tcpFlags.join(',')}]`);
  if (h.icmpType !== null) parts.push(`type ${h.icmpType} code ${h.icmpCode ?? 0} id ${h.icmpId ?? 0}`);
  if (h.mark !== 0) parts.push(`mark 0x${h.mark.toString(16)}`);
  parts.push(h.ct === 'invalid' ? 'ct (not tracked yet)' : `ct ${h.ct}`);
  if (h.iif) parts.push(`iif ${h.iif}`);
  if (h.oif) parts.push(`oif ${h.oif}`);
  return parts.join(' ');
}

/** `src:port → dst:port` of a conntrack tuple (random ports as `<random>`). */
export function tupleText(t: TraceTuple): string {
  const port = (p: number | null, random: boolean) => (p === null ? (random ? '<random>' : null) : p);
  const s = port(t.sport, t.icmpType === null);
  const d = port(t.dport, t.icmpType === null);
  return `${endpointText(t.src, s)} → ${endpointText(t.dst, d)}`;
}

/** The HOOK of a step: the netfilter hook, or for Cilium's eBPF steps the attach point (`tc ingress`, `connect4`); '' for neither. */
export function stepHook(s: TraceStep): string {
  return s.hook ?? s.attach ?? '';
}

/** A step's number as the CLI and the Step pane show it: from 1 (`index` is 0-based). */
export function stepNumber(s: TraceStep): number {
  return s.index + 1;
}

/** Where a step happened: `prerouting nat/KUBE-SERVICES #3`, `tc ingress bpf_lxc/cilium_lb4_services_v2`, `routing`. */
export function stepPlace(s: TraceStep): string {
  const hook = stepHook(s);
  if (s.table !== null && s.chain !== null) {
    const fam = s.backend === 'nft' ? `${s.family} ` : s.xtables ? `${s.xtables} ` : '';
    return `${hook} ${fam}${s.table}/${s.chain}${s.ruleIndex !== null ? ` #${s.ruleIndex}` : ''}`.trim();
  }
  return `${hook} ${s.kind}`.trim();
}

/** ✓ for a matched rule, ✗ for one that did not match, ! for unsupported, · otherwise. */
export function stepMark(s: TraceStep): string {
  if (s.kind === 'unsupported') return '!';
  if (s.matched === true) return '✓';
  if (s.matched === false) return '✗';
  return '·';
}

/** One line for a step: `prerouting nat/KUBE-SERVICES #2 ✓ jump KUBE-SVC-X: daddr … matches`. */
export function stepLine(s: TraceStep): string {
  const verdict = s.verdict && s.kind !== 'final' ? ` ${s.verdict}` : '';
  return `${stepPlace(s)} ${stepMark(s)}${verdict}: ${s.reason}`;
}

/** A probability as a percentage with one decimal: 0.3333 → `33.3%`. */
export function percent(p: number): string {
  return `${(p * 100).toFixed(1)}%`;
}

/** One line per branch: `→ 2  33.3%  KUBE-SEP-X  10.244.0.31:8080` (arrow on the chosen one). */
export function branchLines(branches: readonly TraceBranch[]): string[] {
  return branches.map((b) => `${b.chosen ? '→' : ' '} ${b.index + 1} ${percent(b.probability).padStart(6)}  ${b.target}${b.endpoint ? `  ${b.endpoint}` : ''}`);
}

/**
 * What the sender sees for a `--reject-with` type (net/ipv4/netfilter/ipt_REJECT.c `reject_tg`, nft_reject_inet.c): a TCP
 * reset or an ICMP error ends the connection attempt at once (ECONNREFUSED / EHOSTUNREACH…),
 * unlike DROP where the client waits for its timeout, as a phrase to append. Empty for types not listed.
 */
export function rejectMeaning(how: string): StepSaid | '' {
  if (how === 'tcp-reset' || how.endsWith('port-unreachable')) return stepSaid('client-gets-refused');
  if (/unreachable|prohibited/.test(how)) return stepSaid('client-gets-error', { error: how.replace(/^icmp(6|x)?-/, '').replace(/-/g, ' ') });
  return '';
}

/**
 * nft's `reject` statement in iptables' `--reject-with` words: `tcp-reset`, `icmp-CODE`,
 * `icmp6-CODE`, `icmpx-CODE`. A bare `reject` is port-unreachable of the packet's family
 * (nft(8) "REJECT STATEMENT"; nft_reject_inet.c answers a bare inet reject the same way).
 */
export function nftRejectWith(s: { readonly type?: string; readonly code?: string }, family: 'ipv4' | 'ipv6'): string {
  if (s.type === 'tcp reset') return 'tcp-reset';
  const type = s.type ?? (family === 'ipv6' ? 'icmpv6' : 'icmp');
  const prefix = type === 'icmpv6' ? 'icmp6' : type;
  return `${prefix}-${s.code ?? 'port-unreachable'}`;
}

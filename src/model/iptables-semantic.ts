/**
 * Semantic comparison of iptables rules: the rule kube-proxy writes and the rule
 * iptables-save prints back differ in text but not in meaning
 * (shared/reference/corpus-notes.md items 4, 6, 7, 8):
 *
 * - generic matches move to the front, bare addresses get `/32` (`/128`);
 * - `MARK --or-mark X` / `--xor-mark X` / `--and-mark X` / `--set-mark X[/M]` are saved as
 *   `--set-xmark V/M` (libxt_MARK.c `mark_tg_parse`);
 * - `statistic --probability P` is stored by the kernel as `round(P × 2^31)` and printed
 *   with `%.11f` (libxt_statistic.c), so 0.33333 comes back as 0.33332999982;
 * - `recent` gains its defaults `--mask 255.255.255.255 --rsource` and reorders its
 *   options; `REJECT` gains `--reject-with icmp-port-unreachable`;
 * - `--ctstate` lists are printed in the kernel's bit order.
 *
 * Counters, line numbers, raw text and the chain index are not part of the meaning.
 */

import type { IptablesFamily, IptablesMatch, IptablesNegatable, IptablesOption, IptablesRule } from './iptables.js';

const U32_MASK = 0xffffffffn;

/** Module options whose value equals the default the kernel module assumes; dropped. */
function isDefaultOption(module: string, o: IptablesOption, family: IptablesFamily): boolean {
  if (module !== 'recent' || o.negated) return false;
  if (o.name === 'rsource' && o.values.length === 0) return true;
  if (o.name === 'name' && o.values[0] === 'DEFAULT') return true;
  if (o.name === 'mask') {
    const v = o.values[0];
    return (family !== 'ipv6' && v === '255.255.255.255') || (family !== 'ipv4' && v === 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
  }
  return false;
}

/** Parses a mark (`0x4000`, `16384`) as an unsigned 32-bit value; null when not a number. */
function parseMark(s: string): bigint | null {
  if (!/^(0x[0-9a-f]+|[0-9]+)$/i.test(s)) return null;
  return BigInt(s) & U32_MASK;
}

function hex(n: bigint): string {
  return `0x${n.toString(16)}`;
}

/** `V[/M]` with numbers in canonical hex, M defaulting to 0xffffffff. */
function markWithMask(text: string): string {
  const slash = text.indexOf('/');
  const v = parseMark(slash < 0 ? text : text.slice(0, slash));
  const m = slash < 0 ? U32_MASK : parseMark(text.slice(slash + 1));
  return v === null || m === null ? text : `${hex(v)}/${hex(m)}`;
}

/** A MARK target option as the `--set-xmark V/M` iptables-save prints for it. */
function markTargetOption(o: IptablesOption): IptablesOption {
  const text = o.values[0] ?? '';
  const slash = text.indexOf('/');
  const v = parseMark(slash < 0 ? text : text.slice(0, slash));
  const m = slash < 0 ? null : parseMark(text.slice(slash + 1));
  if (v === null || (slash >= 0 && m === null)) return o;
  let xmark: [bigint, bigint] | null = null;
  switch (o.name) {
    case 'set-xmark':
      xmark = [v, m ?? U32_MASK];
      break;
    case 'set-mark':
      xmark = [v, (m ?? U32_MASK) | v];
      break;
    case 'or-mark':
      xmark = [v, v];
      break;
    case 'xor-mark':
      xmark = [v, 0n];
      break;
    case 'and-mark':
      xmark = [0n, ~v & U32_MASK];
      break;
  }
  return xmark === null ? o : { name: 'set-xmark', negated: false, values: [`${hex(xmark[0])}/${hex(xmark[1])}`] };
}

/** A comma list in sorted order (ctstate/state print order is the kernel's, not the writer's). */
function sortedList(s: string): string {
  return s.split(',').sort().join(',');
}

function normalizeMatchOption(module: string, o: IptablesOption): IptablesOption {
  if (module === 'statistic' && o.name === 'probability' && o.values.length === 1) {
    const p = Number(o.values[0]);
    if (Number.isFinite(p)) return { ...o, values: [String(Math.round(p * 2 ** 31))] };
  }
  if (module === 'mark' && o.name === 'mark' && o.values.length === 1) return { ...o, values: [markWithMask(o.values[0]!)] };
  if ((o.name === 'ctstate' || o.name === 'state' || o.name === 'ctstatus') && o.values.length === 1) {
    return { ...o, values: [sortedList(o.values[0]!)] };
  }
  return o;
}

function optionKey(o: IptablesOption): string {
  return JSON.stringify([o.name, o.negated, o.values]);
}

function matchKey(m: IptablesMatch, family: IptablesFamily): string {
  const opts = m.options
    .filter((o) => !isDefaultOption(m.module, o, family))
    .map((o) => optionKey(normalizeMatchOption(m.module, o)))
    .sort();
  return JSON.stringify([m.module, opts]);
}

/** An address with an explicit prefix length (`10.0.0.1` → `10.0.0.1/32`, dotted masks → length). */
function normalizeAddress(a: IptablesNegatable | null): [string, boolean] | null {
  if (a === null) return null;
  const v = a.value.toLowerCase();
  const slash = v.indexOf('/');
  if (slash < 0) return [`${v}/${v.includes(':') ? 128 : 32}`, a.negated];
  const mask = v.slice(slash + 1);
  if (mask.includes('.')) {
    const len = dottedMaskLength(mask);
    if (len !== null) return [`${v.slice(0, slash)}/${len}`, a.negated];
  }
  return [v, a.negated];
}

function dottedMaskLength(mask: string): number | null {
  const parts = mask.split('.');
  if (parts.length !== 4) return null;
  let bits = 0;
  for (const p of parts) {
    const n = Number(p);
    if (!/^[0-9]{1,3}$/.test(p) || n > 255) return null;
    bits = bits * 256 + n;
  }
  let len = 0;
  while (len < 32 && bits & (2 ** (31 - len))) len++;
  // Contiguous masks only: the remaining low bits must all be zero.
  return bits % 2 ** (32 - len) === 0 ? len : null;
}

const PROTOCOL_NUMBERS: Readonly<Record<string, string>> = { '1': 'icmp', '6': 'tcp', '17': 'udp', '132': 'sctp' };

function normalizeProtocol(p: IptablesNegatable | null): [string, boolean] | null {
  if (p === null) return null;
  const v = p.value.toLowerCase();
  return [PROTOCOL_NUMBERS[v] ?? v, p.negated];
}

function targetKey(rule: IptablesRule, family: IptablesFamily): string | null {
  const t = rule.target;
  if (t === null) return null;
  let options = t.options;
  if (t.name === 'MARK') options = options.map(markTargetOption);
  if (t.name === 'REJECT') {
    const dflt = family === 'ipv6' ? 'icmp6-port-unreachable' : 'icmp-port-unreachable';
    options = options.filter((o) => !(o.name === 'reject-with' && o.values[0] === dflt));
  }
  return JSON.stringify([t.kind === 'goto' ? 'goto' : 'jump', t.name, options.map(optionKey).sort()]);
}

/**
 * A canonical text of what a rule matches and does, equal for two rules exactly when
 * {@link sameRuleSemantics} holds. `family` decides the default `recent --mask` and
 * REJECT type (`'unknown'` accepts either family's defaults).
 */
export function ruleSemanticKey(rule: IptablesRule, family: IptablesFamily = 'unknown'): string {
  return JSON.stringify([
    normalizeAddress(rule.source),
    normalizeAddress(rule.destination),
    rule.inInterface && [rule.inInterface.value, rule.inInterface.negated],
    rule.outInterface && [rule.outInterface.value, rule.outInterface.negated],
    normalizeProtocol(rule.protocol),
    rule.fragment && rule.fragment.negated,
    rule.matches.map((m) => matchKey(m, family)),
    targetKey(rule, family),
  ]);
}

/**
 * True when two rules match the same packets and do the same thing, ignoring the
 * differences between kube-proxy's input and iptables-save's output listed in this
 * module's comment. Chain, counters, index, line and raw text are not compared.
 */
export function sameRuleSemantics(a: IptablesRule, b: IptablesRule, family: IptablesFamily = 'unknown'): boolean {
  return ruleSemanticKey(a, family) === ruleSemanticKey(b, family);
}

/**
 * Parser for `nft monitor trace` output (nftables 0.6 and later; checked against nft
 * 1.0.6 on kernel 6.x), the kernel's own account of a packet's walk through nf_tables
 * chains (including the chains iptables-nft creates, printed as nft rules):
 *
 *     trace id 1c8fd9c1 ip nat PREROUTING packet: iif "cali…" ip saddr 10.244.0.9 … tcp dport 80 …
 *     trace id 1c8fd9c1 ip nat KUBE-SERVICES rule meta l4proto tcp ip daddr 10.96.12.34 … # handle 20 (verdict jump KUBE-SVC-X)
 *     trace id 1c8fd9c1 ip filter FORWARD policy accept
 *     trace id 1c8fd9c1 ip filter KUBE-FORWARD verdict continue meta mark 0x00004000
 *     trace id 1c8fd9c1 ip t c conntrack: ct direction original ct state new …   (nft ≥ 1.1)
 *
 * Source of the format: nftables src/trace.c (src/netlink.c before 1.0.7)
 * `trace_print_hdr` (`trace id %08x FAMILY [TABLE] [CHAIN] `), `trace_print_rule`
 * (`rule TEXT (verdict V)` or `unknown rule handle N (verdict V)`), `trace_print_packet`,
 * `trace_print_policy`, and NFT_TRACETYPE_RETURN (`verdict V`). Rule text carries
 * `# handle N` when nft runs with `-a`. Pure; a line it does not understand becomes a
 * diagnostic with its line number, never an exception.
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';

/** What one trace line reports. */
export type NftTraceEventKind = 'packet' | 'rule' | 'policy' | 'return' | 'conntrack';

/**
 * One line of `nft monitor trace`.
 * - `id`: the trace id (8 hex digits); one packet keeps its id across hooks, but ids are
 *   reused by later packets;
 * - `family`/`table`/`chain`: where it happened (table/chain null when not printed);
 * - `rule` lines: `ruleText` (as nft prints it, `# handle N` removed), `handle` (from
 *   `# handle N` or `unknown rule handle N`), `verdict` (`accept`, `continue`, `jump X`…);
 * - `policy` lines: `verdict` is the policy (`accept`/`drop`); `return` lines: `verdict`;
 * - `packet` lines: `fields` maps `ip saddr`, `tcp dport`, `iif`, `oif`… to their text;
 * - `mark`: `meta mark` printed after a policy/return verdict (u32), else null.
 */
export interface NftTraceEvent {
  readonly line: number;
  readonly raw: string;
  readonly id: string;
  readonly family: string;
  readonly table: string | null;
  readonly chain: string | null;
  readonly kind: NftTraceEventKind;
  readonly ruleText: string | null;
  readonly handle: number | null;
  readonly verdict: string | null;
  readonly fields: Readonly<Record<string, string>>;
  readonly mark: number | null;
}

const KEYWORDS: ReadonlySet<string> = new Set(['packet:', 'rule', 'policy', 'verdict', 'conntrack:', 'unknown']);
const HEADERS: ReadonlySet<string> = new Set(['ether', 'vlan', 'arp', 'ip', 'ip6', 'tcp', 'udp', 'udplite', 'sctp', 'dccp', 'icmp', 'icmpv6', 'th', 'meta', 'ct', 'igmp', 'gre', 'esp', 'ah']);
const HEAD = /^trace id ([0-9a-f]{8}) (\S+) (.*)$/;

function unquote(s: string): string {
  return s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s;
}

/** `key value` pairs of a packet or conntrack line (`ip saddr 10.0.0.1`, `tcp flags == syn`, `iif "eth0"`). */
function readFields(words: readonly string[]): { fields: Record<string, string>; leftover: string[] } {
  const fields: Record<string, string> = {};
  const leftover: string[] = [];
  let i = 0;
  while (i < words.length) {
    const w = words[i]!;
    if (w === 'iif' || w === 'oif') {
      fields[w] = unquote(words[i + 1] ?? '');
      i += 2;
      continue;
    }
    if (HEADERS.has(w) && i + 2 < words.length) {
      // `ct direction original` / `ip saddr X` / `tcp flags == syn`
      let j = i + 2;
      if (words[j] === '==' && j + 1 < words.length) j++;
      fields[`${w} ${words[i + 1]}`] = unquote(words[j]!);
      i = j + 1;
      continue;
    }
    leftover.push(w);
    i++;
  }
  return { fields, leftover };
}

/** Splits `… (verdict V)` into the part before and the verdict; null when absent. */
function splitVerdict(text: string): { before: string; verdict: string } | null {
  const at = text.lastIndexOf(' (verdict ');
  if (at < 0 || !text.endsWith(')')) return null;
  return { before: text.slice(0, at), verdict: text.slice(at + ' (verdict '.length, -1).trim() };
}

function readMark(words: readonly string[]): number | null {
  const i = words.indexOf('mark');
  if (i < 1 || words[i - 1] !== 'meta') return null;
  const v = words[i + 1] ?? '';
  return /^(0x[0-9a-f]+|[0-9]+)$/i.test(v) ? Number(v) >>> 0 : null;
}

/** Parses one line; returns the event or why it is not one. */
function parseLine(raw: string, line: number): NftTraceEvent | string {
  const text = raw.replace(/\s+$/, '');
  const m = HEAD.exec(text);
  if (!m) return 'not a "trace id …" line';
  const [, id = '', family = '', rest = ''] = m;
  const words = rest.split(' ');
  let at = -1;
  for (const p of [2, 1, 0]) {
    if (p < words.length && KEYWORDS.has(words[p]!)) {
      at = p;
      break;
    }
  }
  if (at < 0) return 'no packet:/rule/policy/verdict keyword after the table and chain';
  const table = at >= 1 ? words[0]! : null;
  const chain = at >= 2 ? words[1]! : null;
  const keyword = words[at]!;
  const body = words.slice(at + 1).join(' ');
  const base = { line, raw, id, family, table, chain, ruleText: null, handle: null, verdict: null, fields: {}, mark: null };
  switch (keyword) {
    case 'packet:':
    case 'conntrack:': {
      const { fields } = readFields(body.split(' ').filter((w) => w !== ''));
      return { ...base, kind: keyword === 'packet:' ? 'packet' : 'conntrack', fields };
    }
    case 'rule':
    case 'unknown': {
      const v = splitVerdict(body);
      if (!v) return 'rule line without "(verdict …)"';
      if (keyword === 'unknown') {
        const h = /^rule handle (\d+)$/.exec(v.before.trim());
        if (!h) return 'unknown-rule line without a handle';
        return { ...base, kind: 'rule', handle: Number(h[1]), verdict: v.verdict };
      }
      const hm = /^(.*?)\s*# handle (\d+)$/.exec(v.before);
      return { ...base, kind: 'rule', ruleText: (hm ? hm[1]! : v.before).trim(), handle: hm ? Number(hm[2]) : null, verdict: v.verdict };
    }
    case 'policy':
    case 'verdict': {
      const ws = body.split(' ').filter((w) => w !== '');
      const verdict = ws[0] === 'jump' || ws[0] === 'goto' ? `${ws[0]} ${ws[1] ?? ''}`.trim() : (ws[0] ?? '');
      if (verdict === '') return `${keyword} line without a verdict`;
      return { ...base, kind: keyword === 'policy' ? 'policy' : 'return', verdict, mark: readMark(ws) };
    }
    default:
      return 'unknown trace line';
  }
}

/**
 * Parses `nft monitor trace` output into events in input order. Blank lines are
 * skipped; any other line that is not a trace line becomes a `not-trace` warning
 * diagnostic (nft may print notices between events).
 */
export function parseNftTrace(text: string, origin: string): ParseResult<NftTraceEvent[]> {
  const events: NftTraceEvent[] = [];
  const diagnostics: Diagnostic[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.trim() === '') continue;
    const r = parseLine(raw, i + 1);
    if (typeof r === 'string') diagnostics.push(diagnostic('warning', origin, i + 1, raw, 'not-trace', r));
    else events.push(r);
  }
  return { value: events, diagnostics };
}

/** Prints an event back as nft prints it (the packet fields in the parsed order). */
export function formatNftTraceEvent(e: NftTraceEvent): string {
  const head = `trace id ${e.id} ${e.family} ${e.table ? `${e.table} ` : ''}${e.chain ? `${e.chain} ` : ''}`;
  switch (e.kind) {
    case 'packet':
    case 'conntrack': {
      const parts = Object.entries(e.fields).map(([k, v]) => (k === 'iif' || k === 'oif' ? `${k} "${v}"` : k === 'tcp flags' ? `${k} == ${v}` : `${k} ${v}`));
      return `${head}${e.kind}: ${parts.join(' ')} `;
    }
    case 'rule':
      if (e.ruleText === null) return `${head}unknown rule handle ${e.handle ?? 0} (verdict ${e.verdict ?? ''})`;
      return `${head}rule ${e.ruleText}${e.handle !== null ? ` # handle ${e.handle}` : ''} (verdict ${e.verdict ?? ''})`;
    case 'policy':
    case 'return':
      return `${head}${e.kind === 'policy' ? 'policy' : 'verdict'} ${e.verdict ?? ''} ${e.mark !== null ? `meta mark 0x${e.mark.toString(16).padStart(8, '0')} ` : ''}`;
  }
}

/** The events of one packet's walk: consecutive events with one trace id. */
export interface NftTracePass {
  readonly id: string;
  readonly events: readonly NftTraceEvent[];
}

/**
 * Splits events into passes, one per packet. Without `startChains`, a pass is a run of
 * consecutive events with one trace id. With `startChains` (`family table chain`, e.g.
 * the chain that set nftrace), a pass starts at a `packet` event in one of them and
 * collects every later event with the same id until that id starts again: packets
 * handled at the same time on other CPUs interleave their events, and the kernel reuses
 * ids for later packets of a flow.
 */
export function splitTracePasses(events: readonly NftTraceEvent[], startChains: readonly string[] = []): NftTracePass[] {
  const passes: { id: string; events: NftTraceEvent[] }[] = [];
  if (startChains.length === 0) {
    for (const e of events) {
      const last = passes[passes.length - 1];
      if (!last || last.id !== e.id) passes.push({ id: e.id, events: [e] });
      else last.events.push(e);
    }
    return passes;
  }
  const starts = new Set(startChains);
  const open = new Map<string, { id: string; events: NftTraceEvent[] }>();
  for (const e of events) {
    const startsHere = e.kind === 'packet' && starts.has(`${e.family} ${e.table ?? ''} ${e.chain ?? ''}`);
    let pass = open.get(e.id);
    if (!pass || (startsHere && pass.events.length > 0)) {
      pass = { id: e.id, events: [] };
      passes.push(pass);
      open.set(e.id, pass);
    }
    pass.events.push(e);
  }
  return passes;
}

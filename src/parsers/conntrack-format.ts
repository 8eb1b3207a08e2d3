/**
 * Conntrack entries back to text, in the layout of the tool that prints them:
 * libnetfilter_conntrack `__snprintf_conntrack_default` for `'conntrack'` and
 * `'extended'`, the kernel's `ct_seq_show` for `'proc'`. For an entry parsed from
 * a line printed by that tool, the output is that line (byte for byte).
 */
import {
  CONNTRACK_FAMILY_NUMBERS,
  expandIpv6,
  type ConntrackEntry,
  type ConntrackStyle,
  type ConntrackTable,
  type ConntrackTuple,
} from '../model/conntrack.js';

function address(text: string, style: ConntrackStyle): string {
  return style === 'proc' && text.indexOf(':') >= 0 ? (expandIpv6(text) ?? text) : text;
}

function tuple(t: ConntrackTuple, style: ConntrackStyle): string {
  let out = `src=${address(t.src, style)} dst=${address(t.dst, style)} `;
  if (t.sport !== undefined) out += `sport=${t.sport} `;
  if (t.dport !== undefined) out += `dport=${t.dport} `;
  if (t.icmpType !== undefined) out += `type=${t.icmpType} `;
  if (t.icmpCode !== undefined) out += `code=${t.icmpCode} `;
  if (t.icmpId !== undefined) out += `id=${t.icmpId} `;
  if (t.srcKey !== undefined) out += `srckey=0x${t.srcKey.toString(16)} `;
  if (t.dstKey !== undefined) out += `dstkey=0x${t.dstKey.toString(16)} `;
  return out;
}

function counters(t: ConntrackTuple): string {
  let out = '';
  if (t.packets !== undefined) out += `packets=${t.packets} `;
  if (t.bytes !== undefined) out += `bytes=${t.bytes} `;
  return out;
}

/**
 * Formats one entry as one line (no terminator).
 *
 * - `'conntrack'`: `conntrack -L` / `-E` (event tag and `[sec.usec]\t` prefix
 *   when the entry has them);
 * - `'extended'`: the same with the `ipv4     2` / `ipv6     10` prefix;
 * - `'proc'`: `/proc/net/nf_conntrack`: IPv6 fully expanded (`%pI6`), and without
 *   what the kernel never prints there (event, eventTime, secmark, start, stop,
 *   helper, id, labels, userspace).
 *
 * Fields are printed in the tool's order; unknown `extra` fields go after the
 * known ones (before ` [USERSPACE]`). Never throws.
 */
export function formatConntrackEntry(entry: ConntrackEntry, style: ConntrackStyle): string {
  const proc = style === 'proc';
  let out = '';
  if (!proc) {
    if (entry.eventTime !== undefined) out += `[${entry.eventTime}]\t`;
    if (entry.event !== undefined) out += `${`[${entry.event}]`.padStart(9)} `;
  }
  if (style !== 'conntrack') out += `${entry.family.padEnd(8)} ${CONNTRACK_FAMILY_NUMBERS[entry.family]} `;
  out += `${entry.proto.padEnd(8)} ${entry.protoNum} `;
  if (entry.timeout !== undefined) out += `${entry.timeout} `;
  if (entry.state !== undefined) out += `${entry.state} `;
  out += tuple(entry.orig, style);
  if (entry.orig.zone !== undefined) out += `zone-orig=${entry.orig.zone} `;
  out += counters(entry.orig);
  if (entry.flags.includes('UNREPLIED')) out += '[UNREPLIED] ';
  out += tuple(entry.reply, style);
  if (entry.reply.zone !== undefined) out += `zone-reply=${entry.reply.zone} `;
  out += counters(entry.reply);
  for (const f of entry.flags) if (f !== 'UNREPLIED') out += `[${f}] `;
  if (entry.mark !== undefined) out += `mark=${entry.mark} `;
  if (!proc && entry.secmark !== undefined) out += `secmark=${entry.secmark} `;
  if (entry.secctx !== undefined) out += `secctx=${entry.secctx} `;
  if (entry.zone !== undefined) out += `zone=${entry.zone} `;
  if (entry.deltaTime !== undefined) out += `delta-time=${entry.deltaTime} `;
  if (!proc) {
    if (entry.start !== undefined) out += `[start=${entry.start}] `;
    if (entry.stop !== undefined) out += `[stop=${entry.stop}] `;
    if (entry.helper !== undefined) out += `helper=${entry.helper} `;
  }
  if (entry.use !== undefined) out += `use=${entry.use} `;
  if (!proc) {
    if (entry.id !== undefined) out += `id=${entry.id} `;
    if (entry.labels !== undefined) out += `labels=${entry.labels.join(',')} `;
  }
  for (const x of entry.extra ?? []) out += x.value === undefined ? `${x.key} ` : `${x.key}=${x.value} `;
  if (!proc && entry.userspace !== undefined) {
    out += `[USERSPACE] portid=${entry.userspace.portid} `;
    if (entry.userspace.progname !== undefined) out += `progname=${entry.userspace.progname} `;
  }
  return out.slice(0, -1);
}

/** Formats every entry of a table, one per line, each ending with `\n`. Never throws. */
export function formatConntrackTable(table: ConntrackTable, style: ConntrackStyle): string {
  let out = '';
  // Entries and events in line order, as the capture held them.
  const all = table.events?.length ? [...table.entries, ...table.events].sort((a, b) => a.line - b.line) : table.entries;
  for (const e of all) out += `${formatConntrackEntry(e, style)}\n`;
  return out;
}

/**
 * Prints the ruleset model as `nft list ruleset` text (nftables 1.0.x src/rule.c
 * `table_print()`, `chain_print()`, `set_print()`): tab indentation, a blank line between
 * objects (none after the table comment, as 1.0.6 prints), named counters then sets then chains, elements wrapped as nft wraps them, and
 * `# handle N` where the model has handles (as `nft -a` prints). `parseNftText` reads the
 * result back to an equal model (tested); objects kept as JSON (flowtables etc. from
 * `nft -j`) cannot be printed as nft syntax and come out as `#` comments.
 */
import type { NftChain, NftNamedCounter, NftRawObject, NftRule, NftRuleset, NftSet, NftTable } from '../model/nftables.js';
import { formatDuration, formatElement, formatRuleText, quote } from './nft-format-expr.js';
import { elementsPerLine, splitConcatType } from './nft-types.js';

const handleNote = (handle: number | undefined) => (handle !== undefined ? ` # handle ${handle}` : '');

/** The whole ruleset as `nft list ruleset` text (ends with a newline unless empty). */
export function formatNftText(ruleset: NftRuleset): string {
  return ruleset.tables.map(formatTable).join('');
}

/** One table; a table with an empty name (a fragment) prints its objects at top level. */
export function formatTable(table: NftTable): string {
  const fragment = table.name === '';
  const ind = fragment ? '' : '\t';
  const out: string[] = [];
  let delim = '';
  const add = (text: string) => {
    out.push(delim, text);
    delim = '\n';
  };
  if (!fragment) {
    out.push(`table ${table.family} ${table.name} {${handleNote(table.handle)}\n`);
    if (table.flags?.length) {
      out.push(`\tflags ${table.flags.join(',')}\n`);
      delim = '\n';
    }
    // nft 1.0.6 puts a blank line after `flags` but not after the comment (`table_print()`).
    if (table.comment !== undefined) out.push(`\tcomment ${quote(table.comment)}\n`);
  }
  for (const c of table.counters) add(formatCounter(c, ind));
  for (const o of table.objects) if (o.kind !== 'flowtable') add(formatRawObject(o, ind));
  for (const s of table.sets) add(formatSet(s, ind));
  for (const o of table.objects) if (o.kind === 'flowtable') add(formatRawObject(o, ind));
  for (const c of table.chains) add(formatChain(c, ind));
  if (!fragment) out.push('}\n');
  return out.join('');
}

function formatCounter(c: NftNamedCounter, ind: string): string {
  let out = `${ind}counter ${c.name} {${handleNote(c.handle)}\n`;
  if (c.comment !== undefined) out += `${ind}\tcomment ${quote(c.comment)}\n`;
  return `${out}${ind}\tpackets ${c.packets} bytes ${c.bytes}\n${ind}}\n`;
}

function formatRawObject(o: NftRawObject, ind: string): string {
  // Objects read from JSON keep their JSON, which is no nft syntax.
  if (o.raw.startsWith('{')) return `${ind}# ${o.kind} ${o.name}: ${o.raw}\n`;
  if (o.handle === undefined) return `${ind}${o.raw}\n`;
  const open = o.raw.indexOf('{');
  return `${ind}${o.raw.slice(0, open + 1)} # handle ${o.handle}\n${ind}\t${o.raw.slice(open + 1).trim()}\n`;
}

/** One chain block: comment, base-chain line, rules. */
export function formatChain(chain: NftChain, ind = '\t'): string {
  const lines = [`${ind}chain ${chain.name} {${handleNote(chain.handle)}`];
  if (chain.comment !== undefined) lines.push(`${ind}\tcomment ${quote(chain.comment)}`);
  const b = chain.base;
  if (b) {
    const devices = b.devices ?? [];
    const dev =
      devices.length === 1
        ? ` device ${quote(devices[0] as string)}`
        : devices.length > 1
          ? ` devices = { ${devices.map(quote).join(', ')} }`
          : '';
    lines.push(`${ind}\ttype ${b.type} hook ${b.hook}${dev} priority ${b.priorityText}; policy ${b.policy};`);
  }
  for (const rule of chain.rules) lines.push(`${ind}\t${formatRule(rule)}`);
  lines.push(`${ind}}`);
  return `${lines.join('\n')}\n`;
}

/** One rule line as nft prints it, with ` # handle N` when the rule has a handle. */
export function formatRule(rule: NftRule): string {
  return `${formatRuleText(rule)}${handleNote(rule.handle)}`;
}

/** Flags as nft prints them: only when one of constant/interval/dynamic is set, or timeout without a default. */
function flagsLine(set: NftSet): string | undefined {
  const printed = (['constant', 'interval', 'dynamic', 'timeout'] as const).filter((f) => set.flags.includes(f));
  const onlyImpliedTimeout = printed.length === 1 && printed[0] === 'timeout' && set.timeout !== undefined;
  return printed.length && !onlyImpliedTimeout ? `flags ${printed.join(',')}` : undefined;
}

/** One set or map block. */
export function formatSet(set: NftSet, ind = '\t'): string {
  const lines = [`${ind}${set.kind} ${set.name} {${handleNote(set.handle)}`];
  const body = (text: string) => lines.push(`${ind}\t${text}`);
  if (set.typeof !== undefined) body(`typeof ${set.typeof}`);
  else body(`type ${set.type}${set.mapType !== undefined ? ` : ${set.mapType}` : ''}`);
  if (set.policy === 'memory') body('policy memory');
  if (set.size !== undefined) body(`size ${set.size}`);
  const flags = flagsLine(set);
  if (flags) body(flags);
  if (set.counter) body('counter');
  if (set.timeout !== undefined) body(`timeout ${formatDuration(set.timeout)}`);
  if (set.gcInterval !== undefined) body(`gc-interval ${formatDuration(set.gcInterval)}`);
  if (set.comment !== undefined) body(`comment ${quote(set.comment)}`);
  if (set.elements.length) body(`elements = ${formatElements(set, ind)}`);
  lines.push(`${ind}}`);
  return `${lines.join('\n')}\n`;
}

function hintOfTypes(types: readonly string[]): string | readonly string[] | undefined {
  return types.length === 1 ? types[0] : types.length > 1 ? types : undefined;
}

/** `{ a, b,\n\t\t\t     c }`: elements wrapped every 1, 2 or 5 per line as nft does. */
function formatElements(set: NftSet, ind: string): string {
  const keyHint = hintOfTypes(set.keyTypes);
  const valueHint = set.mapType !== undefined ? hintOfTypes(splitConcatType(set.mapType)) : undefined;
  const perLine = elementsPerLine(set.keyTypes);
  const wrap = `,\n${ind}\t\t     `;
  const parts = set.elements.map((e, i) => {
    const text = formatElement(e, keyHint, valueHint);
    return i === 0 ? text : `${i % perLine === 0 ? wrap : ', '}${text}`;
  });
  return `{ ${parts.join('')} }`;
}

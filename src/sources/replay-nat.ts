/**
 * What `trace` reads of a replay's `iptables-save` nat table: a walk to one destination
 * enters a handful of kube-proxy's per-Service chains (KUBE-SVC-, KUBE-SEP-, KUBE-EXT-,
 * KUBE-FW-, KUBE-SVL-) out of tens of thousands, so parsing every rule of every one of them
 * is wasted work. {@link natForDestination} keeps every table but nat whole, and in nat every
 * chain declaration, every rule of the other chains, and every rule of the per-Service chains
 * a walk to the destination can reach: the targets of the rules (outside those chains) whose
 * `-d ADDRESS/32` and `--dport N` do not exclude it, and, from them on, every target. A
 * per-Service chain that holds `-m recent`, `--match-set` or a `kubernetes …` comment stays
 * whole (the header's notes and mode evidence read those rules); any other one keeps one bare
 * rule (`-A CHAIN`: no match, no target, no comment, nothing those readers count), so it is
 * still a chain with rules, not a leftover. The chains cut are returned:
 * the caller checks that the walk entered none of them, and reads the whole table when it did
 * (src/cli/trace-load.ts). Pure.
 */
import type { FrontendQuery } from './api-select.js';

/** kube-proxy's per-Service chain names (iptables mode, pkg/proxy/iptables/proxier.go). */
const PER_SERVICE = /^KUBE-(?:SVC|SEP|EXT|FW|SVL)-/;

/** The nat table cut for one destination, and the names of the chains whose rules were cut. */
export interface NatCut {
  readonly text: string;
  readonly cut: ReadonlySet<string>;
}

/** Where a rule line's `-A CHAIN` starts (after an `iptables-save -c` `[p:b] ` counter), -1 when it is no rule. */
function ruleStart(line: string): number {
  if (line.startsWith('-A ')) return 0;
  if (!line.startsWith('[')) return -1;
  const close = line.indexOf('] -A ');
  return close < 0 ? -1 : close + 2;
}

const JUMP = / -[jg] (\S+)/;
const DEST = /(^| )(! )?-d (\S+)/;
const DPORT = /(^| )(! )?--dport ([0-9]+)(?= |$)/;
const KEEPS_WHOLE = / -m recent |--match-set |--comment "?kubernetes /;

/** False when the rule's own `-d A/32` or `--dport N` excludes the destination; true otherwise (a superset). */
function mayMatch(rule: string, q: FrontendQuery): boolean {
  const d = DEST.exec(rule);
  if (d && !d[2] && d[3]!.endsWith('/32') && d[3]!.slice(0, -3) !== q.address) return false;
  const p = q.port === null ? null : DPORT.exec(rule);
  return !(p && !p[2] && Number(p[3]) !== q.port);
}

/** One nat block's lines (between `*nat` and `COMMIT`) cut as the module comment says; adds the cut chains to `cut`. */
function cutBlock(lines: readonly string[], q: FrontendQuery, cut: Set<string>): string[] {
  const rulesOf = new Map<string, number[]>();
  lines.forEach((line, i) => {
    const at = ruleStart(line);
    if (at < 0) return;
    const space = line.indexOf(' ', at + 3);
    const chain = space < 0 ? line.slice(at + 3) : line.slice(at + 3, space);
    const list = rulesOf.get(chain);
    if (list) list.push(i);
    else rulesOf.set(chain, [i]);
  });
  const whole = new Set<string>();
  const queue: string[] = [];
  const reach = (name: string | undefined) => {
    if (name !== undefined && PER_SERVICE.test(name) && !whole.has(name)) {
      whole.add(name);
      queue.push(name);
    }
  };
  for (const [chain, rules] of rulesOf) {
    if (!PER_SERVICE.test(chain)) {
      for (const i of rules) if (mayMatch(lines[i]!, q)) reach(JUMP.exec(lines[i]!)?.[1]);
    } else if (rules.some((i) => KEEPS_WHOLE.test(lines[i]!))) reach(chain);
  }
  while (queue.length > 0) for (const i of rulesOf.get(queue.pop()!) ?? []) reach(JUMP.exec(lines[i]!)?.[1]);
  const drop = new Set<number>();
  const bare = new Map<number, string>();
  for (const [chain, rules] of rulesOf) {
    if (!PER_SERVICE.test(chain) || whole.has(chain)) continue;
    cut.add(chain);
    bare.set(rules[0]!, `-A ${chain}`);
    for (const i of rules.slice(1)) drop.add(i);
  }
  const out: string[] = [];
  lines.forEach((line, i) => {
    if (!drop.has(i)) out.push(bare.get(i) ?? line);
  });
  return out;
}

/**
 * `text` (an `iptables-save` dump) with its nat table cut for a walk to `q` (see the module
 * comment); the text itself and no chain when there is nothing to cut. Never throws.
 */
export function natForDestination(text: string, q: FrontendQuery): NatCut {
  const lines = text.split('\n');
  const cut = new Set<string>();
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '*nat') {
      out.push(lines[i]!);
      continue;
    }
    let end = i + 1;
    while (end < lines.length && lines[end] !== 'COMMIT') end++;
    out.push(lines[i]!);
    // One push per line: a spread of a 200,000-line table would overflow the call stack.
    for (const line of cutBlock(lines.slice(i + 1, end), q, cut)) out.push(line);
    i = end - 1;
  }
  return cut.size === 0 ? { text, cut } : { text: out.join('\n'), cut };
}

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
 * {@link natForDestination} by splitting the text into lines: the reference the index reading
 * is tested against, and what it falls back on for a nat table without its `COMMIT` line.
 * Never throws.
 */
export function natForDestinationByLines(text: string, q: FrontendQuery): NatCut {
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

/** Index of the next line exactly `line` (followed by `\n`, or at the end when `atEnd`) from `from`, which starts a line; -1 when none. */
function lineAt(text: string, line: string, from: number, atEnd: boolean): number {
  if (text.startsWith(line, from) && (text.charCodeAt(from + line.length) === NL || (atEnd && from + line.length === text.length))) return from;
  for (let at = text.indexOf(`\n${line}`, from); at >= 0; at = text.indexOf(`\n${line}`, at + 1)) {
    const after = at + 1 + line.length;
    if (text.charCodeAt(after) === NL || (atEnd && after === text.length)) return at + 1;
  }
  return -1;
}

const NL = 10;
const KEEPS_WHOLE_ALL = new RegExp(KEEPS_WHOLE.source, 'g');

/** One chain's rules in a nat block: the text span `[start, end)` of its consecutive rule lines (`end` at the last one's `\n`). */
interface Run {
  readonly chain: string;
  readonly start: number;
  end: number;
}

/** The rule lines of `run`, one at a time. */
function* linesOf(text: string, run: Run): Generator<string> {
  for (let s = run.start; s < run.end; ) {
    const e = text.indexOf('\n', s);
    yield text.slice(s, e);
    s = e + 1;
  }
}

/**
 * The rule runs of one nat block's lines `[from, to)` (`to` starts its `COMMIT` line): each
 * chain's rules as one span, as `iptables-save` prints them (chain after chain). Null when a
 * chain's rules come in two places (then the block is read line by line). A rule's chain
 * name is compared in place with the run's, so only a new chain's name is sliced.
 */
function ruleRuns(text: string, from: number, to: number): Run[] | null {
  const runs: Run[] = [];
  const seen = new Set<string>();
  let run: Run | null = null;
  for (let s = from; s < to; ) {
    const e = text.indexOf('\n', s);
    let at = -1;
    const c = text.charCodeAt(s);
    if (c === 45 && text.startsWith('-A ', s)) at = s;
    else if (c === 91) {
      const close = text.indexOf('] -A ', s);
      if (close >= 0 && close < e) at = close + 2;
    }
    if (at < 0) run = null;
    else {
      const name = at + 3;
      const same = run !== null && text.startsWith(run.chain, name) && (text.charCodeAt(name + run.chain.length) === 32 || name + run.chain.length === e);
      if (same) run!.end = e;
      else {
        const space = text.indexOf(' ', name);
        const chain = text.slice(name, space < 0 || space > e ? e : space);
        if (seen.has(chain)) return null;
        seen.add(chain);
        run = { chain, start: s, end: e };
        runs.push(run);
      }
    }
    s = e + 1;
  }
  return runs;
}

/**
 * One nat block's lines `[from, to)` (`to` starts its `COMMIT` line) cut as {@link cutBlock}
 * cuts them, by index over its rule runs ({@link ruleRuns}); the rules that keep a chain whole
 * are found by one regular expression run over the block. Appends the block's text to `out`
 * (in pieces) and the cut chains to `cut`; false (nothing appended) when the rules of a chain
 * are not in one run.
 */
function cutBlockAt(text: string, from: number, to: number, q: FrontendQuery, cut: Set<string>, out: string[]): boolean {
  const runs = ruleRuns(text, from, to);
  if (runs === null) return false;
  const byChain = new Map(runs.map((r) => [r.chain, r]));
  const whole = new Set<string>();
  const queue: string[] = [];
  const reach = (name: string | undefined) => {
    if (name !== undefined && PER_SERVICE.test(name) && !whole.has(name)) {
      whole.add(name);
      queue.push(name);
    }
  };
  for (const run of runs) {
    if (PER_SERVICE.test(run.chain)) continue;
    for (const l of linesOf(text, run)) if (mayMatch(l, q)) reach(JUMP.exec(l)?.[1]);
  }
  // The per-Service runs holding what keeps a chain whole: one pass over the block (the
  // patterns hold no newline, so a match inside a run's span lies in one of its rule lines).
  KEEPS_WHOLE_ALL.lastIndex = from;
  for (let m = KEEPS_WHOLE_ALL.exec(text); m !== null && m.index < to; m = KEEPS_WHOLE_ALL.exec(text)) {
    const run = runAt(runs, m.index);
    if (run !== undefined && PER_SERVICE.test(run.chain)) reach(run.chain);
  }
  while (queue.length > 0) {
    const run = byChain.get(queue.pop()!);
    if (run) for (const l of linesOf(text, run)) reach(JUMP.exec(l)?.[1]);
  }
  let kept = from;
  for (const run of runs) {
    if (!PER_SERVICE.test(run.chain) || whole.has(run.chain)) continue;
    cut.add(run.chain);
    out.push(text.slice(kept, run.start), `-A ${run.chain}`);
    kept = run.end;
  }
  out.push(text.slice(kept, to));
  return true;
}

/** The run whose span holds text index `at`, undefined when none does. */
function runAt(runs: readonly Run[], at: number): Run | undefined {
  let [lo, hi] = [0, runs.length - 1];
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (runs[mid]!.start <= at) lo = mid;
    else hi = mid - 1;
  }
  const run = runs[lo];
  return run !== undefined && run.start <= at && at < run.end ? run : undefined;
}

/**
 * `text` (an `iptables-save` dump) with its nat table cut for a walk to `q` (see the module
 * comment); the text itself and no chain when there is nothing to cut. Reads the text by
 * index (no array of its lines); a `*nat` block without its `COMMIT` line, or with a chain's
 * rules in two places, is read by {@link natForDestinationByLines}. Equal to it on every text (test). Never throws.
 */
export function natForDestination(text: string, q: FrontendQuery): NatCut {
  const cut = new Set<string>();
  const out: string[] = [];
  let done = 0;
  for (let nat = lineAt(text, '*nat', 0, false); nat >= 0; nat = lineAt(text, '*nat', done, false)) {
    const body = nat + 5;
    const commit = lineAt(text, 'COMMIT', body, true);
    if (commit < 0) return natForDestinationByLines(text, q);
    out.push(text.slice(done, body));
    if (!cutBlockAt(text, body, commit, q, cut, out)) return natForDestinationByLines(text, q);
    done = commit;
  }
  if (cut.size === 0) return { text, cut };
  out.push(text.slice(done));
  return { text: out.join(''), cut };
}

/**
 * The rule half of the iptables-save parser: the restore tokenizer and the
 * argument parser for one rule (`-s … -m mod --opt v … -j TARGET --opt v`).
 *
 * Tokenizing follows iptables' own `add_param_to_argv()` (iptables/xshared.c, the
 * iptables-restore line splitter) exactly: words split on space/tab; only double
 * quotes quote; inside quotes a backslash escapes the next character (iptables-save
 * writes `\"`, `\\` and `\'`); outside quotes a backslash is literal; a closing quote
 * ends the word; `""` is an empty word. Single quotes are ordinary characters.
 */

import { flatCopy } from '../flat-string.js';
import { IPTABLES_COMMENT_JOINER } from '../model/iptables.js';
import type {
  IptablesCounters,
  IptablesMatch,
  IptablesNegatable,
  IptablesOption,
  IptablesTargetKind,
} from '../model/iptables.js';

/**
 * Reusable token buffer: `words[i]` is the i-th word of the last tokenized line and
 * `quoted[i]` whether any part of it was in double quotes (a quoted `"!"` or `"--x"`
 * is a value, never a negation or an option). Reused line after line to spare allocations.
 */
export class TokenBuffer {
  words: string[] = [];
  quoted: boolean[] = [];
  count = 0;
  /** The last line ended inside an open double quote. */
  unterminatedQuote = false;
  /**
   * The last line is not its words joined by single spaces, each word written bare or
   * whole in double quotes without escapes (`a  b`, a tab, leading or trailing blanks,
   * `"a""b"`, `a"b c"`, `"a\"b"`, an open quote).
   */
  irregular = false;
  /** No unquoted part of the last line holds a backslash or a CR. */
  noBackslashOrCr = false;
}

const SPACE = 32;
const TAB = 9;
const QUOTE = 34;
const BACKSLASH = 92;
const DASH = 45;

/**
 * Splits `line` into words into `buf` (see the module comment for the rules).
 * Returns the word count. Linear in the line length; never throws.
 */
export function tokenizeLine(line: string, buf: TokenBuffer): number {
  return tokenizeRange(line, 0, line.length, line, buf);
}

/**
 * {@link tokenizeLine} of `line`, which is `text[from, to)`, read in place: a whole dump
 * is one flat string, whose characters are cheaper to read than those of a slice of it.
 */
export function tokenizeRange(text: string, from: number, to: number, source: string, buf: TokenBuffer): number {
  const { words, quoted } = buf;
  const line = text;
  let count = 0;
  buf.unterminatedQuote = false;
  let irregular = false;
  /** Blanks since the last word: exactly one space may come between two words. */
  let blanks = 0;
  const n = to;
  let i = from;
  while (i < n) {
    let c = line.charCodeAt(i);
    if (c === SPACE || c === TAB) {
      if (c === TAB) irregular = true;
      blanks++;
      i++;
      continue;
    }
    if (blanks !== (count === 0 ? 0 : 1)) irregular = true;
    blanks = 0;
    let word = '';
    let wasQuoted = false;
    for (;;) {
      // Unquoted run up to a separator or an opening quote.
      let j = i;
      while (j < n) {
        c = line.charCodeAt(j);
        if (c === SPACE || c === TAB || c === QUOTE) break;
        j++;
      }
      word = word === '' ? line.slice(i, j) : word + line.slice(i, j);
      i = j;
      if (i >= n || c !== QUOTE) break;
      // Quoted run up to the closing quote, honouring backslash escapes.
      if (word !== '') irregular = true;
      wasQuoted = true;
      i++;
      let closed = false;
      while (i < n) {
        j = i;
        while (j < n) {
          c = line.charCodeAt(j);
          if (c === QUOTE || c === BACKSLASH) break;
          j++;
        }
        word += line.slice(i, j);
        i = j;
        if (i >= n) break;
        if (c === BACKSLASH) {
          irregular = true;
          if (i + 1 < n) word += line[i + 1];
          i += 2;
          continue;
        }
        i++; // the closing quote ends the word, as in add_param_to_argv()
        closed = true;
        break;
      }
      if (!closed) {
        buf.unterminatedQuote = true;
        irregular = true;
      }
      break;
    }
    words[count] = word;
    quoted[count] = wasQuoted;
    count++;
  }
  buf.count = count;
  buf.irregular = irregular || blanks > 0;
  buf.noBackslashOrCr = source.indexOf('\\') < 0 && source.indexOf('\r') < 0;
  return count;
}

/** True for an unquoted word that is an option name: `--name` or a one-letter `-x`. */
export function isOptionWord(word: string, quoted: boolean): boolean {
  if (quoted || word.length < 2 || word.charCodeAt(0) !== DASH) return false;
  const c1 = word.charCodeAt(1);
  if (c1 === DASH) return word.length > 2 && isAlnum(word.charCodeAt(2));
  return word.length === 2 && (isLetter(c1) || c1 === 52 /* 4 */ || c1 === 54 /* 6 */);
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isAlnum(c: number): boolean {
  return isLetter(c) || (c >= 48 && c <= 57);
}

/** Parses a decimal counter exactly; `'0'` (by far the most common) costs no BigInt parse. */
export function parseCounter(s: string): bigint | null {
  if (s === '0') return 0n;
  if (s.length === 0) return null;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  // Up to 15 digits a double is exact, and BigInt(number) is cheaper than parsing the string.
  if (s.length > 15) return BigInt(s);
  const v = +s;
  if (v >= SMALL_COUNTER_LIMIT) return BigInt(v);
  return (SMALL_COUNTERS[v] ??= BigInt(v));
}

// Counters below 65536 share one bigint each, made on first use (most rule counters of a dump).
const SMALL_COUNTER_LIMIT = 1 << 16;
const SMALL_COUNTERS: (bigint | undefined)[] = new Array<bigint | undefined>(SMALL_COUNTER_LIMIT).fill(undefined);

/** The largest value of a kernel packet or byte counter (`u64`): 2^64−1. */
export const U64_MAX = 0xffffffffffffffffn;

/** The counters of `[0:0]`, shared: most rules of a dump never matched. */
export const ZERO_COUNTERS: IptablesCounters = { packets: 0n, bytes: 0n };

/** At most this many distinct `[p:b]` texts share their counters object (see {@link parseBracketCounters}). */
const MAX_SHARED_COUNTERS = 1 << 16;

/**
 * Parses `[packets:bytes]` (iptables-save's counter syntax), or null when malformed.
 * With `shared`, equal texts give one shared (read-only) object, for the first
 * {@link MAX_SHARED_COUNTERS} distinct texts: a dump's rules repeat few counter pairs.
 */
export function parseBracketCounters(s: string, shared?: Map<string, IptablesCounters>): IptablesCounters | null {
  if (s === '[0:0]') return ZERO_COUNTERS;
  let counters = shared?.get(s);
  if (counters !== undefined) return counters;
  if (s.length < 5 || s.charCodeAt(0) !== 91 || s.charCodeAt(s.length - 1) !== 93) return null;
  const colon = s.indexOf(':');
  if (colon < 0) return null;
  const packets = parseCounter(s.slice(1, colon));
  const bytes = parseCounter(s.slice(colon + 1, s.length - 1));
  if (packets === null || bytes === null) return null;
  counters = { packets, bytes };
  if (shared !== undefined && shared.size < MAX_SHARED_COUNTERS) shared.set(s, counters);
  return counters;
}

/**
 * True when a `[packets:bytes]` text that {@link parseBracketCounters} accepted is written
 * the way iptables-save writes it (`%llu`: no leading zeros), so it can be written again
 * from the numbers.
 */
export function isCanonicalBracketCounters(s: string): boolean {
  const colon = s.indexOf(':');
  return (s.charCodeAt(1) !== 48 || colon === 2) && (s.charCodeAt(colon + 1) !== 48 || colon + 2 === s.length - 1);
}

/** A problem found in one rule; the caller turns it into a Diagnostic for the line. */
export interface RuleProblem {
  readonly code: string;
  readonly message: string;
}

/**
 * A rule target while parsing: `kind` is settled once all chains are known. An option-less
 * target's `name` is the word as read until then, when it becomes the name string of the
 * chain it names, or a copy.
 */
export interface ParsedTarget {
  name: string;
  kind: IptablesTargetKind;
  options: readonly IptablesOption[];
}

/** The fields of a rule that its words give (everything after `-A CHAIN`). */
export interface ParsedRuleBody {
  counters: IptablesCounters | null;
  source: IptablesNegatable | null;
  destination: IptablesNegatable | null;
  inInterface: IptablesNegatable | null;
  outInterface: IptablesNegatable | null;
  protocol: IptablesNegatable | null;
  fragment: { readonly negated: boolean } | null;
  matches: readonly IptablesMatch[];
  target: ParsedTarget | null;
  comment: string | null;
}

/**
 * What an option word means: a generic option (`--source` → `s`) or the name of a
 * module/target option (`--dport` → `dport`).
 */
interface OptionWord {
  /** The word itself (a copy). */
  readonly word: string;
  readonly generic: string | null;
  readonly name: string;
  /** The shared `--name value` options by value, and the negated ones (made on first use). */
  shared: Map<string, IptablesOption> | null;
  sharedNegated: Map<string, IptablesOption> | null;
  /** The shared option handed out last (rules in a row repeat values: `--mode random`). */
  last: IptablesOption | null;
}

/** Lengths of words below this have a slot of their own in the parser's last-seen lists. */
const RECENT_SLOTS = 32;

/** What one `-m` module name gives: its interned name and its shared matches. */
interface ModuleInfo {
  readonly module: string;
  /** The match without options (`-m tcp`), made on first use. */
  bare: IptablesMatch | null;
  /** Matches whose options are all shared, by their options. */
  readonly byOptions: SharedLists<IptablesOption, IptablesMatch>;
}

/** Long spellings of the generic options (iptables(8) "OPTIONS"), mapped to the short letter. */
const GENERIC_LONG: readonly (readonly [string, string])[] = [
  ['--source', 's'],
  ['--destination', 'd'],
  ['--protocol', 'p'],
  ['--in-interface', 'i'],
  ['--out-interface', 'o'],
  ['--fragment', 'f'],
  ['--match', 'm'],
  ['--jump', 'j'],
  ['--goto', 'g'],
  ['--set-counters', 'c'],
  ['--ipv4', '4'],
  ['--ipv6', '6'],
];

// The generic options with one value each: -s -d -i -o -p (iptables(8)).
const NO_FIELD = 0;
const SOURCE = 1;
const DESTINATION = 2;
const IN = 3;
const OUT = 4;
const PROTOCOL = 5;

/** Which of the fields above the generic option letter `short` sets, or NO_FIELD. */
function addressField(short: string): number {
  if (short.length !== 1) return NO_FIELD;
  switch (short.charCodeAt(0)) {
    case 115: // s
      return SOURCE;
    case 100: // d
      return DESTINATION;
    case 105: // i
      return IN;
    case 111: // o
      return OUT;
    case 112: // p
      return PROTOCOL;
    default:
      return NO_FIELD;
  }
}

// Shared empty lists: a model of 200k rules must not carry 200k empty arrays. Not frozen:
// frozen arrays have another elements kind and would make every reader's access polymorphic.
const NO_VALUES: readonly string[] = [];
const NO_OPTIONS: readonly IptablesOption[] = [];
const NO_MATCHES: readonly IptablesMatch[] = [];

/**
 * Lists of shared items, shared in turn: the list for the same items in the same order
 * is built once (a trie over item identity). Used for matches whose options are all
 * shared (`-m statistic --mode random --probability 0.5` is one object in every rule).
 */
class SharedLists<T extends object, L> {
  private readonly root = new Map<T, TrieNode<T, L>>();

  /** The node for `items[0..n)`, made on first use; its `value` is the shared list, once set. */
  node(items: readonly T[], n: number): TrieNode<T, L> {
    let map = this.root;
    let node: TrieNode<T, L> | undefined;
    for (let k = 0; k < n; k++) {
      const item = items[k]!;
      node = map.get(item);
      if (node === undefined) {
        node = { value: undefined, next: undefined };
        map.set(item, node);
      }
      if (k < n - 1) map = node.next ??= new Map();
    }
    return node!;
  }
}

interface TrieNode<T, L> {
  value: L | undefined;
  next: Map<T, TrieNode<T, L>> | undefined;
}

/** Options whose value is unique to one rule in practice (an endpoint address): not shared. */
export const UNSHARED_OPTIONS: ReadonlySet<string> = new Set(['to-destination', 'to-source', 'to']);

const OWNER_NONE = 0;
const OWNER_MATCH = 1;
const OWNER_TARGET = 2;

/**
 * Parses rule words into rule fields. One instance serves a whole document.
 *
 * Options are attributed the way iptables-save prints them: a `--long` option belongs
 * to the most recent `-m` match or `-j`/`-g` target; before any, it belongs to the
 * protocol match implied by `-p` (`-p tcp --dport 80` ≡ `-p tcp -m tcp --dport 80`).
 * `!` before an option negates it; the pre-1.4.3 `--opt ! value` / `-s ! addr` form is
 * accepted too. `-c PKTS BYTES` (from `iptables -S -v` / iptables-restore) sets counters.
 *
 * Memory: a kube-proxy dump repeats the same parts in thousands of rules (`-p tcp`,
 * `-m tcp`, `--mode random`, `--dport 80`, `-j KUBE-MARK-MASQ`, a service's comment), so
 * equal single-value options, option-less matches, protocol and interface values and
 * option-less targets are built once and shared (the model is read-only). Lists are
 * exact-size. On a 230k-line kube-proxy dump this cuts the model by about a quarter,
 * and with it the garbage collector's and the kernel's page-clearing work.
 */
export class RuleBodyParser {
  private readonly names = new Map<string, string>();
  private readonly optionWords = new Map<string, OptionWord>(
    GENERIC_LONG.map(([w, g]) => [w, { word: w, generic: g, name: w.slice(2), shared: null, sharedNegated: null, last: null }]),
  );
  /** The option word and the module last read, by length (see parse and closeOwner). */
  private readonly recentOptions: (OptionWord | null)[] = new Array<OptionWord | null>(RECENT_SLOTS).fill(null);
  private readonly recentModules: (ModuleInfo | null)[] = new Array<ModuleInfo | null>(RECENT_SLOTS).fill(null);
  /** Module names as read, and what they give. */
  private readonly modules = new Map<string, ModuleInfo>();
  private readonly sharedValues = new Map<string, IptablesNegatable>();
  private readonly sharedNegatedValues = new Map<string, IptablesNegatable>();
  // Scratch lists with explicit lengths (setting `.length` is a slow runtime call).
  private readonly pendingOptions: IptablesOption[] = [];
  private pendingOptionCount = 0;
  /** How many of the pending options are not shared objects. */
  private pendingUnsharedOptions = 0;
  private readonly pendingMatches: IptablesMatch[] = [];
  private pendingMatchCount = 0;
  /** How many of the pending matches are not shared objects. */
  private pendingUnsharedMatches = 0;
  /** One-item match lists of a shared match. */
  private readonly singleMatchLists = new Map<IptablesMatch, readonly IptablesMatch[]>();
  /** What the options being collected belong to: nothing yet, a match, or the target. */
  private ownerKind = OWNER_NONE;
  private ownerName = '';
  private targetGoto = false;
  private sawTarget = false;
  /** Option-less targets of the current table, shared; kinds are settled per table. */
  private targets = new Map<string, ParsedTarget>();

  /** `s` as the one shared string equal to it. */
  private intern(s: string): string {
    const known = this.names.get(s);
    if (known !== undefined) return known;
    const own = flatCopy(s);
    this.names.set(own, own);
    return own;
  }

  /**
   * Fills `body` (all fields must start null / empty) from `buf.words[start..count)`,
   * appending what it could not understand to `problems`; everything else is kept.
   * `targets` holds the option-less targets already seen in the rule's table (shared
   * between its rules, as their kind depends on the table's chains). Every string kept in
   * `body` is a copy, never a view into `buf`'s line, except the names of those targets:
   * the caller settles them (see ParsedTarget).
   */
  parse(buf: TokenBuffer, start: number, body: ParsedRuleBody, problems: RuleProblem[], targets: Map<string, ParsedTarget>): void {
    const { words, quoted, count } = buf;
    this.targets = targets;
    this.ownerKind = OWNER_NONE;
    this.sawTarget = false;
    let negate = false;
    let i = start;
    while (i < count) {
      const word = words[i]!;
      const q = quoted[i]!;
      if (!q && word === '!') {
        if (negate) problems.push({ code: 'double-negation', message: 'two "!" in a row' });
        negate = true;
        i++;
        continue;
      }
      if (!isOptionWord(word, q)) {
        problems.push({ code: 'unexpected-word', message: `word "${word}" does not follow an option` });
        negate = false;
        i++;
        continue;
      }
      let short: string;
      if (word.charCodeAt(1) === DASH) {
        // A rule's option words mostly differ in length: compare with the last one of this length before hashing.
        const len = word.length;
        const recent = len < RECENT_SLOTS ? this.recentOptions[len]! : null;
        let info = recent !== null && recent.word === word ? recent : this.optionWords.get(word);
        if (info === undefined) {
          info = { word: flatCopy(word), generic: null, name: flatCopy(word.slice(2)), shared: null, sharedNegated: null, last: null };
          this.optionWords.set(info.word, info);
        }
        if (len < RECENT_SLOTS) this.recentOptions[len] = info;
        if (info.generic === null) {
          i = this.moduleOption(info, buf, i + 1, negate, body, problems);
          negate = false;
          continue;
        }
        short = info.generic;
      } else {
        short = word[1]!;
      }
      i = this.genericOption(short, word, buf, i + 1, negate, body, problems);
      negate = false;
    }
    if (negate) problems.push({ code: 'dangling-negation', message: '"!" at the end of the rule negates nothing' });
    this.closeOwner(body);
    const m = this.pendingMatchCount;
    const pending = this.pendingMatches;
    if (m === 0) body.matches = NO_MATCHES;
    else if (this.pendingUnsharedMatches === 0 && m === 1) {
      // A lone shared match (`-m tcp`, `-m statistic …`): its one-item list is shared too.
      const only = pending[0]!;
      let list = this.singleMatchLists.get(only);
      if (list === undefined) {
        list = [only];
        this.singleMatchLists.set(only, list);
      }
      body.matches = list;
    }
    else body.matches = exactCopy(pending, m);
    this.pendingMatchCount = 0;
    this.pendingUnsharedMatches = 0;
    body.comment = joinComments(body.matches);
  }

  /** `[!] --name values…` of the current match or target; returns the index after it. */
  private moduleOption(info: OptionWord, buf: TokenBuffer, i: number, negated: boolean, body: ParsedRuleBody, problems: RuleProblem[]): number {
    const { words, quoted, count } = buf;
    const name = info.name;
    if (i + 1 < count && !quoted[i] && words[i] === '!' && !isOptionWord(words[i + 1]!, quoted[i + 1]!)) {
      negated = true; // legacy `--opt ! value`
      i++;
    }
    const first = i;
    while (i < count && !isOptionWord(words[i]!, quoted[i]!) && !(words[i] === '!' && !quoted[i])) i++;
    if (this.ownerKind === OWNER_NONE && !this.openImpliedProtocolMatch(body, name, problems)) return i;
    let option: IptablesOption;
    if (i === first + 1 && !UNSHARED_OPTIONS.has(name)) {
      option = sharedOption(info, negated, words[first]!);
    } else {
      option = { name, negated, values: i === first ? NO_VALUES : flatWords(words, first, i) };
      this.pendingUnsharedOptions++;
    }
    this.pendingOptions[this.pendingOptionCount++] = option;
    return i;
  }

  /** The one `{value, negated}` object for a generic option value. */
  private sharedValue(value: string, negated: boolean): IptablesNegatable {
    const map = negated ? this.sharedNegatedValues : this.sharedValues;
    let v = map.get(value);
    if (v === undefined) {
      v = { value: flatCopy(value), negated };
      map.set(value, v);
    }
    return v;
  }

  /** Handles one generic option whose value words start at `i`; returns the index after them. */
  private genericOption(
    short: string,
    word: string,
    buf: TokenBuffer,
    i: number,
    negated: boolean,
    body: ParsedRuleBody,
    problems: RuleProblem[],
  ): number {
    const { words, quoted, count } = buf;
    const field = addressField(short);
    if (field !== NO_FIELD) {
      if (i < count && words[i] === '!' && !quoted[i] && i + 1 < count) {
        negated = true; // legacy `-s ! 10.0.0.0/8`
        i++;
      }
      if (i >= count || isOptionWord(words[i]!, quoted[i]!)) {
        problems.push({ code: 'missing-value', message: `${word} needs a value` });
        return i;
      }
      const given =
        field === SOURCE ? body.source : field === DESTINATION ? body.destination : field === PROTOCOL ? body.protocol : field === IN ? body.inInterface : body.outInterface;
      if (given !== null) {
        problems.push({ code: 'duplicate-option', message: `${word} given twice; the first is kept` });
      } else if (field === SOURCE) {
        // Protocols and interfaces repeat; addresses mostly do not, and a big map costs more than it saves.
        body.source = { value: flatCopy(words[i]!), negated };
      } else if (field === DESTINATION) {
        body.destination = { value: flatCopy(words[i]!), negated };
      } else {
        const v = this.sharedValue(words[i]!, negated);
        if (field === PROTOCOL) body.protocol = v;
        else if (field === IN) body.inInterface = v;
        else body.outInterface = v;
      }
      return i + 1;
    }
    switch (short) {
      case 'f':
        body.fragment = { negated };
        return i;
      case 'm': {
        if (negated) problems.push({ code: 'bad-negation', message: '"!" cannot negate -m' });
        if (i >= count || isOptionWord(words[i]!, quoted[i]!)) {
          problems.push({ code: 'missing-value', message: `${word} needs a module name` });
          return i;
        }
        this.open(body, OWNER_MATCH, words[i]!);
        return i + 1;
      }
      case 'j':
      case 'g': {
        if (negated) problems.push({ code: 'bad-negation', message: `"!" cannot negate ${word}` });
        if (i >= count || isOptionWord(words[i]!, quoted[i]!)) {
          problems.push({ code: 'missing-value', message: `${word} needs a target` });
          return i;
        }
        if (this.sawTarget) {
          problems.push({ code: 'duplicate-option', message: 'a second target; the first is kept' });
          return i + 1;
        }
        this.sawTarget = true;
        this.open(body, OWNER_TARGET, words[i]!);
        this.targetGoto = short === 'g';
        return i + 1;
      }
      case 'c': {
        const packets = i < count ? parseCounter(words[i]!) : null;
        const bytes = i + 1 < count ? parseCounter(words[i + 1]!) : null;
        if (packets === null || bytes === null) {
          problems.push({ code: 'bad-counters', message: `${word} needs two decimal counters` });
          return i;
        }
        body.counters = packets === 0n && bytes === 0n ? ZERO_COUNTERS : { packets, bytes };
        return i + 2;
      }
      case '4':
      case '6':
        // iptables-restore files shared by both families; the family is the dump's, not the rule's.
        problems.push({ code: 'ignored-option', message: `${word} (family selector) is ignored` });
        return i;
      default: {
        problems.push({ code: 'unknown-option', message: `unknown option ${word}` });
        while (i < count && !isOptionWord(words[i]!, quoted[i]!) && !(words[i] === '!' && !quoted[i])) i++;
        return i;
      }
    }
  }

  /** Starts collecting options for a match (module name) or the target (target name). */
  private open(body: ParsedRuleBody, kind: number, name: string): void {
    this.closeOwner(body);
    this.ownerKind = kind;
    this.ownerName = name;
  }

  /** Builds the match or target whose options were being collected. */
  private closeOwner(body: ParsedRuleBody): void {
    const n = this.pendingOptionCount;
    if (this.ownerKind === OWNER_MATCH) {
      const len = this.ownerName.length;
      const recent = len < RECENT_SLOTS ? this.recentModules[len]! : null;
      let info = recent !== null && recent.module === this.ownerName ? recent : this.modules.get(this.ownerName);
      if (info === undefined) {
        info = { module: this.intern(this.ownerName), bare: null, byOptions: new SharedLists() };
        this.modules.set(info.module, info);
      }
      if (len < RECENT_SLOTS) this.recentModules[len] = info;
      const module = info.module;
      let match: IptablesMatch;
      if (n === 0) {
        match = info.bare ??= { module, options: NO_OPTIONS };
      } else if (this.pendingUnsharedOptions === 0 && n <= 3) {
        // Every option shared: so is the match (`-m statistic --mode random --probability 0.5`).
        const node = info.byOptions.node(this.pendingOptions, n);
        match = node.value ??= { module, options: exactCopy(this.pendingOptions, n) };
      } else {
        match = { module, options: exactCopy(this.pendingOptions, n) };
        this.pendingUnsharedMatches++;
      }
      this.pendingMatches[this.pendingMatchCount++] = match;
    } else if (this.ownerKind === OWNER_TARGET) {
      const kind = this.targetGoto ? 'goto' : 'jump';
      if (n > 0) {
        body.target = { name: this.intern(this.ownerName), kind, options: exactCopy(this.pendingOptions, n) };
      } else {
        // `kind` is provisional (settled later); goto and jump to one name stay distinct.
        const key = this.targetGoto ? `-g ${this.ownerName}` : this.ownerName;
        let target = this.targets.get(key);
        if (target === undefined) {
          target = { name: this.ownerName, kind, options: NO_OPTIONS };
          this.targets.set(key, target);
        }
        body.target = target;
      }
    }
    this.pendingOptionCount = 0;
    this.pendingUnsharedOptions = 0;
    this.ownerKind = OWNER_NONE;
  }

  /** Opens the protocol match `-p NAME` implies for an option given before any `-m`; false (with a problem) if none. */
  private openImpliedProtocolMatch(body: ParsedRuleBody, option: string, problems: RuleProblem[]): boolean {
    const proto = body.protocol;
    if (proto !== null && !proto.negated && /^[a-z][a-z0-9-]*$/i.test(proto.value)) {
      this.open(body, OWNER_MATCH, proto.value.toLowerCase());
      return true;
    }
    problems.push({ code: 'option-without-module', message: `--${option} follows no -m, -j or -p; dropped` });
    return false;
  }
}

/** The one option object for `[!] --name value` (`info` is `--name`'s). */
function sharedOption(info: OptionWord, negated: boolean, value: string): IptablesOption {
  const last = info.last;
  if (last !== null && last.negated === negated && last.values[0] === value) return last;
  const byValue = negated ? (info.sharedNegated ??= new Map()) : (info.shared ??= new Map());
  let option = byValue.get(value);
  if (option === undefined) {
    option = { name: info.name, negated, values: [flatCopy(value)] };
    byValue.set(value, option);
  }
  info.last = option;
  return option;
}

/**
 * The first `n` items as a new exact-size array. Short lists are array literals: V8
 * tracks literal allocation sites and allocates long-lived ones directly in the old
 * generation, sparing the copying a 200k-rule model would otherwise cost the scavenger.
 */
function exactCopy<T>(items: readonly T[], n: number): T[] {
  switch (n) {
    case 1:
      return [items[0]!];
    case 2:
      return [items[0]!, items[1]!];
    case 3:
      return [items[0]!, items[1]!, items[2]!];
    default:
      return items.slice(0, n);
  }
}

/** `words[first..end)` as a new array of strings of their own. */
function flatWords(words: readonly string[], first: number, end: number): string[] {
  if (end - first === 1) return [flatCopy(words[first]!)]; // a literal, as in exactCopy
  const out = words.slice(first, end);
  for (let k = 0; k < out.length; k++) out[k] = flatCopy(out[k]!);
  return out;
}

function joinComments(matches: readonly IptablesMatch[]): string | null {
  let joined: string | null = null;
  for (let i = 0; i < matches.length; i++) {
    const m = matches[i]!;
    if (m.module !== 'comment') continue;
    for (let k = 0; k < m.options.length; k++) {
      const o = m.options[k]!;
      if (o.name !== 'comment' || o.values.length === 0) continue;
      joined = joined === null ? o.values[0]! : joined + IPTABLES_COMMENT_JOINER + o.values[0]!;
    }
  }
  return joined;
}

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

import { IPTABLES_COMMENT_JOINER } from '../model/iptables.js';
import type {
  IptablesCounters,
  IptablesMatch,
  IptablesNegatable,
  IptablesOption,
  IptablesTarget,
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
  const { words, quoted } = buf;
  let count = 0;
  buf.unterminatedQuote = false;
  const n = line.length;
  let i = 0;
  while (i < n) {
    let c = line.charCodeAt(i);
    if (c === SPACE || c === TAB) {
      i++;
      continue;
    }
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
          if (i + 1 < n) word += line[i + 1];
          i += 2;
          continue;
        }
        i++; // the closing quote ends the word, as in add_param_to_argv()
        closed = true;
        break;
      }
      if (!closed) buf.unterminatedQuote = true;
      break;
    }
    words[count] = word;
    quoted[count] = wasQuoted;
    count++;
  }
  buf.count = count;
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
  return BigInt(s);
}

/** Parses `[packets:bytes]` (iptables-save's counter syntax), or null when malformed. */
export function parseBracketCounters(s: string): IptablesCounters | null {
  if (s.length < 5 || s.charCodeAt(0) !== 91 || s.charCodeAt(s.length - 1) !== 93) return null;
  const colon = s.indexOf(':');
  if (colon < 0) return null;
  const packets = parseCounter(s.slice(1, colon));
  const bytes = parseCounter(s.slice(colon + 1, s.length - 1));
  return packets === null || bytes === null ? null : { packets, bytes };
}

/** A problem found in one rule; the caller turns it into a Diagnostic for the line. */
export interface RuleProblem {
  readonly code: string;
  readonly message: string;
}

/** A rule target while parsing: `kind` is settled once all chains are known. */
export interface ParsedTarget {
  name: string;
  kind: IptablesTargetKind;
  options: IptablesOption[];
}

/** The rule body (everything after `-A CHAIN`), before it is placed in a chain. */
export interface ParsedRuleBody {
  counters: IptablesCounters | null;
  source: IptablesNegatable | null;
  destination: IptablesNegatable | null;
  inInterface: IptablesNegatable | null;
  outInterface: IptablesNegatable | null;
  protocol: IptablesNegatable | null;
  fragment: { readonly negated: boolean } | null;
  matches: IptablesMatch[];
  target: ParsedTarget | null;
  comment: string | null;
}

/** Long spellings of the generic options (iptables(8) "OPTIONS"), mapped to the short letter. */
const GENERIC_LONG: Readonly<Record<string, string>> = {
  source: 's',
  destination: 'd',
  protocol: 'p',
  'in-interface': 'i',
  'out-interface': 'o',
  fragment: 'f',
  match: 'm',
  jump: 'j',
  goto: 'g',
  'set-counters': 'c',
  ipv4: '4',
  ipv6: '6',
};

type AddressField = 'source' | 'destination' | 'inInterface' | 'outInterface' | 'protocol';

const SHORT_FIELD: Readonly<Record<string, AddressField>> = {
  s: 'source',
  d: 'destination',
  i: 'inInterface',
  o: 'outInterface',
  p: 'protocol',
};

/**
 * Parses rule words `buf.words[start..buf.count)` into a rule body, appending what it
 * could not understand to `problems` (the rule is kept with everything else).
 *
 * Options are attributed the way iptables-save prints them: a `--long` option belongs
 * to the most recent `-m` match or `-j`/`-g` target; before any, it belongs to the
 * protocol match implied by `-p` (`-p tcp --dport 80` ≡ `-p tcp -m tcp --dport 80`).
 * `!` before an option negates it; the pre-1.4.3 `--opt ! value` / `-s ! addr` form is
 * accepted too. `-c PKTS BYTES` (from `iptables -S -v` / iptables-restore) sets counters.
 */
export function parseRuleBody(buf: TokenBuffer, start: number, problems: RuleProblem[]): ParsedRuleBody {
  const { words, quoted, count } = buf;
  const body: ParsedRuleBody = {
    counters: null,
    source: null,
    destination: null,
    inInterface: null,
    outInterface: null,
    protocol: null,
    fragment: null,
    matches: [],
    target: null,
    comment: null,
  };
  const state: OwnerState = { owner: null };
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
    let short: string | undefined;
    if (word.charCodeAt(1) === DASH) {
      short = GENERIC_LONG[word.slice(2)];
      if (short === undefined) {
        // A module or target option: name then its values.
        const name = word.slice(2);
        i++;
        let negated = negate;
        negate = false;
        if (i + 1 < count && !quoted[i] && words[i] === '!' && !isOptionWord(words[i + 1]!, quoted[i + 1]!)) {
          negated = true; // legacy `--opt ! value`
          i++;
        }
        const values: string[] = [];
        while (i < count && !isOptionWord(words[i]!, quoted[i]!) && !(words[i] === '!' && !quoted[i])) {
          values.push(words[i]!);
          i++;
        }
        if (state.owner === null) state.owner = impliedProtocolMatch(body, name, problems);
        if (state.owner !== null) state.owner.push({ name, negated, values });
        continue;
      }
    } else {
      short = word[1]!;
    }
    i = parseGenericOption(short, word, buf, i + 1, negate, body, problems, state);
    negate = false;
  }
  if (negate) problems.push({ code: 'dangling-negation', message: '"!" at the end of the rule negates nothing' });
  body.comment = joinComments(body.matches);
  return body;
}

/** Where the next `--option` goes: the options of the last `-m` match or of the target. */
interface OwnerState {
  owner: IptablesOption[] | null;
}

/**
 * Handles one generic option whose value words start at `i`; returns the index after
 * them. Sets `state.owner` when the option opens a match or target.
 */
function parseGenericOption(
  short: string,
  word: string,
  buf: TokenBuffer,
  i: number,
  negated: boolean,
  body: ParsedRuleBody,
  problems: RuleProblem[],
  state: OwnerState,
): number {
  const { words, quoted, count } = buf;
  const field = SHORT_FIELD[short];
  if (field !== undefined) {
    if (i < count && words[i] === '!' && !quoted[i] && i + 1 < count) {
      negated = true; // legacy `-s ! 10.0.0.0/8`
      i++;
    }
    if (i >= count || isOptionWord(words[i]!, quoted[i]!)) {
      problems.push({ code: 'missing-value', message: `${word} needs a value` });
      return i;
    }
    if (body[field] !== null) {
      problems.push({ code: 'duplicate-option', message: `${word} given twice; the first is kept` });
    } else {
      body[field] = { value: words[i]!, negated };
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
      const options: IptablesOption[] = [];
      body.matches.push({ module: words[i]!, options });
      state.owner = options;
      return i + 1;
    }
    case 'j':
    case 'g': {
      if (negated) problems.push({ code: 'bad-negation', message: `"!" cannot negate ${word}` });
      if (i >= count || isOptionWord(words[i]!, quoted[i]!)) {
        problems.push({ code: 'missing-value', message: `${word} needs a target` });
        return i;
      }
      if (body.target !== null) {
        problems.push({ code: 'duplicate-option', message: 'a second target; the first is kept' });
        return i + 1;
      }
      const options: IptablesOption[] = [];
      body.target = { name: words[i]!, kind: short === 'g' ? 'goto' : 'jump', options };
      state.owner = options;
      return i + 1;
    }
    case 'c': {
      const packets = i < count ? parseCounter(words[i]!) : null;
      const bytes = i + 1 < count ? parseCounter(words[i + 1]!) : null;
      if (packets === null || bytes === null) {
        problems.push({ code: 'bad-counters', message: `${word} needs two decimal counters` });
        return i;
      }
      body.counters = { packets, bytes };
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

/** The protocol match `-p NAME` implies for an option given before any `-m`, or null (with a problem). */
function impliedProtocolMatch(body: ParsedRuleBody, option: string, problems: RuleProblem[]): IptablesOption[] | null {
  const proto = body.protocol;
  if (proto !== null && !proto.negated && /^[a-z][a-z0-9-]*$/i.test(proto.value)) {
    const options: IptablesOption[] = [];
    body.matches.push({ module: proto.value.toLowerCase(), options });
    return options;
  }
  problems.push({ code: 'option-without-module', message: `--${option} follows no -m, -j or -p; dropped` });
  return null;
}

function joinComments(matches: readonly IptablesMatch[]): string | null {
  let joined: string | null = null;
  for (const m of matches) {
    if (m.module !== 'comment') continue;
    for (const o of m.options) {
      if (o.name !== 'comment' || o.values.length === 0) continue;
      joined = joined === null ? o.values[0]! : joined + IPTABLES_COMMENT_JOINER + o.values[0]!;
    }
  }
  return joined;
}

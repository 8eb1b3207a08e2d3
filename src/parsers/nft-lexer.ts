/**
 * A linear, streaming tokenizer for nft(8) text (`nft list ruleset` and `nft -f` files).
 *
 * nft separates almost every token by white space, so a "word" runs until white space or one
 * of `{ } ; , "`; addresses with ports (`10.0.0.1:80`, `[fd00::1]:80`), prefixes, ranges and
 * kube-proxy chain names (`service-X-ns/svc/tcp/`, `…__fd00.10.180..2.1/80`) stay one word.
 * `#` starts a comment to the end of the line, except two comments nft itself prints inside
 * rules: `# handle N` (`nft -a`) becomes a `handle` token and `# xt_NAME` (iptables-nft
 * compat expression, nft without libxtables) becomes an `xt` token, the rest of the line
 * being tokenized as usual. The lexer is a cursor over the text (no object per token), so
 * memory stays flat and little garbage is made on rulesets of hundreds of thousands of lines.
 */

/** Kinds of token. `punct` is one of `{ } ; ,`; `nl` is an end of line. */
export type NftTokenType = 'word' | 'string' | 'punct' | 'nl' | 'handle' | 'xt' | 'eof';

/** A token kept for a diagnostic: `value` is the word, the unquoted string, the punctuation, the handle digits or the xt name. */
export interface NftToken {
  readonly type: NftTokenType;
  readonly value: string;
  /** 1-based line of the token's first character. */
  readonly line: number;
  /** Offsets into the text: `text.slice(start, end)` is the token as written. */
  readonly start: number;
  readonly end: number;
  /** For strings: the closing quote was missing. */
  readonly unterminated?: boolean;
}

/** Token kinds as numbers (the lexer's `kind`); {@link TOKEN_TYPES} names them. */
export const WORD = 0;
export const STRING = 1;
export const PUNCT_TOKEN = 2;
export const NL = 3;
export const HANDLE = 4;
export const XT = 5;
export const EOF = 6;
/** One of the token kind numbers above. */
export type NftTokenKind = 0 | 1 | 2 | 3 | 4 | 5 | 6;
/** The {@link NftTokenType} of each token kind number. */
export const TOKEN_TYPES: readonly NftTokenType[] = ['word', 'string', 'punct', 'nl', 'handle', 'xt', 'eof'];

// Character classes by char code (ASCII); everything else is part of a word.
const SPACE = 1;
const PUNCT = 2;
const STOP = 4; // ends a word: space, punctuation, newline, `"`, `#`
const CLASS = new Uint8Array(128);
for (const c of ' \t\r\f\v') CLASS[c.charCodeAt(0)] = SPACE | STOP;
for (const c of '{};,') CLASS[c.charCodeAt(0)] = PUNCT | STOP;
for (const c of '\n"#') CLASS[c.charCodeAt(0)] = STOP;
const isClass = (code: number, cls: number): boolean => code < 128 && ((CLASS[code] as number) & cls) !== 0;
const HANDLE_COMMENT = /^#\s*handle\s+(\d+)/;

// Words nft and kube-proxy repeat on most lines: `value()` hands out these constant strings
// instead of a new copy each time (no allocation; Set and Map lookups on them are cheaper).
const COMMON_WORDS = [
  'ip', 'ip6', 'inet', 'saddr', 'daddr', 'sport', 'dport', 'meta', 'l4proto', 'tcp', 'udp', 'sctp', 'th',
  'ct', 'state', 'mark', 'jump', 'goto', 'accept', 'drop', 'return', 'continue', 'dnat', 'snat',
  'masquerade', 'to', 'numgen', 'random', 'mod', 'vmap', 'map', 'set', 'counter', 'packets', 'bytes',
  'comment', 'type', 'hook', 'priority', 'policy', 'chain', 'table', 'elements', 'flags', 'timeout',
  '.', ':', '=', '!=', '==', '/', 'iifname', 'oifname', 'fib', 'local', 'reject', 'log', 'established',
  'related', 'new', 'invalid', 'interval', 'ipv4_addr', 'ipv6_addr', 'inet_proto', 'inet_service',
  'verdict', 'filter', 'nat', 'prerouting', 'postrouting', 'output', 'input', 'forward', 'dstnat',
  'srcnat', 'add', 'rule', 'element', 'insert', 'handle', 'mark-for-masquerade', 'fully-random',
  'nexthdr', 'protocol', 'notrack', 'with', 'icmp', 'icmpv6', 'offset', 'services',
];
const WORD_TABLE: (string | undefined)[] = new Array(1024).fill(undefined);
const wordSlot = (len: number, first: number, last: number): number => (len * 131 + first * 31 + last) & 1023;
for (const w of COMMON_WORDS) {
  const slot = wordSlot(w.length, w.charCodeAt(0), w.charCodeAt(w.length - 1));
  // On a clash the first word keeps the slot; the other is sliced as any word.
  if (WORD_TABLE[slot] === undefined) WORD_TABLE[slot] = w;
}

/**
 * Streaming tokenizer over a cursor: the current token is `kind`, `start`, `end` and `line`;
 * {@link next} moves to the following one. Nothing is allocated per token: a token's text is
 * sliced only when {@link value} asks for it, keywords are compared in place ({@link is}),
 * and {@link token} makes an object only for a diagnostic. One token of look-ahead
 * ({@link peekKind}, {@link peekIs}, …) scans the following token once; {@link next} takes it.
 */
export class NftLexer {
  /** Kind of the current token. */
  kind: NftTokenKind = EOF;
  /** Offsets of the current token: `text.slice(start, end)` is the token as written. */
  start = 0;
  end = 0;
  /** 1-based line of the current token's first character. */
  line = 1;
  /** End offset of the last token consumed by {@link next} (0 before any). */
  lastEnd = 0;
  /** String tokens whose closing quote was missing (the parser reports them). */
  readonly unterminatedStrings: NftToken[] = [];
  // The value's span (word: the token; string: inside the quotes; handle: the digits; xt: the name).
  private vStart = 0;
  private vEnd = 0;
  // A string token with backslash escapes (its value is unescaped when asked for).
  private escaped = false;
  private unterminated = false;
  // The current token's value once asked for (parsers ask more than once).
  private cached: string | undefined;
  // Scan position (after the current token) and its line.
  private pos = 0;
  private scanLine = 1;
  // The token after the current one, when a look-ahead scanned it (`next` then takes it from here).
  private hasAhead = false;
  private aKind: NftTokenKind = EOF;
  private aStart = 0;
  private aEnd = 0;
  private aLine = 1;
  private aVStart = 0;
  private aVEnd = 0;
  private aEscaped = false;
  private aUnterminated = false;
  private aPos = 0;
  private aScanLine = 1;
  private aCached: string | undefined;
  private lastUnterminated = -1;

  constructor(readonly text: string) {
    this.scan();
  }

  /** Consumes the current token. */
  next(): void {
    this.lastEnd = this.end;
    if (!this.hasAhead) {
      this.scan();
      return;
    }
    // A look-ahead scanned the following token already.
    this.hasAhead = false;
    this.kind = this.aKind;
    this.start = this.aStart;
    this.end = this.aEnd;
    this.line = this.aLine;
    this.vStart = this.aVStart;
    this.vEnd = this.aVEnd;
    this.escaped = this.aEscaped;
    this.unterminated = this.aUnterminated;
    this.cached = this.aCached;
    this.pos = this.aPos;
    this.scanLine = this.aScanLine;
  }

  /** The current token's value: the word, the unquoted string, the punctuation, the handle digits or the xt name. */
  value(): string {
    let v = this.cached;
    if (v === undefined) {
      v = this.valueOf(this.kind, this.vStart, this.vEnd, this.escaped);
      this.cached = v;
    }
    return v;
  }

  /** The value of a token of `kind` whose value spans `from`–`to`. */
  private valueOf(kind: NftTokenKind, from: number, to: number, escaped: boolean): string {
    const text = this.text;
    if (escaped) return unescape(text, from, to);
    const len = to - from;
    if (kind === WORD && len <= 20) {
      const w = WORD_TABLE[wordSlot(len, text.charCodeAt(from), text.charCodeAt(to - 1))];
      if (w !== undefined && w.length === len && text.startsWith(w, from)) return w;
    }
    return text.slice(from, to);
  }

  /** Whether the current token is the word `word`. */
  is(word: string): boolean {
    return this.kind === WORD && this.end - this.start === word.length && this.text.startsWith(word, this.start);
  }

  /** Whether the current token is the punctuation with char code `code`. */
  isPunct(code: number): boolean {
    return this.kind === PUNCT_TOKEN && this.text.charCodeAt(this.start) === code;
  }

  /** First char code of the current token. */
  firstCode(): number {
    return this.text.charCodeAt(this.start);
  }

  /** The current token as an object (for diagnostics and errors). */
  token(): NftToken {
    const t: { -readonly [K in keyof NftToken]: NftToken[K] } = {
      type: TOKEN_TYPES[this.kind] as NftTokenType,
      value: this.kind === EOF ? '' : this.kind === NL ? '\n' : this.value(),
      line: this.line,
      start: this.start,
      end: this.end,
    };
    if (this.unterminated) t.unterminated = true;
    return t;
  }

  /** Kind of the token after the current one. */
  peekKind(): NftTokenKind {
    this.ahead();
    return this.aKind;
  }

  /** Whether the token after the current one is the word `word`. */
  peekIs(word: string): boolean {
    this.ahead();
    return this.aKind === WORD && this.aEnd - this.aStart === word.length && this.text.startsWith(word, this.aStart);
  }

  /** The value of the token after the current one (see {@link value}). */
  peekValue(): string {
    this.ahead();
    let v = this.aCached;
    if (v === undefined) {
      v = this.valueOf(this.aKind, this.aVStart, this.aVEnd, this.aEscaped);
      this.aCached = v;
    }
    return v;
  }

  /** Text of the token after the current one, as written (quotes included). */
  peekText(): string {
    this.ahead();
    return this.text.slice(this.aStart, this.aEnd);
  }

  /** The whole line holding text offset `offset` (for diagnostics), without its newline. */
  lineAt(offset: number): string {
    const start = this.text.lastIndexOf('\n', offset - 1) + 1;
    const end = this.text.indexOf('\n', offset);
    return this.text.slice(start, end < 0 ? this.text.length : end);
  }

  /** Scans the following token into the `a…` fields (once per token), leaving the current one as it is. */
  private ahead(): void {
    if (this.hasAhead) return;
    const { kind, start, end, line, vStart, vEnd, escaped, unterminated, cached, pos, scanLine } = this;
    this.scan();
    this.hasAhead = true;
    this.aKind = this.kind;
    this.aStart = this.start;
    this.aEnd = this.end;
    this.aLine = this.line;
    this.aVStart = this.vStart;
    this.aVEnd = this.vEnd;
    this.aEscaped = this.escaped;
    this.aUnterminated = this.unterminated;
    this.aPos = this.pos;
    this.aScanLine = this.scanLine;
    this.aCached = undefined;
    this.kind = kind;
    this.start = start;
    this.end = end;
    this.line = line;
    this.vStart = vStart;
    this.vEnd = vEnd;
    this.escaped = escaped;
    this.unterminated = unterminated;
    this.cached = cached;
    this.pos = pos;
    this.scanLine = scanLine;
  }

  private set(kind: NftTokenKind, start: number, end: number, vStart: number, vEnd: number): void {
    this.kind = kind;
    this.start = start;
    this.end = end;
    this.vStart = vStart;
    this.vEnd = vEnd;
    this.line = this.scanLine;
    this.escaped = false;
    this.unterminated = false;
    this.cached = undefined;
  }

  private scan(): void {
    const text = this.text;
    let p = this.pos;
    for (;;) {
      const code = text.charCodeAt(p);
      if (code !== code) {
        // NaN: end of text.
        this.set(EOF, p, p, p, p);
        this.pos = p;
        return;
      }
      if (code < 128) {
        const cls = CLASS[code] as number;
        if ((cls & SPACE) !== 0) {
          p++;
          continue;
        }
        if (code === 0x0a) {
          this.set(NL, p, p + 1, p, p + 1);
          this.pos = p + 1;
          this.scanLine++;
          return;
        }
        if ((cls & PUNCT) !== 0) {
          this.set(PUNCT_TOKEN, p, p + 1, p, p + 1);
          this.pos = p + 1;
          return;
        }
        if (code === 0x5c && text.charCodeAt(p + 1) === 0x0a) {
          // Line continuation.
          p += 2;
          this.scanLine++;
          continue;
        }
        if (code === 0x23) {
          const after = this.comment(p);
          if (after < 0) return;
          p = after;
          continue;
        }
        if (code === 0x22) {
          // A string, read here rather than in a method of its own: `scan` then stays too big
          // for V8 to inline into each caller of `next` (the inlined copies made the compile
          // of the parser a third longer).
          const start = p;
          let escaped = false;
          for (p++; ; ) {
            const c = text.charCodeAt(p);
            if (c !== c || c === 0x0a) {
              this.set(STRING, start, p, start + 1, p);
              this.escaped = escaped;
              this.unterminated = true;
              this.pos = p;
              // A look-ahead may scan the same string twice: record it once.
              if (start > this.lastUnterminated) {
                this.lastUnterminated = start;
                this.unterminatedStrings.push(this.token());
              }
              return;
            }
            if (c === 0x5c && p + 1 < text.length && text.charCodeAt(p + 1) !== 0x0a) {
              escaped = true;
              p += 2;
              continue;
            }
            if (c === 0x22) {
              this.set(STRING, start, p + 1, start + 1, p);
              this.escaped = escaped;
              this.pos = p + 1;
              return;
            }
            p++;
          }
        }
      }
      let q = p + 1;
      for (;;) {
        const c = text.charCodeAt(q);
        if (c !== c || (c < 128 && ((CLASS[c] as number) & STOP) !== 0)) break;
        q++;
      }
      this.set(WORD, p, q, p, q);
      this.pos = q;
      return;
    }
  }

  /**
   * The comment at `start`: a `handle` or `xt` token for the two comments nft prints in
   * rules (returns -1), else skipped (returns the offset of its end of line).
   */
  private comment(start: number): number {
    const text = this.text;
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const cap = Math.min(end, start + 40);
    let digits = -1;
    let q = start + 9;
    // `# handle N` as nft prints it; any other spacing goes through the regular expression.
    if (text.startsWith('# handle ', start)) {
      for (let c = text.charCodeAt(q); q < cap && (c === 32 || c === 9 || c === 11 || c === 12 || c === 13); c = text.charCodeAt(++q));
      digits = q;
      while (q < cap && isDigit(text.charCodeAt(q))) q++;
      if (q === digits) digits = -1;
    }
    if (digits < 0) {
      const m = HANDLE_COMMENT.exec(text.slice(start, cap));
      if (m?.[1]) {
        q = start + m[0].length;
        digits = q - m[1].length;
      }
    }
    if (digits >= 0) {
      this.set(HANDLE, start, end, digits, q);
      this.pos = end;
      return -1;
    }
    if (text.startsWith('# xt_', start)) {
      let p = start + 5;
      while (p < end && !isClass(text.charCodeAt(p), SPACE)) p++;
      this.set(XT, start, p, start + 5, p);
      this.pos = p;
      return -1;
    }
    return end;
  }
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/** The content of a quoted string between `from` and `to`, each `\x` read as `x`. */
function unescape(text: string, from: number, to: number): string {
  let value = '';
  let chunk = from;
  for (let p = from; p < to; p++) {
    if (text.charCodeAt(p) === 0x5c && p + 1 < text.length && text.charCodeAt(p + 1) !== 0x0a) {
      value += text.slice(chunk, p) + text[p + 1];
      p++;
      chunk = p + 1;
    }
  }
  return value + text.slice(chunk, to);
}

/**
 * `text` with every run of white space outside double quotes collapsed to one space and
 * trimmed: the form a rule's `raw` takes (iptables-nft prints double spaces).
 */
export function collapseSpaces(text: string): string {
  // Most rules are printed with single spaces: nothing to do.
  if (!/\s\s|[\t\n\r]/.test(text) && text.trim() === text) return text;
  let out = '';
  let inQuote = false;
  let pendingSpace = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (!inQuote && (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r')) {
      pendingSpace = out.length > 0;
      continue;
    }
    if (pendingSpace) {
      out += ' ';
      pendingSpace = false;
    }
    if (ch === '"' && text[i - 1] !== '\\') inQuote = !inQuote;
    out += ch;
  }
  return out;
}

/**
 * A linear, streaming tokenizer for nft(8) text (`nft list ruleset` and `nft -f` files).
 *
 * nft separates almost every token by white space, so a "word" runs until white space or one
 * of `{ } ; , "`; addresses with ports (`10.0.0.1:80`, `[fd00::1]:80`), prefixes, ranges and
 * kube-proxy chain names (`service-X-ns/svc/tcp/`, `…__fd00.10.180..2.1/80`) stay one word.
 * `#` starts a comment to the end of the line, except two comments nft itself prints inside
 * rules: `# handle N` (`nft -a`) becomes a `handle` token and `# xt_NAME` (iptables-nft
 * compat expression, nft without libxtables) becomes an `xt` token, the rest of the line
 * being tokenized as usual. Tokens are produced on demand so memory stays flat on rulesets
 * of hundreds of thousands of lines.
 */

/** Kinds of token. `punct` is one of `{ } ; ,`; `nl` is an end of line. */
export type NftTokenType = 'word' | 'string' | 'punct' | 'nl' | 'handle' | 'xt' | 'eof';

/** One token: `value` is the word, the unquoted string, the punctuation, the handle digits or the xt name. */
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

// Character classes by char code (ASCII); everything else is part of a word.
const SPACE = 1;
const PUNCT = 2;
const STOP = 4; // ends a word: space, punctuation, newline, `"`, `#`
const CLASS = new Uint8Array(128);
for (const c of ' \t\r\f\v') CLASS[c.charCodeAt(0)] = SPACE | STOP;
for (const c of '{};,') CLASS[c.charCodeAt(0)] = PUNCT | STOP;
for (const c of '\n"#') CLASS[c.charCodeAt(0)] = STOP;
const isClass = (code: number, cls: number): boolean => code < 128 && ((CLASS[code] as number) & cls) !== 0;

/** Streaming tokenizer with arbitrary look-ahead (`peek(n)`). */
export class NftLexer {
  private pos = 0;
  private line = 1;
  private readonly buffer: NftToken[] = [];
  private head = 0;
  /** String tokens whose closing quote was missing (the parser reports them). */
  readonly unterminatedStrings: NftToken[] = [];
  /** End offset of the last token consumed by {@link next} (0 before any). */
  lastEnd = 0;

  constructor(readonly text: string) {}

  /** The token `n` places ahead (0 = next), without consuming it. */
  peek(n = 0): NftToken {
    while (this.buffer.length - this.head <= n) this.buffer.push(this.scan());
    return this.buffer[this.head + n] as NftToken;
  }

  /** Consumes and returns the next token. */
  next(): NftToken {
    const token = this.peek(0);
    this.head++;
    this.lastEnd = token.end;
    // Drop consumed tokens now and then so the buffer stays small.
    if (this.head > 64) {
      this.buffer.splice(0, this.head);
      this.head = 0;
    }
    return token;
  }

  /** The whole line holding text offset `offset` (for diagnostics), without its newline. */
  lineAt(offset: number): string {
    const start = this.text.lastIndexOf('\n', offset - 1) + 1;
    const end = this.text.indexOf('\n', offset);
    return this.text.slice(start, end < 0 ? this.text.length : end);
  }

  private scan(): NftToken {
    const text = this.text;
    for (;;) {
      const code = text.charCodeAt(this.pos);
      if (Number.isNaN(code)) return this.token('eof', '', this.pos, this.pos);
      if (isClass(code, SPACE)) {
        this.pos++;
        continue;
      }
      if (code === 0x5c && text.charCodeAt(this.pos + 1) === 0x0a) {
        // Line continuation.
        this.pos += 2;
        this.line++;
        continue;
      }
      if (code === 0x0a) {
        const t = this.token('nl', '\n', this.pos, this.pos + 1);
        this.pos++;
        this.line++;
        return t;
      }
      if (code === 0x23) {
        const special = this.comment();
        if (special) return special;
        continue;
      }
      if (isClass(code, PUNCT)) {
        const t = this.token('punct', text[this.pos] as string, this.pos, this.pos + 1);
        this.pos++;
        return t;
      }
      if (code === 0x22) return this.string();
      return this.word();
    }
  }

  private token(type: NftTokenType, value: string, start: number, end: number): NftToken {
    return { type, value, line: this.line, start, end };
  }

  /** Skips a comment; returns a `handle` or `xt` token for the two comments nft prints in rules. */
  private comment(): NftToken | undefined {
    const text = this.text;
    const start = this.pos;
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const handle = /^#\s*handle\s+(\d+)/.exec(text.slice(start, Math.min(end, start + 40)));
    if (handle?.[1]) {
      this.pos = end;
      return this.token('handle', handle[1], start, end);
    }
    if (text.startsWith('# xt_', start)) {
      let p = start + 5;
      while (p < end && !isClass(text.charCodeAt(p), SPACE)) p++;
      this.pos = p;
      return this.token('xt', text.slice(start + 5, p), start, p);
    }
    this.pos = end;
    return undefined;
  }

  private string(): NftToken {
    const text = this.text;
    const start = this.pos;
    let p = start + 1;
    let value = '';
    let chunk = p;
    for (;;) {
      const ch = text[p];
      if (ch === undefined || ch === '\n') {
        value += text.slice(chunk, p);
        this.pos = p;
        const t = { ...this.token('string', value, start, p), unterminated: true };
        this.unterminatedStrings.push(t);
        return t;
      }
      if (ch === '\\' && p + 1 < text.length && text[p + 1] !== '\n') {
        value += text.slice(chunk, p) + text[p + 1];
        p += 2;
        chunk = p;
        continue;
      }
      if (ch === '"') {
        value += text.slice(chunk, p);
        this.pos = p + 1;
        return this.token('string', value, start, p + 1);
      }
      p++;
    }
  }

  private word(): NftToken {
    const text = this.text;
    const start = this.pos;
    let p = start;
    while (p < text.length && !isClass(text.charCodeAt(p), STOP)) p++;
    this.pos = p;
    return this.token('word', text.slice(start, p), start, p);
  }
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

/**
 * Where JSON text goes wrong, for the diagnostics `JSON.parse` cannot give on Node 20
 * (its messages often lack a position), and which complete items a truncated
 * `{"nftables":[…` document still holds. A linear validating scan (RFC 8259), run only
 * after `JSON.parse` has failed.
 */

/** Result of {@link scanJson}: the first error (offset into the text) and salvageable items. */
export interface JsonScan {
  /** Offset of the first syntax error; undefined when the text is valid JSON. */
  readonly errorOffset?: number;
  readonly message?: string;
  /** End offsets of complete values directly inside the array at depth 2 (`{"nftables":[ … ]}`). */
  readonly itemEnds: readonly number[];
}

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const MAX_DEPTH = 512;

/** Scans `text` as JSON; never throws. */
export function scanJson(text: string): JsonScan {
  const itemEnds: number[] = [];
  let i = 0;

  const fail = (message: string): never => {
    throw new JsonSyntaxError(i >= text.length ? 'unexpected end of JSON (truncated?)' : message, i);
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else return;
    }
  };
  const literal = (word: string) => {
    if (!text.startsWith(word, i)) fail(`unexpected character ${JSON.stringify(text[i])}`);
    i += word.length;
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail('');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail('control character in string');
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail('bad escape');
      } else i++;
    }
  };
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) fail(`unexpected character ${JSON.stringify(text[i])}`);
    i += (m as RegExpExecArray)[0].length;
  };
  const value = (depth: number): void => {
    ws();
    if (depth > MAX_DEPTH) fail('nesting too deep');
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a double-quoted property name');
        string();
        ws();
        if (text[i] !== ':') fail('expected ":"');
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        if (depth === 1) itemEnds.push(i);
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail('expected "," or "]"');
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail(c === undefined ? '' : `unexpected character ${JSON.stringify(c)}`);
  };

  try {
    value(0);
    ws();
    if (i < text.length) fail('unexpected data after the JSON document');
    return { itemEnds };
  } catch (e) {
    if (e instanceof JsonSyntaxError) return { errorOffset: e.offset, message: e.message, itemEnds };
    if (e instanceof RangeError) return { errorOffset: i, message: 'nesting too deep', itemEnds };
    throw e;
  }
}

/** 1-based line and column of `offset` in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let p = text.indexOf('\n'); p >= 0 && p < offset; p = text.indexOf('\n', p + 1)) {
    line++;
    lineStart = p + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

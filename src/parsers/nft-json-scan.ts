/**
 * The syntax scan of the nft -j lazy pass (nft-json-direct.ts `locateRule`): where the JSON
 * value at a place ends, checked whole as `JSON.parse` would check it (RFC 8259), for values
 * whose strings hold no escape or control character (nft prints neither outside comments it
 * was given; such a string sends the item to the path that reads escapes).
 *
 * Two scans with one answer: {@link jsonEndPrinted} knows only the spacing nft's printer
 * writes (nft's src/json.c dumps with jansson without `JSON_COMPACT`: `", "` between
 * values, `": "` after a key, no other white space) and needs no state machine;
 * {@link jsonEnd} reads any spacing and is the reference. {@link jsonValueEnd} runs the first and
 * falls back on the second wherever the first does not accept the text, so its answer is always
 * {@link jsonEnd}'s. Pure.
 */

/** Containers deeper than this end the lazy pass' syntax scan (the item goes to the tree walk). */
const MAX_SCAN_DEPTH = 512;
const scanStack = new Uint8Array(MAX_SCAN_DEPTH);

/** States of {@link jsonEnd}. */
const VALUE = 0;
const VALUE_OR_CLOSE = 1;
const KEY = 2;
const KEY_OR_CLOSE = 3;
const COLON = 4;
const AFTER = 5;

/**
 * The end of the JSON value at `p` (RFC 8259 syntax, checked whole: what `JSON.parse` would
 * accept) whose strings hold no escape or control character: -1 when the text ends inside
 * it, is not JSON there, holds such a string ({@link plainStringEnd}), or nests deeper than
 * {@link MAX_SCAN_DEPTH} (the caller then hands the item to the path that says why).
 */
export function jsonEnd(t: string, p: number): number {
  let depth = 0;
  let state = VALUE;
  let q = p;
  const n = t.length;
  for (;;) {
    let c = t.charCodeAt(q);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = t.charCodeAt(++q);
    if (q >= n) return -1;
    let value = false;
    switch (state) {
      case VALUE:
      case VALUE_OR_CLOSE:
        if (c === 0x7b || c === 0x5b) {
          if (depth >= MAX_SCAN_DEPTH) return -1;
          scanStack[depth++] = c;
          state = c === 0x7b ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
          q++;
          continue;
        }
        if (c === 0x5d && state === VALUE_OR_CLOSE) {
          depth--;
          q++;
          value = true;
          break;
        }
        if (c === 0x22) {
          q = plainStringEnd(t, q);
          if (q < 0) return -1;
        } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
          q = numberEnd(t, q);
          if (q < 0) return -1;
        } else if (t.startsWith('true', q)) q += 4;
        else if (t.startsWith('false', q)) q += 5;
        else if (t.startsWith('null', q)) q += 4;
        else return -1;
        value = true;
        break;
      case KEY:
      case KEY_OR_CLOSE:
        if (c === 0x22) {
          q = plainStringEnd(t, q);
          if (q < 0) return -1;
          state = COLON;
          continue;
        }
        if (c === 0x7d && state === KEY_OR_CLOSE) {
          depth--;
          q++;
          value = true;
          break;
        }
        return -1;
      case COLON:
        if (c !== 0x3a) return -1;
        q++;
        state = VALUE;
        continue;
      default:
        // AFTER a value inside a container.
        if (c === 0x2c) {
          state = scanStack[depth - 1] === 0x7b ? KEY : VALUE;
          q++;
          continue;
        }
        if ((c === 0x7d || c === 0x5d) && scanStack[depth - 1] === (c === 0x7d ? 0x7b : 0x5b)) {
          depth--;
          q++;
          value = true;
          break;
        }
        return -1;
    }
    if (value) {
      if (depth === 0) return q;
      state = AFTER;
    }
  }
}

/**
 * The end (after the closing quote) of the string whose opening quote is at `p`, for a string
 * without escapes or control characters (nft prints neither outside comments it was given):
 * -1 at a backslash, a control character or the end of the text (the item then goes to the
 * path that reads escapes, or says why the text is not JSON). A loop, not `indexOf`: nft's
 * strings are a few characters long, and every character is checked on the way.
 */
function plainStringEnd(t: string, p: number): number {
  const n = t.length;
  for (let q = p + 1; q < n; q++) {
    const c = t.charCodeAt(q);
    if (c === 0x22) return q + 1;
    if (c === 0x5c || c < 0x20) return -1;
  }
  return -1;
}

/** The end of the JSON number at `p` (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`), -1 when it is not one or the text ends in it. */
function numberEnd(t: string, p: number): number {
  let q = p;
  if (t.charCodeAt(q) === 0x2d) q++;
  const first = q;
  while (isDigit(t.charCodeAt(q))) q++;
  if (q === first || (q - first > 1 && t.charCodeAt(first) === 0x30)) return -1;
  if (t.charCodeAt(q) === 0x2e) {
    const f = ++q;
    while (isDigit(t.charCodeAt(q))) q++;
    if (q === f) return -1;
  }
  const e = t.charCodeAt(q);
  if (e === 0x65 || e === 0x45) {
    q++;
    const s = t.charCodeAt(q);
    if (s === 0x2b || s === 0x2d) q++;
    const f = q;
    while (isDigit(t.charCodeAt(q))) q++;
    if (q === f) return -1;
  }
  return q >= t.length ? -1 : q;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The stack of {@link jsonEndPrinted} (open brackets, as their character codes). */
const printedStack = new Uint8Array(MAX_SCAN_DEPTH);

/**
 * {@link jsonEnd} of a value in nft's printed spacing only (see the module comment): the same
 * end wherever it gives one; -1 for any other spacing as well as for everything
 * {@link jsonEnd} says -1 to (the caller then asks {@link jsonEnd}). `{`/`[` + 2 is the
 * matching `}`/`]`.
 */
export function jsonEndPrinted(t: string, p: number): number {
  let depth = 0;
  let q = p;
  for (;;) {
    // At a value.
    let c = t.charCodeAt(q);
    if (c === 0x7b || c === 0x5b) {
      // As deep as jsonEnd goes: it gives up before opening one more, empty or not.
      if (depth >= MAX_SCAN_DEPTH) return -1;
      q++;
      if (t.charCodeAt(q) === c + 2) q++;
      else {
        printedStack[depth++] = c;
        if (c === 0x7b) {
          q = printedKeyEnd(t, q);
          if (q < 0) return -1;
        }
        continue;
      }
    } else if (c === 0x22) {
      q = plainStringEnd(t, q);
      if (q < 0) return -1;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      q = numberEnd(t, q);
      if (q < 0) return -1;
    } else if (c === 0x6e && t.startsWith('null', q)) q += 4;
    else if (c === 0x74 && t.startsWith('true', q)) q += 4;
    else if (c === 0x66 && t.startsWith('false', q)) q += 5;
    else return -1;
    // After a value: closes, then `, ` and the next value (or key).
    for (;;) {
      if (depth === 0) return q;
      c = t.charCodeAt(q);
      const open = printedStack[depth - 1]!;
      if (c === 0x2c) {
        if (t.charCodeAt(q + 1) !== 0x20) return -1;
        q += 2;
        if (open === 0x7b) {
          q = printedKeyEnd(t, q);
          if (q < 0) return -1;
        }
        break;
      }
      if (c !== open + 2) return -1;
      depth--;
      q++;
    }
  }
}

/** A key at `p` and its `": "`: the place of its value, or -1. */
function printedKeyEnd(t: string, p: number): number {
  if (t.charCodeAt(p) !== 0x22) return -1;
  const q = plainStringEnd(t, p);
  return q >= 0 && t.charCodeAt(q) === 0x3a && t.charCodeAt(q + 1) === 0x20 ? q + 2 : -1;
}

/** Counts of {@link jsonValueEnd}'s answers by the printed-spacing scan and by the fallback (what a test counts). */
export const jsonValueEndCounts = { printed: 0, fallback: 0 };

/**
 * {@link jsonEnd}'s answer: {@link jsonEndPrinted}'s where it gives one (nft's printed
 * spacing, most of a dump), else {@link jsonEnd}'s.
 */
export function jsonValueEnd(t: string, p: number): number {
  const end = jsonEndPrinted(t, p);
  if (end >= 0) {
    jsonValueEndCounts.printed++;
    return end;
  }
  jsonValueEndCounts.fallback++;
  return jsonEnd(t, p);
}

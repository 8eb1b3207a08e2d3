import { describe, expect, it, vi } from 'vitest';
import { escapeCodePoint, guardTerminalStream, jsonTerminalSafe, SHOW_CURSOR, terminalSafe } from '../../src/text/terminal-safe.js';

// Every character a terminal may act on or not draw: no byte of it may survive the helper.
const DANGEROUS = /[\0-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufe00-\ufe0f\u3164\u{e0000}-\u{e0fff}]/u;

describe('terminalSafe', () => {
  it('returns the same string when nothing needs escaping (ASCII, Japanese, emoji, a backslash)', () => {
    for (const s of ['', 'KUBE-SVC-ABCD default/nginx:http', 'ノードの書き換え', 'C:\\dir "x" {bold}', '😀 wide ✓']) {
      expect(terminalSafe(s)).toBe(s);
      expect(terminalSafe(s, 'document')).toBe(s);
    }
  });

  it.each([
    ['ESC (CSI, OSC start)', '\x1b[2J', '\\x1b[2J'],
    ['BEL (OSC end)', 'a\x07b', 'a\\x07b'],
    ['NUL and BS', '\0\b', '\\x00\\x08'],
    ['CR, LF, TAB in a line', 'a\rb\nc\td', 'a\\rb\\nc\\td'],
    ['DEL', 'x\x7f', 'x\\x7f'],
    ['C1 CSI and OSC', '\x9b2J\x9d0;t\x9c', '\\x9b2J\\x9d0;t\\x9c'],
    ['bidi overrides', 'a\u202eevil\u202c', 'a\\u202eevil\\u202c'],
    ['bidi isolates', '\u2066x\u2069\u2067\u2068', '\\u2066x\\u2069\\u2067\\u2068'],
    ['bidi marks', '\u200e\u200f\u061c', '\\u200e\\u200f\\u061c'],
    ['zero-width and BOM', 'a\u200bb\u200cc\u200dd\ufeff', 'a\\u200bb\\u200cc\\u200dd\\ufeff'],
    ['line and paragraph separators', 'a\u2028b\u2029', 'a\\u2028b\\u2029'],
    ['Mongolian vowel separator, soft hyphen, word joiner', '\u180e\u00ad\u2060', '\\u180e\\xad\\u2060'],
    ['Hangul filler, variation selector', '\u3164\ufe0f', '\\u3164\\ufe0f'],
    ['tag characters (above the BMP)', 'a\u{e0041}\u{e007f}', 'a\\u{e0041}\\u{e007f}'],
    ['lone surrogates', 'a\ud800b\udc00', 'a\\ud800b\\udc00'],
  ])('escapes %s visibly', (_what, input, shown) => {
    expect(terminalSafe(input)).toBe(shown);
    expect(terminalSafe(input)).not.toMatch(DANGEROUS);
  });

  it('keeps newline and tab in document mode, escapes carriage return and everything else', () => {
    const doc = 'line 1\tcol\nline 2 \x1b]0;PWNED\x07\r\n';
    expect(terminalSafe(doc, 'document')).toBe('line 1\tcol\nline 2 \\x1b]0;PWNED\\x07\\r\n');
  });

  it('escapes the issue repro payload, leaving it readable', () => {
    const comment = 'x\x1b]0;PWNED\x07\x1b]52;c;bGl2ZQ==\x07\x1b[2J';
    expect(terminalSafe(comment)).toBe('x\\x1b]0;PWNED\\x07\\x1b]52;c;bGl2ZQ==\\x07\\x1b[2J');
  });

  it('does not double-escape: a second pass over escaped text changes nothing', () => {
    const once = terminalSafe('a\x1b\\b\u202e\u{e0041}\n');
    expect(once).toBe('a\\x1b\\b\\u202e\\u{e0041}\\n');
    expect(terminalSafe(once)).toBe(once);
    expect(terminalSafe(once, 'document')).toBe(once);
  });

  it('every code point below U+0100 and the whole Cf category come out without a dangerous character', () => {
    let all = '';
    for (let cp = 0; cp < 0x100; cp++) all += String.fromCodePoint(cp);
    for (let cp = 0x100; cp <= 0x10ffff; cp++) if (/\p{Cf}/u.test(String.fromCodePoint(cp))) all += String.fromCodePoint(cp);
    expect(terminalSafe(all)).not.toMatch(DANGEROUS);
    expect(terminalSafe(all, 'document').replace(/[\n\t]/g, '')).not.toMatch(DANGEROUS);
  });

  it('escapeCodePoint spells the forms the module documents', () => {
    expect(['\x1b', '\x7f', '\x85', '\u202e', '\u{e0001}', '\n'].map(escapeCodePoint)).toEqual(['\\x1b', '\\x7f', '\\x85', '\\u202e', '\\u{e0001}', '\\n']);
  });
});

describe('jsonTerminalSafe', () => {
  it('keeps the exact values (JSON.parse gives them back) while no raw C1/bidi/format character remains', () => {
    const value = { comment: 'x\x1b]0;PWNED\x07\x9b2J\u202eevil\u2028\u200b\u{e0041}\ud800', plain: 'ok' };
    const json = jsonTerminalSafe(JSON.stringify(value));
    expect(json).not.toMatch(DANGEROUS);
    expect(JSON.parse(json)).toEqual(value);
  });

  it('returns the text as is when there is nothing to escape', () => {
    const json = JSON.stringify({ a: 'ノード', b: 'x\\y' });
    expect(jsonTerminalSafe(json)).toBe(json);
  });

  it('escapes a long text (a whole document) the same way as short ones, wherever the unsafe character sits', () => {
    const pad = 'x'.repeat(10_000);
    for (const bad of ['\x7f', '\x9b', '\u202e', '\u2028', '\u{e0041}']) {
      for (const value of [{ a: `${pad}${bad}` }, { a: `${bad}${pad}` }, { a: `${pad}ノード${bad}` }]) {
        const json = jsonTerminalSafe(JSON.stringify(value));
        expect(json).not.toMatch(DANGEROUS);
        expect(JSON.parse(json)).toEqual(value);
      }
    }
    const plain = JSON.stringify({ a: pad, b: 'ノード' });
    expect(jsonTerminalSafe(plain)).toBe(plain);
    expect(jsonTerminalSafe(JSON.stringify({ a: pad }))).toBe(JSON.stringify({ a: pad }));
  });
});

describe('jsonTerminalSafe on long texts (the byte-length check)', () => {
  // What it must do: replace every character of this class, and return the text itself when none.
  const JSON_ALL = /[\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;
  const json = (u: string) => `{"a": "${'j'.repeat(5000)}${u}"}`;
  // `\uHHHH` per UTF-16 code unit (a pair above the BMP as two).
  const esc = (ch: string) => Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

  it('escapes every code unit as the class does past 4,096 characters, and keeps every other text as is', () => {
    let same = 0;
    for (let unit = 0; unit < 0x10000; unit++) {
      // JSON.stringify escapes C0 controls and lone surrogates itself: the text holds a raw one of neither.
      if (unit < 0x20 || (unit >= 0xd800 && unit <= 0xdfff)) continue;
      const text = json(String.fromCharCode(unit));
      const out = jsonTerminalSafe(text);
      expect(out, `U+${unit.toString(16)}`).toBe(text.replace(JSON_ALL, esc));
      if (out === text) same++;
    }
    // Printable ASCII, most of the BMP: unchanged.
    expect(same).toBeGreaterThan(60_000);
    for (const text of [json('😀'), json('\u{e0041}'), json('ノード\x7f'), `${json('')}\x7f`]) {
      expect(jsonTerminalSafe(text)).toBe(text.replace(JSON_ALL, esc));
    }
  });
});

describe('terminalSafe on long texts', () => {
  it('escapes what each mode escapes past the first few thousand characters, and keeps plain text as is', () => {
    const pad = 'y'.repeat(10_000);
    for (const bad of ['\r', '\x1b', '\x7f', '\x85', '\u202e']) {
      expect(terminalSafe(`${pad}${bad}`, 'document')).toBe(`${pad}${escapeCodePoint(bad)}`);
      expect(terminalSafe(`${pad}${bad}`)).toBe(`${pad}${escapeCodePoint(bad)}`);
    }
    expect(terminalSafe(`${pad}\n\t`)).toBe(`${pad}\\n\\t`);
    const doc = `${pad}\n\t${pad}\n`;
    expect(terminalSafe(doc, 'document')).toBe(doc);
  });
});

describe('before and after the code-unit table', () => {
  // The module answers from its classes until the table is built: a fresh copy of it (no
  // table yet) and one whose table is built must give the replace-everything answer alike.
  const UNITS = Array.from({ length: 0x10000 }, (_, u) => String.fromCharCode(u));
  const TEXTS = [...UNITS, 'a\u{e0041}b', '😀 wide', 'x\ud800', `${'k'.repeat(5000)}\u202e`, `${'k'.repeat(5000)}→`, `${'k'.repeat(5000)}😀`, '→ · … —', ''];
  const LINE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;
  const DOCUMENT_ALL = /[\0-\x08\x0b-\x1f\x7f-\x9f\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;

  it('a fresh module (first texts by the classes) and a warmed one (the table) escape every code unit as the classes do', async () => {
    vi.resetModules();
    const fresh = await import('../../src/text/terminal-safe.js');
    // The first 64 short texts of a fresh module run without the table; then it is built.
    const first = [...UNITS.slice(0, 0x20), ...UNITS.slice(0x7f, 0x90), '\u202e', '\u200b', '\ufeff', '\u2028', '\ud800', '\u00ad', '\u3164', 'a\u{e0041}b', '😀', '→'];
    for (const s of first) {
      expect(fresh.terminalSafe(s)).toBe(s.replace(LINE_ALL, escapeCodePoint));
    }
    for (const s of TEXTS) {
      expect(fresh.terminalSafe(s)).toBe(s.replace(LINE_ALL, escapeCodePoint));
      expect(fresh.terminalSafe(s, 'document')).toBe(s.replace(DOCUMENT_ALL, escapeCodePoint));
      expect(JSON.parse(fresh.jsonTerminalSafe(JSON.stringify(s)))).toBe(s);
    }
    vi.resetModules();
    const fresh2 = await import('../../src/text/terminal-safe.js');
    // Long texts never build the table: every one of these is answered by the classes.
    for (const s of TEXTS.slice(0x10000)) {
      const long = `${'p'.repeat(4096)}${s}`;
      expect(fresh2.terminalSafe(long)).toBe(long.replace(LINE_ALL, escapeCodePoint));
      expect(fresh2.jsonTerminalSafe(JSON.stringify(long))).toBe(jsonTerminalSafe(JSON.stringify(long)));
    }
  });
});

describe('guardTerminalStream', () => {
  /** A stream that records what reaches it. */
  function recorder() {
    const got: (string | Uint8Array)[] = [];
    const stream = { write: (chunk: string | Uint8Array) => (got.push(chunk), true) };
    return { got, stream };
  }

  it('escapes what a terminal acts on in every string, keeps newlines and tabs, and restores the stream', () => {
    const { got, stream } = recorder();
    const own = stream.write;
    const restore = guardTerminalStream(stream);
    stream.write('nodescope: chain \u001b]0;pwned\u0007x\tready\n');
    stream.write(`${SHOW_CURSOR}\n`);
    stream.write(`x${SHOW_CURSOR}`);
    restore();
    expect(stream.write).toBe(own);
    expect(got).toEqual(['nodescope: chain \\x1b]0;pwned\\x07x\tready\n', '\\x1b[?25h\n', 'x\\x1b[?25h']);
  });

  it("lets restore-cursor's exact show-cursor write through (the shell gets its cursor back, no \\x1b text on its line)", () => {
    const { got, stream } = recorder();
    guardTerminalStream(stream);
    stream.write(SHOW_CURSOR);
    const bytes = new Uint8Array([0x1b, 0x5b]);
    stream.write(bytes);
    expect(got).toEqual(['\u001B[?25h', bytes]);
  });
});

import { loadDefaultJapaneseParser } from 'budoux';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { loadTour, tourNames } from '../../src/tour/load.js';
import { breaksKinsoku, wrapCells } from '../../src/tour/wrap.js';

const JA = 'KUBE-SEP の DNAT ルールが宛先 10.96.12.34:80 を 10.244.0.23:8080 に書き換えます。カウンタ（パケット数）は「このエンドポイントを選んだ接続」の数です。';
const EN = 'Here it is: the DNAT rule of KUBE-SEP rewrites the destination 10.96.12.34:80 to 10.244.0.23:8080.';

/** What the lines say once joined back (spaces only where the text had them). */
function rejoin(lines: readonly string[], original: string): string {
  let out = lines[0] ?? '';
  for (const l of lines.slice(1)) {
    const atBreak = original.indexOf(out + ' ' + l.slice(0, 1)) === 0 ? ' ' : '';
    out += atBreak + l;
  }
  return out;
}

describe('wrapCells', () => {
  it.each([10, 13, 20, 33, 40, 79, 80])('keeps every line of Japanese within %i cells, never splitting a character', (width) => {
    const lines = wrapCells(JA, width);
    for (const l of lines) expect(stringWidth(l), l).toBeLessThanOrEqual(width);
    expect(lines.join('').replaceAll(' ', '')).toBe(JA.replaceAll(' ', ''));
    expect(lines.join('')).not.toContain('\uFFFD');
  });

  it.each([13, 20, 33, 40, 80])('never starts a line with closing punctuation nor ends one with an opening bracket at %i cells', (width) => {
    for (const l of wrapCells(JA, width)) expect(breaksKinsoku(l), l).toBe(false);
  });

  it('breaks English at spaces and gives the text back exactly', () => {
    const lines = wrapCells(EN, 30);
    for (const l of lines) expect(stringWidth(l)).toBeLessThanOrEqual(30);
    expect(lines.join(' ')).toBe(EN);
    expect(lines.every((l) => !l.startsWith(' ') && !l.endsWith(' '))).toBe(true);
  });

  it('cuts a word longer than the width between graphemes, keeping emoji and combining marks whole', () => {
    const word = 'endpoint-5Y5AZQMS-default/web/tcp/http__10.244.0.23/8080';
    const lines = wrapCells(word, 16);
    expect(lines.join('')).toBe(word);
    expect(lines.slice(0, -1).every((l) => stringWidth(l) === 16)).toBe(true);
    const graphemes = 'ｶﾞ👩‍💻e\u0301テスト';
    const cut = wrapCells(graphemes.repeat(3), 5);
    expect(cut.join('')).toBe(graphemes.repeat(3));
    for (const l of cut) expect(stringWidth(l)).toBeLessThanOrEqual(5);
    expect(cut.some((l) => l.includes('👩‍💻'))).toBe(true);
  });

  it('keeps the closing punctuation with the character before it when that is the only way (no line starting with 。)', () => {
    // 6 cells: a greedy cut would start a line with 」 or 。; they stay with え
    const lines = wrapCells('「あいうえ」。', 6);
    expect(lines).toEqual(['「あい', 'う', 'え」。']);
    expect(lines.every((l) => !breaksKinsoku(l))).toBe(true);
    expect(lines.join('')).toBe('「あいうえ」。');
  });

  it.each([13, 20, 40, 80])('breaks Japanese only between BudouX phrases or at spaces, never inside a word, at %i cells', (width) => {
    const texts = [JA, ...tourNames().flatMap((n) => loadTour(n).steps.map((s) => s.narration.ja.replace(/\s+/g, ' ')))];
    const parser = loadDefaultJapaneseParser();
    for (const text of texts) {
      // Where BudouX allows a break, counted in characters of the text without spaces.
      const bare = text.replaceAll(' ', '');
      const allowed = new Set<number>();
      let at = 0;
      for (const p of parser.parse(text)) allowed.add((at += p.replaceAll(' ', '').length));
      const spaced = new Set<number>();
      let k = 0;
      for (const ch of text) (ch === ' ' ? spaced.add(k) : k++);
      const lines = wrapCells(text, width);
      let end = 0;
      for (const l of lines.slice(0, -1)) {
        end += l.replaceAll(' ', '').length;
        const cutInsidePhrase = !allowed.has(end) && !spaced.has(end);
        // A phrase wider than the line is the one place a cut may fall inside it.
        const phraseFits = parser.parse(text).every((p) => stringWidth(p) <= width);
        if (phraseFits) expect(cutInsidePhrase, `${l} | ${bare.slice(end, end + 6)}`).toBe(false);
      }
    }
  });

  it('keeps a Japanese word whole where a cut by cells would split it (それなのに, ポート, データプレーン)', () => {
    const text = 'default/empty は一見正常です。ClusterIP 10.96.50.5 とポート 80 があります。それなのにクライアントはすぐに「connection refused」になります。エンドポイント、データプレーン、DNS の 3 層を順に確かめます。';
    const lines = wrapCells(text, 80);
    expect(lines[0]!.endsWith('それ')).toBe(false);
    expect(lines.some((l) => l.includes('それなのに'))).toBe(true);
    expect(lines.some((l) => l.includes('データプレーン'))).toBe(true);
  });

  it('starts a new paragraph at a newline', () => {
    expect(wrapCells('one\ntwo', 80)).toEqual(['one', 'two']);
  });

  it.each(tourNames())('wraps every Japanese narration of %s at 80 and 40 cells within bounds and kinsoku', (name) => {
    for (const step of loadTour(name).steps) {
      for (const width of [80, 40]) {
        const lines = wrapCells(step.narration.ja, width);
        for (const l of lines) {
          expect(stringWidth(l), l).toBeLessThanOrEqual(width);
          expect(breaksKinsoku(l), l).toBe(false);
        }
        expect(rejoin(lines, step.narration.ja).replaceAll(' ', '')).toBe(step.narration.ja.replaceAll(' ', ''));
      }
    }
  });
});

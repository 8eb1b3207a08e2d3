import { describe, expect, it } from 'vitest';
import stringWidth from 'string-width';
import { cellWidth, fitCell } from '../../src/text/cells.js';

describe('cellWidth', () => {
  it('counts printable ASCII as string-width does, one cell per character', () => {
    const ascii = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    for (const text of ['', ' ', 'default/web:80', ascii, ascii.split('').reverse().join('')]) {
      expect(cellWidth(text)).toBe(stringWidth(text));
    }
    expect(cellWidth(ascii)).toBe(95);
  });

  it('counts the marks of our own columns (· — → …) as string-width does', () => {
    for (const text of ['443/TCP→6443', 'a · b', '—', 'web…', '→→ · —…x']) expect(cellWidth(text)).toBe(stringWidth(text));
    expect(cellWidth('53/UDP→53')).toBe(9);
  });

  it('hands everything else to string-width: wide, combining, controls', () => {
    for (const text of ['サービス', 'e\u0301', 'a\tb', '\u001b[31mred', 'x\u200by', '🙂 ok']) {
      expect(cellWidth(text)).toBe(stringWidth(text));
    }
    expect(cellWidth('サービス')).toBe(8);
  });

  it('fits a wide text by cells, not characters', () => {
    expect(fitCell('サービス', 5)).toBe('サー…');
    expect(fitCell('web', 5, 'right')).toBe('  web');
  });
});

/** The dash's line-chart legend (drawn by blessed-contrib with blessed tags on): hostile titles stay text. */
import { describe, expect, it } from 'vitest';
import { legendTitle } from '../../src/dash/run.js';

describe('legendTitle', () => {
  it('escapes controls and writes braces as blessed tags, so a title cannot open a tag or a sequence', () => {
    expect(legendTitle('10.0.0.1:80{red-fg}', 40)).toBe('10.0.0.1:80{open}red-fg{close}');
    expect(legendTitle('a\x1b]0;X\x07', 40)).toBe('a\\x1b]0;X\\x07');
  });

  it('cuts to the width between whole characters and whole tags (blessed-contrib cuts again at the same width)', () => {
    const t = legendTitle('{{{{{{', 18);
    expect(t).toBe('{open}{open}{open}');
    expect(legendTitle('abcdefghijklmnopqrstuvwxyz', 18)).toHaveLength(18);
  });
});

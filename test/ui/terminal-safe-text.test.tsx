/**
 * The TUI's one door to the terminal stays the only one: no module of src/ui takes `Text` (or
 * `Transform`, `Static`, which draw strings too) from ink except the safe wrapper, so every
 * string a pane draws passes src/text/terminal-safe.ts. And the wrapper really escapes.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import React from 'react';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { Text } from '../../src/ui/components/SafeText.js';
import { fitCell } from '../../src/text/cells.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(path.join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

describe('the TUI draws text only through the terminal-safe Text', () => {
  it('no module of src/ui or src/tour imports Text, Transform or Static from ink but SafeText.tsx', () => {
    const root = packageRoot();
    const offenders = [...sources(path.join(root, 'src', 'ui')), ...sources(path.join(root, 'src', 'tour'))]
      .filter((f) => !f.endsWith(path.join('components', 'SafeText.tsx')))
      .filter((f) => {
        const text = readFileSync(f, 'utf8');
        return [...text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'ink'/g)].some((m) => /\b(Text|Transform|Static)\b/.test(m[1]!));
      })
      .map((f) => path.relative(root, f));
    expect(offenders).toEqual([]);
  });

  it('Text escapes its string children, nested ones too, and leaves numbers alone', () => {
    const { lastFrame } = render(
      <Text>
        a{'\x1b]0;PWNED\x07'}
        <Text bold>{'\u202eb\n'}</Text>
        {3}
      </Text>,
    );
    expect(lastFrame()).toBe('a\\x1b]0;PWNED\\x07\\u202eb\\n3');
  });

  it('fitCell measures and cuts the escaped text (what is drawn), never a raw control', () => {
    expect(fitCell('a\x1b[2Jb', 12)).toBe('a\\x1b[2Jb   ');
    expect(fitCell('a\x1b[2Jb', 5)).toBe('a\\x1…');
  });
});

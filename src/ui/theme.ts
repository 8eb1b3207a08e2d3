/**
 * Colour tokens. Panes name a role (`accent`, `muted`, `ok`…), never a raw colour,
 * so a theme change is one table (CONVENTIONS.md §8).
 */

/** A semantic colour role; values are Ink/chalk colour names. */
export type ColorToken = 'accent' | 'muted' | 'ok' | 'warn' | 'error' | 'selected' | 'header' | 'jump' | 'nat' | 'info';

/** The default theme: readable on dark and light terminals and on projectors. */
export const theme: Readonly<Record<ColorToken, string>> = {
  accent: 'cyan',
  muted: 'gray',
  ok: 'green',
  warn: 'yellow',
  error: 'red',
  selected: 'blue',
  header: 'magenta',
  jump: 'cyan',
  nat: 'yellow',
  info: 'blue',
};

/**
 * The only door from the TUI to Ink's `Text`: every string child is made terminal-safe
 * (src/text/terminal-safe.ts, `line` mode: controls, ESC, bidi and invisible characters shown
 * as `\x1b`, `\u202e`, …) before Ink measures and draws it, so no byte from the node, the API
 * or a bundle reaches the terminal as an escape sequence, whatever pane shows it. Panes import
 * `Text` from here, never from ink (test/ui/terminal-safe-text.test.tsx checks).
 */
import { Text as InkText, type TextProps } from 'ink';
import React from 'react';
import { terminalSafe } from '../../text/terminal-safe.js';

function safeChildren(children: React.ReactNode): React.ReactNode {
  if (typeof children === 'string') return terminalSafe(children);
  if (Array.isArray(children)) return children.map(safeChildren);
  // Numbers, booleans, null and elements (a nested `Text` from here makes its own strings safe).
  return children;
}

/** Ink's `Text` with its string children made terminal-safe; same props. */
export function Text(props: TextProps): React.JSX.Element {
  return <InkText {...props}>{safeChildren(props.children)}</InkText>;
}

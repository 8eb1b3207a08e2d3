/** The `?` overlay listing every key. */
import { Box, Text } from 'ink';
import React from 'react';
import { t, type Lang, type MessageKey } from '../i18n.js';
import { theme } from '../theme.js';

/** The key map shown by {@link Help}: keys and the message that explains them. */
export const KEY_HELP: readonly (readonly [string, MessageKey])[] = [
  ['1-7  Tab', 'key.panes'],
  ['↑↓  j k', 'key.move'],
  ['PgUp PgDn', 'key.page'],
  ['g  G', 'key.ends'],
  ['Enter', 'key.open'],
  ['Esc  ⌫', 'key.back'],
  ['/', 'key.filter'],
  ['r', 'key.refresh'],
  ['t', 'key.trace'],
  ['Space', 'key.pin'],
  ['n  p', 'key.stepMove'],
  ['b', 'key.branch'],
  ['s  S', 'key.sort'],
  ['a', 'key.scope'],
  ['?', 'key.help'],
  ['q  Ctrl-C', 'key.quit'],
];

/** Renders the help box. */
export function Help({ lang }: { readonly lang: Lang }): React.JSX.Element {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={theme.accent} paddingX={1}>
      <Text bold>{t(lang, 'help.title')}</Text>
      {KEY_HELP.map(([keys, msg]) => (
        <Text key={keys}>
          <Text color={theme.accent}>{keys.padEnd(12)}</Text>
          {t(lang, msg)}
        </Text>
      ))}
      <Text color={theme.muted}>{t(lang, 'help.close')}</Text>
    </Box>
  );
}

/** The `?` overlay listing every key, generated from the key bindings (src/ui/key-bindings.ts). */
import { Box } from 'ink';
import { Text } from './SafeText.js';
import React from 'react';
import { t, tf, type Lang } from '../../text/i18n.js';
import { helpRows } from '../key-bindings.js';
import { theme } from '../theme.js';

/**
 * Renders the help box; `apiError` (`SessionState.apiError`: why the API objects shown are
 * not the source's latest, which the header only names in short) is shown whole under the
 * title. With it, the box is `height` rows (the pane's) and the keys that do not fit are
 * cut at the bottom (the footer repeats `?` and `q`) rather than drawn over each other.
 */
export function Help({ lang, apiError = null, height }: { readonly lang: Lang; readonly apiError?: string | null; readonly height?: number }): React.JSX.Element {
  const sized = apiError && height !== undefined ? { height, overflow: 'hidden' as const } : {};
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={theme.accent} paddingX={1} {...sized}>
      {/* Not shrunk to the height (yoga would squeeze rows out of the middle): cut at the bottom. */}
      <Box flexDirection="column" flexShrink={0}>
        <Text bold>{t(lang, 'help.title')}</Text>
        {apiError ? <Text color={theme.warn}>{tf(lang, 'help.apiError', { reason: apiError })}</Text> : null}
        {helpRows().map(([keys, msg]) => (
          <Text key={keys}>
            <Text color={theme.accent}>{keys.padEnd(12)}</Text>
            {t(lang, msg)}
          </Text>
        ))}
        <Text color={theme.muted}>{t(lang, 'help.close')}</Text>
      </Box>
    </Box>
  );
}

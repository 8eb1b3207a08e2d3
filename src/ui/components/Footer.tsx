/** The footer: the filter or DNS name being typed, a notice about the last key, or the key hint line. */
import { Text } from './SafeText.js';
import React from 'react';
import { t, type Lang } from '../../text/i18n.js';
import { fitCell } from '../../text/cells.js';
import { theme } from '../theme.js';

/** Props of {@link Footer}. */
export interface FooterProps {
  readonly typingFilter: boolean;
  readonly filter: string;
  /** Why the last key did nothing, already translated; null for none. */
  readonly notice?: string | null;
  /** The key hint of the current pane, already translated; default `footer.hint`. */
  readonly hint?: string | undefined;
  /** The name being typed in the DNS pane's prompt (`n`); null or absent when none. */
  readonly namePrompt?: string | null;
  readonly width: number;
  readonly lang: Lang;
  /** A question the next key answers (after `s`: the columns and their letters), already translated; null for none. */
  readonly prompt?: string | null;
}

/** Renders the footer line. */
export function Footer({ typingFilter, filter, notice = null, hint, namePrompt = null, width, lang, prompt = null }: FooterProps): React.JSX.Element {
  if (namePrompt !== null) return <Text color={theme.accent}>{fitCell(`${t(lang, 'dns.namePrompt')}${namePrompt}▏`, width)}</Text>;
  if (prompt) return <Text color={theme.accent}>{fitCell(prompt, width)}</Text>;
  if (typingFilter || (filter && !notice)) {
    return <Text color={theme.accent}>{fitCell(`${t(lang, 'filter.prompt')}${filter}${typingFilter ? '▏' : ''}`, width)}</Text>;
  }
  if (notice) return <Text color={theme.warn}>{fitCell(notice, width)}</Text>;
  return <Text color={theme.muted}>{fitCell(hint ?? t(lang, 'footer.hint'), width)}</Text>;
}

/**
 * Comparing a live `show` with the replay of a capture of the same node (lab tests).
 */
import { expect } from 'vitest';

/**
 * Live `show services` reads only the chain names (issue 23: each command reads what it
 * needs), so its mode says `(unconfirmed: iptables-save not read)`; the capture holds the
 * whole iptables-save, so the replay's mode is confirmed. That qualifier, on the mode line of
 * `show services` only, is the one difference allowed (it must be there live).
 */
export function sureOfMode(what: 'services' | 'rules', text: string): string {
  if (what !== 'services') return text;
  const qualifier = ' (unconfirmed: iptables-save not read)';
  const [head, mode, ...rest] = text.split('\n');
  expect(mode).toContain(qualifier);
  return [head, mode!.replace(qualifier, ''), ...rest].join('\n');
}

/**
 * `nodescope diagnose --lang ja` (issue 17): finding messages come from the i18n tables
 * (src/text/messages/diagnose.ts), so the Japanese text report has no English sentence, while
 * codes, severities, names and addresses stay as they are and the JSON keeps the English
 * `message`. Checked on the three shipped captures, with and without --from, and with the DNS
 * layer read from the capture.
 */
import { describe, expect, it } from 'vitest';
import type { Diagnosis } from '../../src/analysis/diagnose/index.js';
import { findingMessage } from '../../src/analysis/diagnose/say.js';
import { dnsLayerOf } from '../../src/dns/diagnose-dns.js';
import { readBundleDnsCapture } from '../../src/dns/replay.js';
import { showDiagnose } from '../../src/report/diagnose.js';
import { messageKeys, t } from '../../src/text/i18n.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';

/** Two or more English words in a row (identifiers like app=nothing-matches or default/empty are one word). */
const ENGLISH = /\b[A-Za-z]{2,}[,;:]? [A-Za-z]{2,}\b/;

/** A finding line's sentence: `    severity: [layer] SENTENCE` (the layer in the report's language), without the leading words. */
const sentences = (text: string) => [...text.matchAll(/^ {4}(?:info|degraded|broken|unknown|情報|劣化|故障|不明): \[[^\]\s]+\] (.*)$/gm)].map((m) => m[1]!);

/** Rule references (`filter KUBE-SERVICES #1`, `ip kube-proxy reject-chain #1`): names, not words. */
const NAMES = /(?:nat|filter|mangle|raw|ip kube-proxy) \S+ #\d+/g;

describe('diagnose --lang ja: no English finding message', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: every finding sentence and report line is Japanese; the JSON keeps English', async (name) => {
    const snap = await snapshotOf(name);
    const dns = dnsLayerOf(snap.api!.value!, readBundleDnsCapture(fixtureDir(name)).capture, 'cluster.local');
    for (const from of [undefined, 'default/client', '192.168.49.1', 'node']) {
      const opts = { lang: 'ja' as const, dns, ...(from ? { from } : {}) };
      const { out, diagnosis } = showDiagnose(snap, 'text', opts);
      const lines = sentences(out);
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect([l, ENGLISH.test(l.replace(NAMES, ''))]).toEqual([l, false]);
      const en = showDiagnose(snap, 'text', { ...opts, lang: 'en' }).out;
      // The same findings, in another language.
      expect(sentences(en).length).toBe(lines.length);
      expect(out).not.toContain('Service(s)');
      expect(out).toMatch(/^dns: .*API と比較しました$/m);
      const json = JSON.parse(showDiagnose(snap, 'json', opts).out) as Diagnosis;
      expect(json.services.flatMap((s) => s.findings).every((f) => !('said' in f) && /^[\x20-\x7e→—"]+$/.test(f.message))).toBe(true);
      expect(diagnosis.services.flatMap((s) => s.findings).every((f) => f.said !== undefined)).toBe(true);
    }
  });

  it('a finding without a phrase falls back to its English message (never an empty line)', () => {
    expect(findingMessage({ message: 'as the node said it' }, 'ja')).toBe('as the node said it');
  });

  it('every diagnose key has Japanese text that differs from the English, except the ones that are only params', () => {
    const same = messageKeys.filter((k) => k.startsWith('dg.') && t('ja', k) === t('en', k));
    expect(same.sort()).toEqual(['dg.ciliumListing', 'dg.from.blocked', 'dg.from.reachedBare', 'dg.from.stopped', 'dg.from.unknown', 'dg.leftoverOf', 'dg.notUnderstood']);
  });
});

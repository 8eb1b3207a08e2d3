/** The common head of every `show` document: which node, from where, when, in which mode. */
import { apiUnreadNote } from '../analysis/api-notes.js';
import { iptablesDumpNotes } from '../analysis/iptables-faults.js';
import { detectProxyMode, unconfirmedText, type ModeFact, type ProxyModeResult } from '../analysis/proxy-mode.js';
import { modeEvidenceLine, modeLabelIn } from '../analysis/mode-evidence.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { whyText } from '../text/why.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { terminalSafe } from '../text/terminal-safe.js';

/**
 * `{node, kernel, source, live, capturedAt, mode, unconfirmed, evidence, facts}`; capturedAt
 * ISO-8601 UTC. `unconfirmed`: why `mode` rests on indirect evidence (`ipvsadm not read`), else
 * null. `facts`: the evidence as data (src/analysis/proxy-mode.ts `ModeFact`); a count that was
 * not read is `null`, never 0, with the probe that would read it (`{kind: 'ipvs',
 * virtualServers: null, probe: 'ipvsadm'}`).
 */
export interface ShowHead {
  readonly node: string;
  readonly kernel: string | null;
  readonly source: string;
  readonly live: boolean;
  readonly capturedAt: string;
  readonly mode: string;
  readonly unconfirmed: string | null;
  readonly evidence: readonly string[];
  readonly facts: readonly ModeFact[];
  /**
   * What the dumps themselves warn about (src/analysis/iptables-faults.ts) and which API kinds
   * could not be read (ServiceCIDR/IPAddress 403/404, src/analysis/api-notes.ts); absent when nothing.
   */
  readonly notes?: readonly string[];
  /** A replayed bundle's provenance note (`copy of the capture of …` for a re-captured replay); absent when none. */
  readonly captureNote?: string;
}

/** The mode result a head was built from, for its text in another language (not a document field). */
const modeOfHead = new WeakMap<ShowHead, ProxyModeResult>();

/** Builds the head from a snapshot. */
export function showHead(snapshot: NodeSnapshot): ShowHead {
  const mode = detectProxyMode(snapshot);
  const head = showHeadOf(snapshot, mode);
  modeOfHead.set(head, mode);
  return head;
}

function showHeadOf(snapshot: NodeSnapshot, mode: ProxyModeResult): ShowHead {
  const unread = apiUnreadNote(snapshot.api?.value);
  const notes = [...iptablesDumpNotes(snapshot).map((n) => n.text), ...(unread ? [unread.text] : [])];
  return {
    node: snapshot.meta.node,
    kernel: snapshot.meta.kernel,
    source: snapshot.meta.source.label,
    live: snapshot.meta.source.live,
    capturedAt: snapshot.meta.capturedAt,
    mode: mode.mode,
    unconfirmed: mode.unconfirmed ? unconfirmedText(mode.unconfirmed) : null,
    evidence: mode.evidence,
    facts: mode.facts,
    ...(notes.length ? { notes } : {}),
    ...(snapshot.meta.note ? { captureNote: snapshot.meta.note } : {}),
  };
}

/**
 * The head as two text lines (and a line per note), for `-o text`, in `lang` (default `en`):
 * its values one line each (terminal-safe: a manifest's node name may hold anything).
 */
export function headText(h: ShowHead, lang: Lang = 'en'): string {
  // Transport labels already name their kind (`replay:DIR`, `netns:NAME`): say it once.
  const where = h.source.replace(/^replay:/, '');
  const line = (s: string) => terminalSafe(s);
  // Notes quote rule comments from the node: made terminal-safe like the rest.
  const notes = (h.notes ?? []).map((n) => `${tf(lang, 'cli.note', { note: line(whyText(lang, n)) })}\n`).join('');
  const first = tf(lang, 'cli.head.line', { node: line(h.node), kernel: line(h.kernel ?? t(lang, 'cli.head.kernelUnknown')), kind: t(lang, h.live ? 'header.live' : 'header.replay'), where: line(where), time: line(h.capturedAt) });
  const mode = modeOfHead.get(h);
  const label = lang === 'en' || !mode ? `${h.mode}${h.unconfirmed ? ` (unconfirmed: ${line(h.unconfirmed)})` : ''}` : line(modeLabelIn(lang, mode));
  const evidence = lang === 'en' ? h.evidence.join('; ') : modeEvidenceLine(lang, h.facts);
  const capture = h.captureNote ? `${tf(lang, 'cli.head.captureNote', { note: line(h.captureNote) })}\n` : '';
  return `${first}\n${tf(lang, 'cli.head.mode', { mode: label, evidence: line(evidence) })}\n${capture}${notes}`;
}

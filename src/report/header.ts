/** The common head of every `show` document: which node, from where, when, in which mode. */
import { apiUnreadNote } from '../analysis/api-notes.js';
import { iptablesDumpNotes } from '../analysis/iptables-faults.js';
import { detectProxyMode, unconfirmedText, type ModeFact } from '../analysis/proxy-mode.js';
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
}

/** Builds the head from a snapshot. */
export function showHead(snapshot: NodeSnapshot): ShowHead {
  const mode = detectProxyMode(snapshot);
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
  };
}

/** The head as two text lines, for `-o text`; its values one line each (terminal-safe: a manifest's node name may hold anything). */
export function headText(h: ShowHead): string {
  // Transport labels already name their kind (`replay:DIR`, `netns:NAME`): say it once.
  const where = h.source.replace(/^replay:/, '');
  const line = (s: string) => terminalSafe(s);
  // Notes quote rule comments from the node: made terminal-safe like the rest.
  const notes = (h.notes ?? []).map((n) => `note: ${line(n)}\n`).join('');
  return `node ${line(h.node)} (${line(h.kernel ?? 'kernel ?')}) · ${h.live ? 'live' : 'replay'} ${line(where)} · captured ${line(h.capturedAt)}\nmode ${h.mode}${h.unconfirmed ? ` (unconfirmed: ${line(h.unconfirmed)})` : ''}: ${line(h.evidence.join('; '))}\n${notes}`;
}

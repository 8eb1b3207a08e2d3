/** The common head of every `show` document: which node, from where, when, in which mode. */
import { detectProxyMode } from '../analysis/proxy-mode.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { terminalSafe } from '../text/terminal-safe.js';

/** `{node, kernel, source, live, capturedAt, mode, evidence}`; capturedAt ISO-8601 UTC. */
export interface ShowHead {
  readonly node: string;
  readonly kernel: string | null;
  readonly source: string;
  readonly live: boolean;
  readonly capturedAt: string;
  readonly mode: string;
  readonly evidence: readonly string[];
}

/** Builds the head from a snapshot. */
export function showHead(snapshot: NodeSnapshot): ShowHead {
  const mode = detectProxyMode(snapshot);
  return {
    node: snapshot.meta.node,
    kernel: snapshot.meta.kernel,
    source: snapshot.meta.source.label,
    live: snapshot.meta.source.live,
    capturedAt: snapshot.meta.capturedAt,
    mode: mode.mode,
    evidence: mode.evidence,
  };
}

/** The head as two text lines, for `-o text`; its values one line each (terminal-safe: a manifest's node name may hold anything). */
export function headText(h: ShowHead): string {
  // Transport labels already name their kind (`replay:DIR`, `netns:NAME`): say it once.
  const where = h.source.replace(/^replay:/, '');
  const line = (s: string) => terminalSafe(s);
  return `node ${line(h.node)} (${line(h.kernel ?? 'kernel ?')}) · ${h.live ? 'live' : 'replay'} ${line(where)} · captured ${line(h.capturedAt)}\nmode ${h.mode}: ${line(h.evidence.join('; '))}\n`;
}

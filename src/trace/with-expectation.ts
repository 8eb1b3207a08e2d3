/**
 * A walk set beside the API's expectation for its destination (src/analysis/expectation-lookup.ts),
 * for `trace` and the Step pane: notes saying what kube-proxy on this node should do with
 * that Service's traffic, and whether the endpoint reached is one it would use. Pure.
 */
import { expectationForDestination, expectationNotes } from '../analysis/expectation-lookup.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { TraceResult } from './types.js';

/** `r` with the expectation notes appended; unchanged without API objects or when the destination is no Service frontend. */
export function withExpectation(snapshot: NodeSnapshot, r: TraceResult): TraceResult {
  const objects = snapshot.api?.value;
  const p = r.request.packet;
  if (!objects || p.dport === null) return r;
  const d = expectationForDestination(objects, { name: snapshot.meta.node }, p.dst, p.dport, p.proto);
  return d ? { ...r, notes: [...r.notes, ...expectationNotes(d, r.verdict.endpoint)] } : r;
}

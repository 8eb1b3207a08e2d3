/**
 * The diagnosis the Services pane shows (issue 17): made once per snapshot and kept beside it.
 * A snapshot of up to {@link EAGER_SERVICES} Services is diagnosed as soon as it is complete (the
 * VERDICT column fills at once); a larger one when the user asks (`d`), so the first frame of a
 * 10,000-Service capture does not wait for it.
 */
import { diagnoseSnapshot, type Diagnosis, type Evidence, type ServiceDiagnosis, type Verdict } from '../analysis/diagnose/index.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { UiAction } from './state.js';

/** Services diagnosed without being asked. */
export const EAGER_SERVICES = 2000;

/** A diagnosis with its Services by `ns/name`. */
export interface DiagnosisIndex {
  readonly diagnosis: Diagnosis;
  readonly byService: ReadonlyMap<string, ServiceDiagnosis>;
  readonly verdicts: ReadonlyMap<string, Verdict>;
}

const made = new WeakMap<NodeSnapshot, DiagnosisIndex>();

/** The snapshot's diagnosis: made when it is complete and either small or `asked`; null otherwise. */
export function diagnosisOf(snapshot: NodeSnapshot | null, asked: boolean): DiagnosisIndex | null {
  if (!snapshot || snapshot.pending?.length) return null;
  const have = made.get(snapshot);
  if (have) return have;
  if (!asked && (snapshot.api?.value?.services.length ?? 0) > EAGER_SERVICES) return null;
  const diagnosis = diagnoseSnapshot(snapshot);
  const byService = new Map(diagnosis.services.map((s) => [`${s.namespace}/${s.name}`, s]));
  const index = { diagnosis, byService, verdicts: new Map([...byService].map(([k, s]) => [k, s.verdict])) };
  made.set(snapshot, index);
  return index;
}

/** Where Enter on a finding goes: the Rules pane row of its first rule evidence, else the pane of its first evidence. */
export function openEvidenceActions(evidence: readonly Evidence[]): UiAction[] {
  const rule = evidence.find((e) => e.at);
  if (rule?.at) {
    const { ruleset, table, chain, rule: index, set } = rule.at;
    if (chain !== undefined) return [{ type: 'openRules', location: { kind: 'chain', ruleset, table, chain, ...(index !== undefined ? { focusRule: index } : {}), from: 'services' } }];
    if (set !== undefined) return [{ type: 'openRules', location: { kind: 'set', ruleset, table, set } }];
  }
  const first = evidence[0];
  if (!first || first.pane === 'services') return [];
  return [{ type: 'switchPane', pane: first.pane }];
}

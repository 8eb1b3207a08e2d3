/**
 * `nodescope diagnose`: one verdict per Service on the node (src/analysis/diagnose/), as JSON
 * or text. JSON (the issue 17 contract): `{…the show header…, dataplane, counts, nodeFindings,
 * services: [{namespace, name, verdict, findings: [{layer, code, severity, message, port?,
 * frontend?, endpoint?, evidence: [{pane, ref, text?}]}]}]}`. Text: the show header, one line
 * per Service (`VERDICT ns/name`), its findings indented under it with the first proof, and the
 * node's own findings last. Every string from the node or the API is made terminal-safe here.
 */
import { diagnoseSnapshot, VERDICTS, type Diagnosis, type Finding, type Verdict } from '../analysis/diagnose/index.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { serviceNotFound } from '../model/service-ref.js';
import { terminalSafe } from '../text/terminal-safe.js';
import { toJson } from '../text/json.js';
import { headText, showHead } from './header.js';

/** Options of `nodescope diagnose`. */
export interface DiagnoseReportOptions {
  readonly service?: string;
  /**
   * `-n NAMESPACE`: only this namespace's Services are listed and counted. The diagnosis itself
   * reads every Service the source has, so a frontend of another namespace is not called unexpected.
   */
  readonly namespace?: string;
  /** Findings with severity `info` too (default: text shows them, as they explain a verdict). */
  readonly quiet?: boolean;
}

function findingText(f: Finding): string {
  const proof = f.evidence[0];
  const where = proof ? `\n      proof: ${terminalSafe(`${proof.pane} ${proof.ref}`)}${proof.text ? ` — ${terminalSafe(proof.text)}` : ''}` : '';
  return `    ${f.severity === 'info' ? 'info' : f.severity}: [${f.layer}] ${terminalSafe(f.message)}${where}\n`;
}

/** The text form of a diagnosis (see the module comment). */
export function diagnosisText(snapshot: NodeSnapshot, d: Diagnosis, options: DiagnoseReportOptions = {}): string {
  let out = headText(showHead(snapshot));
  const c = d.header.counts;
  out += `diagnose ${d.header.dataplane}: ${d.services.length} Service(s): ${c.ok} ok, ${c.degraded} degraded, ${c.broken} broken, ${c.unknown} unknown\n`;
  for (const s of d.services) {
    out += `${s.verdict.toUpperCase().padEnd(8)} ${terminalSafe(`${s.namespace}/${s.name}`)}\n`;
    for (const f of s.findings) if (!options.quiet || f.severity !== 'info') out += findingText(f);
  }
  if (d.header.nodeFindings.length > 0) {
    out += 'node:\n';
    for (const f of d.header.nodeFindings) out += findingText(f);
  }
  return out;
}

/** The diagnosis of `namespace`'s Services only (counts recounted; node findings kept). */
function inNamespace(d: Diagnosis, namespace: string | undefined): Diagnosis {
  if (namespace === undefined) return d;
  const services = d.services.filter((s) => s.namespace === namespace);
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, services.filter((s) => s.verdict === v).length])) as Record<Verdict, number>;
  return { header: { ...d.header, services: services.length, counts }, services };
}

/**
 * Diagnoses the snapshot and renders it in `format`, with the diagnosis for the exit status.
 * Throws `UserError` when `--service` names no Service of the API objects (with close names).
 */
export function showDiagnose(snapshot: NodeSnapshot, format: 'json' | 'text', options: DiagnoseReportOptions = {}): { out: string; diagnosis: Diagnosis } {
  const api = snapshot.api?.value ?? null;
  if (options.service !== undefined && api) {
    const names = api.services.map((s) => `${s.meta.namespace}/${s.meta.name}`);
    if (!names.includes(options.service)) throw serviceNotFound(options.service, names);
  }
  const diagnosis = inNamespace(diagnoseSnapshot(snapshot, api, options.service !== undefined ? { service: options.service } : {}), options.namespace);
  if (format === 'json') {
    const { header, services } = diagnosis;
    return { out: toJson({ ...showHead(snapshot), dataplane: header.dataplane, counts: header.counts, nodeFindings: header.nodeFindings, services }), diagnosis };
  }
  return { out: diagnosisText(snapshot, diagnosis, options), diagnosis };
}

/**
 * `nodescope diagnose`: one verdict per Service on the node (src/analysis/diagnose/), as JSON
 * or text. JSON (the issue 17 contract): `{…the show header…, dataplane, counts, nodeFindings,
 * services: [{namespace, name, verdict, findings: [{layer, code, severity, message, port?,
 * frontend?, endpoint?, evidence: [{pane, ref, text?}]}]}]}`. Text: the show header, one line
 * per Service (`VERDICT ns/name`), its findings indented under it with the first proof, and the
 * node's own findings last. Every string from the node or the API is made terminal-safe here.
 */
import { diagnoseSnapshot, resolveDiagnoseClient, VERDICTS, type DiagnoseClient, type DiagnoseOptions, type Diagnosis, type DnsLayer, type Finding, type Verdict } from '../analysis/diagnose/index.js';
import { detectProxyMode } from '../analysis/proxy-mode.js';
import { nodeAddressOf, walkFromClient } from '../trace/diagnose-from.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { serviceNotFound } from '../model/service-ref.js';
import { terminalSafe } from '../text/terminal-safe.js';
import { toDocument } from '../text/document.js';
import { cellWidth } from '../text/cells.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { findingMessage, sayIn } from '../analysis/diagnose/say.js';
import { headText, showHead } from './header.js';

/** Options of `nodescope diagnose`. */
export interface DiagnoseReportOptions {
  readonly service?: string;
  /** `--from`: a Pod (`ns/name` or name), a Pod IP, `node`, or an outside address. */
  readonly from?: string;
  /** The DNS layer read from the source (src/dns/diagnose-dns.ts); default: not checked. */
  readonly dns?: DnsLayer;
  /**
   * `-n NAMESPACE`: only this namespace's Services are listed and counted. The diagnosis itself
   * reads every Service the source has, so a frontend of another namespace is not called unexpected.
   */
  readonly namespace?: string;
  /** Findings with severity `info` too (default: text shows them, as they explain a verdict). */
  readonly quiet?: boolean;
  /** The language of the text form (its sentences, verdicts and severities; layers and codes stay English). Default `en`. */
  readonly lang?: Lang;
}

/** A verdict or severity in `lang`: the code itself in English. */
export function verdictWord(lang: Lang, v: Verdict | 'info' | 'failed'): string {
  return lang === 'en' ? v : t(lang, `cli.verdict.${v}`);
}

function findingText(f: Finding, lang: Lang): string {
  const proof = f.evidence[0];
  const where = proof ? `\n      ${t(lang, 'dg.report.proof')}: ${terminalSafe(`${proof.pane} ${proof.ref}`)}${proof.text ? ` — ${terminalSafe(proof.text)}` : ''}` : '';
  const layer = lang === 'en' ? f.layer : t(lang, `findings.layer.${f.layer}`);
  return `    ${verdictWord(lang, f.severity)}: [${layer}] ${terminalSafe(findingMessage(f, lang))}${where}\n`;
}

/** The finding without its i18n phrase (the JSON contract: `message` is the English sentence). */
function plain({ said: _said, ...f }: Finding): Finding {
  return f;
}

/** The text form of a diagnosis (see the module comment). */
export function diagnosisText(snapshot: NodeSnapshot, d: Diagnosis, options: DiagnoseReportOptions = {}, client: DiagnoseClient | null = null): string {
  const lang = options.lang ?? 'en';
  let out = headText(showHead(snapshot), lang);
  const c = d.header.counts;
  if (client) {
    const label = terminalSafe(client.label);
    out += `${client.ip !== null && client.ip !== client.label ? tf(lang, 'dg.report.fromIp', { client: label, ip: client.ip }) : tf(lang, 'dg.report.from', { client: label })}\n`;
  }
  out += `${tf(lang, 'dg.report.summary', { dataplane: d.header.dataplane, services: d.services.length, ...c })}\n`;
  for (const s of d.services) {
    const word = lang === 'en' ? s.verdict.toUpperCase() : verdictWord(lang, s.verdict);
    out += `${word}${' '.repeat(Math.max(1, 9 - cellWidth(word)))}${terminalSafe(`${s.namespace}/${s.name}`)}\n`;
    for (const f of s.findings) if (!options.quiet || f.severity !== 'info') out += findingText(f, lang);
  }
  const dns = d.header.dns;
  const reason = dns.said ? sayIn(dns.said, lang) : (dns.reason ?? '');
  out += `${dns.checked ? tf(lang, 'dg.report.dnsChecked', { zone: terminalSafe(dns.zone ?? '') }) : tf(lang, 'dg.report.dnsNot', { reason: terminalSafe(reason) })}\n`;
  if (d.header.nodeFindings.length > 0) {
    out += `${t(lang, 'dg.report.node')}\n`;
    for (const f of d.header.nodeFindings) out += findingText(f, lang);
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
 * The options of `diagnoseSnapshot` for the report's: `--service`, and for `--from` the
 * client resolved and the walk of each Service's frontends from it. Throws `UserError` for a
 * `--from` Pod name the API objects do not have (with close names).
 */
export function diagnoseOptionsOf(snapshot: NodeSnapshot, options: DiagnoseReportOptions): { options: DiagnoseOptions; client: DiagnoseClient | null } {
  const api = snapshot.api?.value ?? null;
  const service = { ...(options.service !== undefined ? { service: options.service } : {}), ...(options.dns ? { dns: options.dns } : {}) };
  if (options.from === undefined) return { options: service, client: null };
  const client = resolveDiagnoseClient(options.from, api);
  const mode = detectProxyMode(snapshot).mode;
  const ctx = { snapshot, client, nodeIP: nodeAddressOf(snapshot, api), legacyOnly: mode === 'iptables-legacy', mode };
  return { options: { ...service, walk: (svc) => walkFromClient(svc, ctx) }, client };
}

/**
 * Diagnoses the snapshot and renders it in `format`, with the diagnosis for the exit status.
 * Throws `UserError` when `--service` names no Service of the API objects, or `--from` no
 * Pod of them (with close names). JSON gains `from: {kind, label, ip, pod?, podNode?}` with `--from`.
 */
export function showDiagnose(snapshot: NodeSnapshot, format: 'json' | 'yaml' | 'text', options: DiagnoseReportOptions = {}): { out: string; diagnosis: Diagnosis } {
  const api = snapshot.api?.value ?? null;
  if (options.service !== undefined && api) {
    const names = api.services.map((s) => `${s.meta.namespace}/${s.meta.name}`);
    if (!names.includes(options.service)) throw serviceNotFound(options.service, names);
  }
  const { options: run, client } = diagnoseOptionsOf(snapshot, options);
  const diagnosis = inNamespace(diagnoseSnapshot(snapshot, api, run), options.namespace);
  if (format === 'json' || format === 'yaml') {
    const { header, services } = diagnosis;
    const { said: _said, ...dns } = header.dns;
    const list = services.map((s) => ({ ...s, findings: s.findings.map(plain) }));
    return { out: toDocument('Diagnosis', { ...showHead(snapshot), dataplane: header.dataplane, counts: header.counts, dns, ...(client ? { from: client } : {}), nodeFindings: header.nodeFindings.map(plain), services: list }, format), diagnosis };
  }
  return { out: diagnosisText(snapshot, diagnosis, options, client), diagnosis };
}

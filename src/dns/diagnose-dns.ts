/**
 * The DNS layer of `nodescope diagnose` (issue 17, item 5): each Service's
 * `<svc>.<ns>.svc.<zone>` answers as a capture recorded them (`extra/dns.json`, the DNS
 * pane's rows) against what CoreDNS's kubernetes plugin should answer from the API objects
 * (src/analysis/dns-expected.ts: the ClusterIPs for A and AAAA, the ready Pod IPs of a
 * headless Service, a CNAME for an ExternalName, NXDOMAIN for an ExternalName holding an IP),
 * compared as the DNS pane compares them (src/dns/compare.ts). A question the capture did not
 * ask is no finding; with no recorded answers at all the layer is "not checked", never ok. Pure.
 */
import type { DnsLayer, Finding, Severity } from '../analysis/diagnose/index.js';
import { said, sayIn, saying, type Said } from '../analysis/diagnose/say.js';
import { expectedAnswer, serviceFqdn } from '../analysis/dns-expected.js';
import type { DnsCapture, DnsCheck, DnsExchange, DnsQuestionType } from '../model/dns.js';
import type { ApiObjects, Service } from '../model/k8s.js';
import { formatServiceRef } from '../model/service-ref.js';
import { parseAddress } from '../net/address.js';
import type { Transport } from '../sources/transport.js';
import { compareExchange } from './compare.js';
import { readBundleDnsCapture } from './replay.js';

const norm = (s: string): string => s.toLowerCase().replace(/\.$/, '');

/** The questions judged per Service: A and AAAA of its name, and CNAME for an ExternalName. */
function questionsOf(svc: Service): ('A' | 'AAAA' | 'CNAME')[] {
  return svc.type === 'ExternalName' ? ['A', 'AAAA', 'CNAME'] : ['A', 'AAAA'];
}

/**
 * How bad a wrong answer is: a client resolving the name gets a wrong address or none for the
 * family the Service has (broken), or a stray answer or code for a family it lacks (degraded:
 * getaddrinfo still finds the other family's answer).
 */
function severityOf(check: DnsCheck, svc: Service): Severity {
  if (check.qtype !== 'AAAA') return 'broken';
  const v6 = svc.clusterIPs.some((ip) => parseAddress(ip)?.family === 'ipv6');
  return v6 || check.records.some((r) => r.type === 'AAAA' && r.expected !== null) ? 'broken' : 'degraded';
}

function answerSaid(texts: readonly string[], rcode: string | null): Said | string {
  if (rcode === 'NOERROR' && texts.length === 0) return said('dg.dnsNoData');
  return texts.length > 0 ? texts.join(', ') : (rcode ?? said('dg.dnsNoReply'));
}

function findingOf(check: DnsCheck, svc: Service): Finding | null {
  const ref = formatServiceRef(svc.meta);
  const e = check.exchange;
  const evidence = [{ pane: 'dns' as const, ref: `${ref} ${check.qname} ${check.qtype}`, text: e.answers.map((a) => `${a.type} ${a.data}`).join(', ') || (e.rcode ?? e.outcome) }];
  if (check.verdict === 'no-reply') {
    if (e.outcome === 'not-captured') return null;
    return { layer: 'dns', code: 'dns-not-answered', severity: 'unknown', ...saying('dg.dnsNotAnswered', { qname: check.qname, qtype: check.qtype, server: e.server, outcome: `${e.outcome}${e.error ? `: ${e.error}` : ''}` }), evidence };
  }
  if (check.verdict !== 'mismatch') return null;
  const got = check.records.filter((r) => r.actual !== null && r.verdict !== 'upstream').map((r) => r.actual!);
  const want = check.records.filter((r) => r.expected !== null).map((r) => r.expected!);
  const params = { qname: check.qname, qtype: check.qtype, got: answerSaid(got, e.rcode), want: answerSaid(want, check.expectedRcode) };
  const text = check.expectedReason ? saying('dg.dnsWrongWhy', { ...params, why: check.expectedReason }) : saying('dg.dnsWrong', params);
  return { layer: 'dns', code: 'dns-wrong-answer', severity: severityOf(check, svc), ...text, evidence };
}

function notChecked(why: Said): DnsLayer {
  return { checked: false, reason: sayIn(why, 'en'), said: why };
}

/**
 * The DNS layer from `capture` (null: none recorded) for every Service of `api`, in cluster
 * domain `zone`. The first recorded exchange of each question is judged (the one the DNS pane
 * replays first). Not checked when the capture holds no answer for any Service's name.
 */
export function dnsLayerOf(api: ApiObjects, capture: DnsCapture | null, zone: string): DnsLayer {
  if (!capture || capture.exchanges.length === 0) return notChecked(said('dg.dns.noCapture'));
  const first = new Map<string, DnsExchange>();
  for (const e of capture.exchanges) {
    const k = `${norm(e.qname)}|${e.qtype}`;
    if (!first.has(k)) first.set(k, e);
  }
  const findings = new Map<string, Finding[]>();
  let asked = 0;
  for (const svc of api.services) {
    const fqdn = serviceFqdn(svc.meta.namespace, svc.meta.name, zone);
    const list: Finding[] = [];
    for (const qtype of questionsOf(svc)) {
      const e = first.get(`${fqdn}|${qtype satisfies DnsQuestionType}`);
      if (!e) continue;
      asked++;
      const f = findingOf(compareExchange(expectedAnswer(api, fqdn, qtype, { zone }), e, zone), svc);
      if (f) list.push(f);
    }
    if (list.length > 0) findings.set(formatServiceRef(svc.meta), list);
  }
  if (asked === 0) return notChecked(said('dg.dns.noneNamed', { zone }));
  return { checked: true, zone, findings };
}

/**
 * The DNS layer of a source: a replay's recorded answers (its bundle's `extra/dns.json`);
 * a live source is not asked (diagnose sends no DNS question: `nodescope show dns` does), so
 * its layer is not checked. `zone` is asked only for a replay (reading it may run the
 * `kubelet-config` probe). Throws `UserError` for a capture file that leads out of the bundle.
 */
export async function dnsLayerOfSource(transport: Transport, api: ApiObjects, zone: () => Promise<string>): Promise<DnsLayer> {
  const dir = transport.kind === 'replay' ? (transport as Transport & { bundle?: { dir: string } }).bundle?.dir : undefined;
  if (dir === undefined) return notChecked(said('dg.dns.live'));
  const read = readBundleDnsCapture(dir);
  return dnsLayerOf(api, read.present ? read.capture : null, await zone());
}

/**
 * A tour step's object, found in a snapshot: where the panes must put their cursors
 * (the Services row; the chains of the Rules pane opened in the order a reader follows
 * them, each with the row to stand on; the words for the Conntrack filter; the packet
 * walk's step) and the focus lines the tour bar shows about the object — the rule text,
 * the conntrack entry, the LB map entry, the expected DNS answer, the mode counts.
 *
 * The rows are the ones the panes show (src/analysis/rules-view.ts, nft-view.ts,
 * service-view.ts), so a cursor index here is the row the user sees highlighted.
 * An object the capture does not have is a `problem` (localized), never an exception.
 */
import { saidText } from '../text/why.js';
import { compareModes, COMPARE_MODES, modeTotal, type CompareMode } from '../analysis/compare-modes.js';
import { conntrackNatView, formatEndpoint } from '../analysis/conntrack-nat.js';
import { expectedServiceDns } from '../analysis/dns-expected.js';
import { nftChainRows, nftSetRows } from '../analysis/nft-view.js';
import { chainRows, formatProbability, type RuleRow } from '../analysis/rules-view.js';
import { serviceDataplane } from '../analysis/service-dataplane.js';
import { buildServiceView, type ServiceRow } from '../analysis/service-view.js';
import { UserError } from '../errors.js';
import { formatFrontend, formatServiceFlags } from '../model/cilium.js';
import { formatServiceRef, refFromKey } from '../model/service-ref.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { traceFromSnapshot } from '../trace/choose-engine.js';
import { stepLine, formatHeader } from '../trace/describe.js';
import type { TraceStep } from '../trace/types.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { describeTarget, type TourStep, type TourTarget } from './model.js';

/** A colour role for a focus line (the UI theme's token names). */
export type FocusTone = 'accent' | 'nat' | 'warn' | 'ok' | 'muted' | 'jump';

/** One line about the highlighted object. */
export interface FocusLine {
  readonly text: string;
  readonly tone: FocusTone;
}

/** A cursor position in a list of `count` rows. */
export interface RowCursor {
  readonly index: number;
  readonly count: number;
}

/** One chain or set of the Rules pane to open, and the row to stand on. */
export interface RulesHop {
  readonly ruleset: 'iptables' | 'nft';
  readonly table: string;
  readonly chain: string | null;
  readonly set: string | null;
  readonly cursor: RowCursor;
}

/**
 * Where the step's object is. `problem`: why it is not in this capture (then the other
 * fields say what could still be shown). `service`: the Service (`ns/name`) to select;
 * `serviceRow`: its row on the Services pane; `rulesPath`: chains/sets to open, in order;
 * `filter`: words for the pane's filter (Conntrack); `cursor`: row of another pane (the
 * walk's step for the Step pane).
 */
export interface StepResolution {
  readonly problem: string | null;
  readonly service: string | null;
  readonly serviceRow: RowCursor | null;
  readonly rulesPath: readonly RulesHop[];
  readonly filter: string | null;
  readonly cursor: RowCursor | null;
  readonly focus: readonly FocusLine[];
}

const EMPTY: StepResolution = { problem: null, service: null, serviceRow: null, rulesPath: [], filter: null, cursor: null, focus: [] };
const MAX_LIST = 3;

function missing(lang: Lang, step: TourStep, extra: Partial<StepResolution> = {}): StepResolution {
  return { ...EMPTY, ...extra, problem: tf(lang, 'tour.notFound', { capture: step.capture, what: describeTarget(step.target) }) };
}

function line(text: string, tone: FocusTone = 'accent'): FocusLine {
  return { text, tone };
}

function serviceRows(snapshot: NodeSnapshot): readonly ServiceRow[] {
  const api = snapshot.api?.value;
  return api ? buildServiceView(api, { nodeName: snapshot.meta.node }).rows : [];
}

function findService(snapshot: NodeSnapshot, name: string): { row: ServiceRow; cursor: RowCursor } | null {
  const rows = serviceRows(snapshot);
  const index = rows.findIndex((r) => formatServiceRef(r) === name);
  return index < 0 ? null : { row: rows[index]!, cursor: { index, count: rows.length } };
}

function portsText(row: ServiceRow): string {
  return row.ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol}→${p.endpointPorts.join('|') || String(p.targetPort)}`).join(', ');
}

function serviceFocus(row: ServiceRow, lang: Lang): FocusLine[] {
  const ip = row.headless ? 'None' : (row.clusterIPs[0] ?? row.externalName ?? '');
  const ready = row.endpoints.filter((e) => e.ready !== false);
  const out = [line(`${row.namespace}/${row.name}  ${row.type}  ${ip}  ${portsText(row)}`)];
  if (row.endpoints.length === 0) out.push(line(t(lang, 'tour.focus.noEndpoints'), 'warn'));
  else out.push(line(tf(lang, 'tour.focus.endpoints', { ready: ready.length, total: row.endpoints.length, list: row.endpoints.slice(0, MAX_LIST).map((e) => e.address).join(' ') }), 'ok'));
  return out;
}

function endpointsFocus(row: ServiceRow, lang: Lang): FocusLine[] {
  const out: FocusLine[] = [];
  const selector = row.selector ? Object.entries(row.selector).map(([k, v]) => `${k}=${v}`).join(',') : null;
  if (selector === null) out.push(line(t(lang, 'tour.focus.noSelector'), 'muted'));
  else if (row.selectedPods !== null) out.push(line(tf(lang, 'tour.focus.selector', { selector, pods: row.selectedPods.length }), row.selectedPods.length ? 'accent' : 'warn'));
  if (row.endpoints.length === 0) {
    out.push(line(tf(lang, 'tour.focus.slices', { slices: row.slices.map((s) => s.name).join(' ') || '—', count: 0 }), 'warn'));
    return out;
  }
  for (const e of row.endpoints.slice(0, MAX_LIST)) {
    const ports = e.ports.map((p) => `${p.port ?? '*'}/${p.protocol}`).join(',');
    const cond = [e.ready === false ? '!ready' : 'ready', e.serving === false ? '!serving' : 'serving', e.terminating ? 'terminating' : ''].filter(Boolean).join(' ');
    out.push(line(`${e.address}:${ports}  ${cond}  ${e.nodeName ?? ''}`, e.terminating ? 'warn' : 'ok'));
  }
  if (row.endpoints.length > MAX_LIST) out.push(line(tf(lang, 'tour.focus.more', { n: row.endpoints.length - MAX_LIST }), 'muted'));
  return out;
}

function rowText(r: RuleRow): string {
  return `${r.label} ${r.matches} ${r.target} ${r.raw}`.toLowerCase();
}

function rowIndex(rows: readonly RuleRow[], match: string | null, fallback = 0): number {
  if (match === null) return fallback;
  return rows.findIndex((r) => rowText(r).includes(match.toLowerCase()));
}

function ruleFocus(r: RuleRow, where: string, lang: Lang): FocusLine[] {
  const out = [line(`${where} #${r.index}: ${r.raw}`, /\b(DNAT|dnat)\b/.test(r.target) ? 'nat' : r.jumpTo || r.jumpSet ? 'jump' : 'accent')];
  if (r.packets !== null && r.packets !== undefined) out.push(line(tf(lang, 'tour.focus.counter', { packets: String(r.packets) }), 'muted'));
  return out;
}

function chainTarget(snapshot: NodeSnapshot, step: TourStep, target: Extract<TourTarget, { kind: 'chain' }>, lang: Lang): StepResolution {
  const ipt = snapshot.iptables?.value;
  const nft = snapshot.nft?.value;
  const useIptables = target.ruleset === 'iptables' || (target.ruleset === null && ipt && chainRows(ipt, target.table, target.chain) !== null);
  const rows = useIptables ? (ipt ? chainRows(ipt, target.table, target.chain) : null) : nft ? nftChainRows(nft, target.table, target.chain) : null;
  if (!rows) return missing(lang, step);
  const index = rowIndex(rows, target.match);
  if (index < 0) return missing(lang, step);
  return {
    ...EMPTY,
    rulesPath: [{ ruleset: useIptables ? 'iptables' : 'nft', table: target.table, chain: target.chain, set: null, cursor: { index, count: rows.length } }],
    focus: ruleFocus(rows[index]!, `${target.table}/${target.chain}`, lang),
  };
}

function setTarget(snapshot: NodeSnapshot, step: TourStep, target: Extract<TourTarget, { kind: 'set' }>, lang: Lang): StepResolution {
  const nft = snapshot.nft?.value;
  const rows = nft ? nftSetRows(nft, target.table, target.set) : null;
  const index = rows ? rowIndex(rows, target.match) : -1;
  if (!rows || index < 0) return missing(lang, step);
  const r = rows[index]!;
  return {
    ...EMPTY,
    rulesPath: [{ ruleset: 'nft', table: target.table, chain: null, set: target.set, cursor: { index, count: rows.length } }],
    focus: [line(`@${target.set}: ${r.raw}`, r.jumpTo ? 'jump' : 'accent'), line(tf(lang, 'tour.focus.elements', { n: rows.length }), 'muted')],
  };
}

/** The branch rows of a per-Service chain and the endpoint each leads to. */
function branchesOf(rows: readonly RuleRow[], endpointOf: (chain: string) => string | null): { row: number; target: string; endpoint: string | null; probability: number | null }[] {
  const out: { row: number; target: string; endpoint: string | null; probability: number | null }[] = [];
  rows.forEach((r, i) => {
    if (r.jumpTo && (r.probability !== null || r.branch === true || /^KUBE-SEP-|^endpoint-/.test(r.jumpTo))) out.push({ row: i, target: r.jumpTo, endpoint: endpointOf(r.jumpTo), probability: r.probability });
  });
  return out;
}

function dnatIndex(rows: readonly RuleRow[]): number {
  return rows.findIndex((r) => /^(DNAT|dnat)\b/.test(r.target));
}

function dnatDestination(rows: readonly RuleRow[] | null): string | null {
  const r = rows?.[dnatIndex(rows)];
  return r ? (/(\d+\.\d+\.\d+\.\d+|\[[0-9a-f:]+\]):(\d+)/i.exec(r.target)?.[0] ?? null) : null;
}

function serviceChainTarget(snapshot: NodeSnapshot, step: TourStep, target: Extract<TourTarget, { kind: 'serviceChain' }>, lang: Lang): StepResolution {
  const svc = findService(snapshot, target.service);
  const base = { service: target.service, serviceRow: svc?.cursor ?? null };
  const where = serviceDataplane(snapshot, refFromKey(target.service), { ports: svc?.row.ports ?? [], lbMaps: false });
  const ipt = where.kind === 'iptables' ? where.ruleset : undefined;
  const nft = where.kind === 'nft' ? where.ruleset : undefined;
  const portOk = (comment: string) => target.port === null || comment.includes(`:${target.port}`) || comment.includes(`/${target.port}`);
  const iptChains = where.kind === 'iptables' ? where.chains.filter((c) => portOk(c.comment) && c.chain.startsWith('KUBE-SVC-')) : [];
  const nftChains = where.kind === 'nft' ? where.chains.filter((c) => target.port === null || c.chain.endsWith(`/${target.port}`)) : [];
  const path: RulesHop[] = [];
  const focus: FocusLine[] = [];
  let serviceRows: RuleRow[] | null = null;
  let serviceHop: Omit<RulesHop, 'cursor'>;
  let endpointRows: (chain: string) => RuleRow[] | null;
  if (ipt && iptChains[0]) {
    const ref = iptChains[0];
    const services = chainRows(ipt, 'nat', 'KUBE-SERVICES') ?? [];
    const at = ref.servicesRuleIndex ?? 0;
    path.push({ ruleset: 'iptables', table: 'nat', chain: 'KUBE-SERVICES', set: null, cursor: { index: at, count: services.length } });
    if (target.hop === 'services' && services[at]) focus.push(...ruleFocus(services[at], 'nat/KUBE-SERVICES', lang));
    serviceRows = chainRows(ipt, 'nat', ref.chain);
    serviceHop = { ruleset: 'iptables', table: 'nat', chain: ref.chain, set: null };
    endpointRows = (chain) => chainRows(ipt, 'nat', chain);
  } else if (nft && nftChains[0]) {
    const ref = nftChains[0];
    const vipRows = nftSetRows(nft, ref.table, 'service-ips') ?? [];
    const at = vipRows.findIndex((r) => r.jumpTo === ref.chain);
    if (at >= 0) {
      path.push({ ruleset: 'nft', table: ref.table, chain: null, set: 'service-ips', cursor: { index: at, count: vipRows.length } });
      if (target.hop === 'services') focus.push(line(`@service-ips: ${vipRows[at]!.raw}`, 'jump'));
    }
    serviceRows = nftChainRows(nft, ref.table, ref.chain);
    serviceHop = { ruleset: 'nft', table: ref.table, chain: ref.chain, set: null };
    endpointRows = (chain) => nftChainRows(nft, ref.table, chain);
  } else {
    return missing(lang, step, base);
  }
  if (target.hop === 'services') return { ...EMPTY, ...base, rulesPath: path, focus };
  const rows = serviceRows ?? [];
  const branches = branchesOf(rows, (chain) => dnatDestination(endpointRows(chain)));
  const wanted = target.endpoint === null ? branches[0] : branches.find((b) => b.endpoint?.startsWith(`${target.endpoint}:`) || b.endpoint === `[${target.endpoint}]`);
  if (target.hop === 'service') {
    path.push({ ...serviceHop, cursor: { index: branches[0]?.row ?? 0, count: rows.length } });
    focus.push(line(`${serviceHop.chain}: ${tf(lang, 'tour.focus.branches', { n: branches.length })}`, 'jump'));
    for (const b of branches.slice(0, MAX_LIST)) focus.push(line(`  ${b.probability === null ? '' : formatProbability(b.probability) + ' '}→ ${b.endpoint ?? b.target}`, 'accent'));
    return { ...EMPTY, ...base, rulesPath: path, focus };
  }
  if (!wanted) return missing(lang, step, { ...base, rulesPath: path });
  path.push({ ...serviceHop, cursor: { index: wanted.row, count: rows.length } });
  const epRows = endpointRows(wanted.target) ?? [];
  const at = Math.max(0, dnatIndex(epRows));
  path.push({ ruleset: serviceHop.ruleset, table: serviceHop.table, chain: wanted.target, set: null, cursor: { index: at, count: epRows.length } });
  if (epRows[at]) focus.push(...ruleFocus(epRows[at], `${serviceHop.table}/${wanted.target}`, lang));
  return { ...EMPTY, ...base, rulesPath: path, focus };
}

function lbTarget(snapshot: NodeSnapshot, step: TourStep, target: Extract<TourTarget, { kind: 'lbEntry' }>, lang: Lang): StepResolution {
  const services = snapshot.lb?.value?.services ?? [];
  const svc = services.find((s) => formatFrontend(s.frontend).toUpperCase() === target.frontend.toUpperCase());
  if (!svc) return missing(lang, step);
  const [ip = '', rest = ''] = target.frontend.split(/:(?=\d+\/)/);
  const port = Number(rest.split('/')[0]);
  const owner = serviceRows(snapshot).find((r) => r.clusterIPs.includes(ip) && r.ports.some((p) => p.port === port));
  const focus = [
    line(`${formatFrontend(svc.frontend)}  ${svc.flags === null ? (svc.type ?? '') : formatServiceFlags(svc.flags)}  rev-NAT ${svc.id ?? '?'}  count ${svc.count ?? '?'} qcount ${svc.qcount ?? 0}`, 'nat'),
    ...svc.slots.slice(0, MAX_LIST).map((s) => line(`  slot ${s.slot ?? '?'} → backend ${s.backendId ?? '?'} ${s.backend ? `${formatEndpoint({ ip: s.backend.ip, port: s.backend.port })} ${s.backend.state ?? ''}` : ''}`, s.backend?.state === 'active' ? 'ok' : 'warn')),
  ];
  if (svc.slots.length > MAX_LIST) focus.push(line(tf(lang, 'tour.focus.more', { n: svc.slots.length - MAX_LIST }), 'muted'));
  const found = owner ? findService(snapshot, formatServiceRef(owner)) : null;
  return { ...EMPTY, service: found ? formatServiceRef(found.row) : null, serviceRow: found?.cursor ?? null, focus, cursor: { index: services.indexOf(svc), count: services.length } };
}

function flowTarget(snapshot: NodeSnapshot, step: TourStep, target: Extract<TourTarget, { kind: 'flow' }>, lang: Lang): StepResolution {
  const words = target.words.toLowerCase().split(/\s+/).filter(Boolean);
  const entries = snapshot.conntrack?.value?.entries ?? [];
  const views = entries.map(conntrackNatView).filter((v) => {
    const text = `${v.entry.proto} ${v.text} ${v.entry.state ?? ''} ${v.entry.raw}`.toLowerCase();
    return words.every((w) => text.includes(w));
  });
  const svc = target.service ? findService(snapshot, target.service) : null;
  const first = views[0];
  if (!first) return missing(lang, step, { service: target.service, serviceRow: svc?.cursor ?? null, filter: target.words });
  const e = first.entry;
  const focus = [
    line(`${e.proto} ${first.text}  ${e.state ?? ''}`.trimEnd(), first.dnat ? 'nat' : 'accent'),
    line(tf(lang, 'tour.focus.flowPackets', { po: String(e.orig.packets ?? '?'), pr: String(e.reply.packets ?? '?') }), 'muted'),
  ];
  if (views.length > 1) focus.push(line(tf(lang, 'tour.focus.flows', { count: views.length }), 'muted'));
  return { ...EMPTY, service: target.service, serviceRow: svc?.cursor ?? null, filter: target.words, focus };
}

function focusStep(steps: readonly TraceStep[], focus: Extract<TourTarget, { kind: 'packet' }>['focus']): number {
  const last = steps.length - 1;
  if (focus === 'final') return last;
  if (focus === 'conntrack') return Math.max(0, steps.findIndex((s) => s.kind === 'conntrack'));
  if (focus === 'nat') return Math.max(0, steps.findIndex((s) => s.kind === 'nat'));
  const dnat = steps.findIndex((s) => s.kind === 'rule' && s.matched === true && /\b(DNAT|dnat)\b/.test(s.ruleText ?? ''));
  return dnat >= 0 ? dnat : Math.max(0, steps.findIndex((s) => s.kind === 'nat'));
}

function packetTarget(snapshot: NodeSnapshot, step: TourStep, target: Extract<TourTarget, { kind: 'packet' }>, lang: Lang): StepResolution {
  try {
    // The walk the Step pane shows: the same function, so the step index is the pane's row.
    const result = traceFromSnapshot(snapshot, { from: target.from, to: target.to, ...(target.flags ? { flags: target.flags } : {}), ...(target.entry ? { entry: target.entry } : {}) });
    const at = focusStep(result.steps, target.focus);
    const s = result.steps[at]!;
    const focus = [
      line(formatHeader(result.request.packet), 'muted'),
      line(tf(lang, 'tour.focus.walkStep', { n: at + 1, total: result.steps.length, line: stepLine({ ...s, reason: saidText(lang, s.said, s.reason) }) }), s.kind === 'nat' || /\b(DNAT|dnat)\b/.test(s.ruleText ?? '') ? 'nat' : 'accent'),
      line(`⇒ ${t(lang, `step.verdict.${result.verdict.kind}`)}${result.verdict.endpoint ? ` ${result.verdict.endpoint}` : ''}`, result.verdict.endpoint ? 'ok' : 'warn'),
    ];
    return { ...EMPTY, cursor: { index: at, count: result.steps.length }, focus };
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    return { ...EMPTY, problem: e.message };
  }
}

function dnsTarget(snapshot: NodeSnapshot, step: TourStep, service: string, lang: Lang): StepResolution {
  const api = snapshot.api?.value;
  const svc = findService(snapshot, service);
  const expected = api ? expectedServiceDns(api).find((x) => formatServiceRef(x) === service) : undefined;
  if (!svc || !expected) return missing(lang, step);
  const focus = expected.answers.slice(0, MAX_LIST).map((a) => {
    const data = a.answers.map((r) => (typeof r.data === 'string' ? r.data : `${r.data.priority} ${r.data.weight} ${r.data.port} ${r.data.target}`));
    return line(`${a.qtype} ${a.qname} → ${data.join(' ') || '—'} (${a.rcode})`, a.rcode === 'NOERROR' && data.length ? 'ok' : 'warn');
  });
  return { ...EMPTY, service, serviceRow: svc.cursor, focus };
}

function compareTarget(snapshot: NodeSnapshot, step: TourStep, service: string, lang: Lang): StepResolution {
  const cmp = compareModes(snapshot, { service });
  const svc = findService(snapshot, service);
  const cost = cmp?.perService[0];
  if (!cmp || !svc || !cost) return missing(lang, step);
  const label: Record<CompareMode, string> = { iptables: 'iptables', nftables: 'nftables', cilium: 'Cilium' };
  const focus = COMPARE_MODES.map((m) =>
    line(tf(lang, 'tour.focus.compare', { mode: label[m], unit: t(lang, `compare.short.${m}`), all: modeTotal(cmp.predicted[m]), services: cmp.services, one: modeTotal(cost.cost[m]), service }), 'accent'),
  );
  for (const a of cmp.actual.filter((x) => x.family === 'ipv4')) {
    const predicted = modeTotal(cmp.predicted[a.mode]);
    const actual = modeTotal(a.count);
    focus.push(line(tf(lang, actual === predicted ? 'tour.focus.compareSame' : 'tour.focus.compareDiff', { mode: label[a.mode], actual, predicted }), actual === predicted ? 'ok' : 'warn'));
  }
  return { ...EMPTY, service, serviceRow: svc.cursor, focus };
}

/** Finds `step`'s object in `snapshot` (see {@link StepResolution}); never throws for a missing object. */
export function resolveStep(snapshot: NodeSnapshot, step: TourStep, lang: Lang): StepResolution {
  const target = step.target;
  switch (target.kind) {
    case 'service':
    case 'endpoints': {
      const svc = findService(snapshot, target.service);
      if (!svc) return missing(lang, step);
      return { ...EMPTY, service: target.service, serviceRow: svc.cursor, focus: target.kind === 'service' ? serviceFocus(svc.row, lang) : endpointsFocus(svc.row, lang) };
    }
    case 'chain':
      return chainTarget(snapshot, step, target, lang);
    case 'serviceChain':
      return serviceChainTarget(snapshot, step, target, lang);
    case 'set':
      return setTarget(snapshot, step, target, lang);
    case 'lbEntry':
      return lbTarget(snapshot, step, target, lang);
    case 'flow':
      return flowTarget(snapshot, step, target, lang);
    case 'packet':
      return packetTarget(snapshot, step, target, lang);
    case 'dns':
      return dnsTarget(snapshot, step, target.service, lang);
    case 'compare':
      return compareTarget(snapshot, step, target.service, lang);
  }
}

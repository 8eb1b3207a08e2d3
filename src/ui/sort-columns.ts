/**
 * What each table sorts on, column by column: the keys are the panes' Table column keys
 * (the sorted column's header gets the arrow) and the titles their headers, so the `s`
 * prompt names columns as the screen does. Values are the data (counts as numbers,
 * addresses and names as text), not the shortened cells (`1.2K`).
 */
import type { ConntrackSortColumn } from '../analysis/conntrack-view.js';
import type { LbFrontendRow } from '../analysis/lb-view.js';
import type { RuleRow } from '../analysis/rules-view.js';
import type { ServiceRow } from '../analysis/service-view.js';
import { t, type Lang } from '../text/i18n.js';
import type { RulesListRow } from './panes/RulesPane.js';
import { endpointSummary, formatPorts } from './panes/ServicesPane.js';
import type { PaneId } from './pane-ids.js';
import type { SortColumn } from './table-sort.js';

/** The Services pane's columns. */
export function serviceSortColumns(lang: Lang): SortColumn<ServiceRow>[] {
  return [
    { key: 'ns', title: t(lang, 'col.namespace'), value: (r) => r.namespace },
    { key: 'name', title: t(lang, 'col.name'), value: (r) => r.name },
    { key: 'type', title: t(lang, 'col.type'), value: (r) => r.type },
    { key: 'ip', title: t(lang, 'col.clusterIP'), value: (r) => (r.headless ? null : (r.externalName ?? r.clusterIPs[0] ?? null)) },
    { key: 'ports', title: t(lang, 'col.ports'), value: (r) => formatPorts(r) },
    { key: 'eps', title: t(lang, 'col.endpoints'), value: (r) => Number(endpointSummary(r).split('/')[0]) },
  ];
}

/** The Rules pane's chain list. */
export function chainListSortColumns(lang: Lang): SortColumn<RulesListRow>[] {
  return [
    { key: 'table', title: 'TABLE', value: (r) => r.table },
    { key: 'chain', title: t(lang, 'col.chain'), value: (r) => r.name },
    { key: 'detail', title: 'HOOK / TYPE', value: (r) => r.detail },
    { key: 'policy', title: t(lang, 'col.policy'), value: (r) => r.policy },
    { key: 'rules', title: t(lang, 'col.rules'), value: (r) => r.count },
    { key: 'pkts', title: t(lang, 'col.pkts'), value: (r) => r.packets },
    { key: 'bytes', title: t(lang, 'col.bytes'), value: (r) => r.bytes },
  ];
}

/** The rules of one chain. */
export function ruleSortColumns(lang: Lang): SortColumn<RuleRow>[] {
  return [
    { key: 'num', title: t(lang, 'col.num'), value: (r) => r.index },
    { key: 'pkts', title: t(lang, 'col.pkts'), value: (r) => r.packets ?? (r.derivedCount === undefined ? null : r.derivedCount) },
    { key: 'rate', title: t(lang, 'col.rate'), value: (r) => r.rate },
    { key: 'prob', title: t(lang, 'col.prob'), value: (r) => r.probability },
    { key: 'rule', title: t(lang, 'col.rule'), value: (r) => `${r.label} ${r.matches}` },
    { key: 'bytes', title: t(lang, 'col.bytes'), value: (r) => r.bytes },
    { key: 'target', title: t(lang, 'col.target'), value: (r) => r.target },
  ];
}

/** The LB pane's frontends. */
export function lbSortColumns(lang: Lang): SortColumn<LbFrontendRow>[] {
  return [
    { key: 'frontend', title: t(lang, 'col.frontend'), value: (r) => r.address },
    { key: 'flags', title: t(lang, 'col.flags'), value: (r) => r.flags },
    { key: 'id', title: t(lang, 'col.lbId'), value: (r) => r.revNatId },
    { key: 'slots', title: t(lang, 'col.slots'), value: (r) => r.count },
    { key: 'service', title: t(lang, 'col.service'), value: (r) => (r.service ? `${r.service.namespace}/${r.service.name}` : null) },
  ];
}

/** The Conntrack pane's orders (its index sorts a million flows itself): column, title, and the Table column that gets the arrow. */
export function conntrackSortColumns(lang: Lang): { readonly key: ConntrackSortColumn; readonly title: string; readonly header: string }[] {
  return [
    { key: 'service', title: t(lang, 'col.service'), header: 'service' },
    { key: 'vip', title: 'VIP', header: 'nat' },
    { key: 'endpoint', title: 'ENDPOINT', header: 'nat' },
    { key: 'protocol', title: t(lang, 'col.proto'), header: 'proto' },
    { key: 'state', title: t(lang, 'col.state'), header: 'state' },
    { key: 'timeout', title: t(lang, 'col.ttl'), header: 'ttl' },
    { key: 'packets', title: t(lang, 'col.pkts'), header: 'pkts' },
    { key: 'bytes', title: t(lang, 'col.bytes'), header: 'pkts' },
  ];
}

/**
 * The columns `s` offers on a pane (`rulesList`: the Rules pane shows its chain list), or []
 * where the order is the point: the step walk runs in packet order, Modes in its own.
 */
export function sortChoices(pane: PaneId, rulesList: boolean, lang: Lang): readonly { readonly key: string; readonly title: string }[] {
  switch (pane) {
    case 'services':
      return serviceSortColumns(lang);
    case 'rules':
      return rulesList ? chainListSortColumns(lang) : ruleSortColumns(lang);
    case 'lb':
      return lbSortColumns(lang);
    case 'conntrack':
      return conntrackSortColumns(lang);
    default:
      return [];
  }
}

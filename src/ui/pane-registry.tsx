/**
 * The pane registry: one row per pane — its digit key, its tab title, whether it follows
 * the shown Service, whether tours may show it, how many rows its cursor moves over, and
 * how it renders. App, the header tabs, the help, the footer and the tours all read this
 * table (as k9s keeps one registrar from a resource to its viewer), so a new pane is one
 * entry here, one pane file and its strings.
 */
import { Text } from './components/SafeText.js';
import React from 'react';
import { conntrackElapsedSeconds } from '../analysis/conntrack-view.js';
import { buildIpvsView, type IpvsView } from '../analysis/ipvs-view.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { SessionState } from '../collect/session.js';
import type { AppViews } from './app-views.js';
import { t, type Lang, type MessageKey } from '../text/i18n.js';
import { ComparePane } from './panes/ComparePane.js';
import { ConntrackPane } from './panes/ConntrackPane.js';
import { DnsPane, dnsRowCount, filterDnsData, type DnsPaneData } from './panes/DnsPane.js';
import { IpvsPane } from './panes/IpvsPane.js';
import { LbPane } from './panes/LbPane.js';
import { RulesPane } from './panes/RulesPane.js';
import { ServicesPane } from './panes/ServicesPane.js';
import { expectServiceRow } from '../analysis/node-expectation.js';
import { FindingsView } from './panes/FindingsView.js';
import { StepPane, type StepPaneData } from './panes/StepPane.js';
import type { UiState } from './state.js';
import { theme } from './theme.js';
import { PANE_IDS, type PaneId } from './pane-ids.js';
import type { TourPane } from '../tour/model.js';

/** What a pane is given to count its rows and render: this render's views and sizes. */
export interface PaneContext {
  readonly views: AppViews;
  readonly ui: UiState;
  /** The pane's cursor and filter (its view's, src/ui/state.ts `cursorOf`, `filterOf`). */
  readonly cursor: number;
  readonly filter: string;
  readonly snapshot: NodeSnapshot;
  readonly session: SessionState;
  readonly dns: DnsPaneData;
  readonly width: number;
  readonly height: number;
  readonly lang: Lang;
  /** The injected clock, ms since the epoch. */
  readonly now: () => number;
}

/** One pane of the app. */
export interface PaneEntry<Id extends string = string> {
  readonly id: Id;
  /** The digit that switches to it (also its number in the header tabs). */
  readonly key: string;
  /** Its tab title. */
  readonly title: MessageKey;
  /** A shorter tab title for a narrow terminal (or a Japanese one), when the title is long. */
  readonly short?: MessageKey;
  /** It shows the pinned or highlighted Service (src/ui/shown-service.ts): Space pins there. */
  readonly follows: boolean;
  /** A tour step may name it (`pane:` in tours/*.yaml). */
  readonly tour: boolean;
  /** How many rows its cursor moves over (0: none). */
  rowCount(ctx: PaneContext): number;
  /** The pane, or null when its view is missing (the app says "nothing here"). */
  render(ctx: PaneContext): React.JSX.Element | null;
}

/**
 * What the Step pane shows: the walk, or when no packet is set, why `t` made none,
 * or that the snapshot is still loading, before the generic "press t".
 */
function stepData(walk: StepPaneData, ui: UiState, snapshot: NodeSnapshot, lang: Lang): StepPaneData {
  if (ui.step || walk.kind !== 'none') return walk;
  if (ui.stepNoPacket && ui.selectedService) return { kind: 'noPacket', service: ui.selectedService, reason: ui.stepNoPacket };
  if (snapshot.pending?.length) return { kind: 'loading', text: t(lang, 'status.loading') };
  return walk;
}

/** The node's Service dataplane when read and not Cilium (the LB pane then names it), else null. */
function otherMode(views: AppViews): string | null {
  const mode = views.mode?.mode;
  return mode === undefined || mode === 'cilium' || mode === 'unknown' || mode === 'none' ? null : mode;
}

/** The last IPVS view made, reused while the snapshot and the filter stay the same (renders and keys ask for it). */
let lastIpvs: { snapshot: NodeSnapshot; filter: string; view: IpvsView } | null = null;
function ipvsView({ snapshot, filter }: PaneContext): IpvsView {
  if (lastIpvs?.snapshot !== snapshot || lastIpvs.filter !== filter) lastIpvs = { snapshot, filter, view: buildIpvsView(snapshot, filter) };
  return lastIpvs.view;
}

/** The panes, in tab order. */
export const PANE_REGISTRY = [
  {
    id: 'services',
    key: '1',
    title: 'pane.services',
    follows: true,
    tour: true,
    rowCount: ({ views, ui }) => (ui.findings ? (views.findings?.findings.length ?? 0) : (views.services.rows?.length ?? 0)),
    render: ({ views, ui, cursor, snapshot, width, height, lang }) => {
      if (ui.findings) return <FindingsView service={views.findings} cursor={cursor} width={width} height={height} lang={lang} />;
      // Only the selected Service's expectation is computed: one Service per cursor move.
      const row = views.services.rows?.[cursor];
      const objects = snapshot.api?.value;
      const expectation = row && objects ? expectServiceRow(objects, { name: snapshot.meta.node }, row) : null;
      return <ServicesPane rows={views.services.rows} diagnostics={views.services.diagnostics} pinned={ui.pinnedService} verdicts={views.diagnosis?.verdicts ?? null} cursor={cursor} width={width} height={height} focused lang={lang} expectation={expectation} />;
    },
  },
  {
    id: 'rules',
    key: '2',
    title: 'pane.rules',
    follows: false,
    tour: true,
    rowCount: ({ views }) => (!views.rules || views.rules.kind === 'message' ? 0 : views.rules.rows.length),
    render: ({ views, cursor, width, height, lang }) => (views.rules ? <RulesPane data={views.rules} cursor={cursor} width={width} height={height} focused lang={lang} /> : null),
  },
  {
    id: 'lb',
    key: '3',
    title: 'pane.lb',
    short: 'pane.lb.short',
    follows: false,
    tour: true,
    rowCount: ({ views }) => views.lb?.frontends.length ?? 0,
    render: ({ views, cursor, width, height, lang }) => (views.lb ? <LbPane data={views.lb} cursor={cursor} width={width} height={height} focused lang={lang} nodeMode={otherMode(views)} /> : null),
  },
  {
    id: 'conntrack',
    key: '4',
    title: 'pane.conntrack',
    short: 'pane.conntrack.short',
    follows: true,
    tour: true,
    rowCount: ({ views }) => views.conntrack?.order.length ?? 0,
    render: ({ views, session, cursor, width, height, lang, now }) =>
      views.conntrack ? (
        <ConntrackPane data={views.conntrack} elapsedSeconds={conntrackElapsedSeconds(views.conntrack, now())} cursor={cursor} width={width} height={height} focused lang={lang} sessionError={session.error} shown={views.shown} />
      ) : null,
  },
  {
    id: 'dns',
    key: '5',
    title: 'pane.dns',
    follows: true,
    tour: true,
    rowCount: ({ dns, filter, lang }) => dnsRowCount(filterDnsData(dns, filter, lang)),
    render: ({ views, dns, filter, cursor, width, height, lang, snapshot }) => (
      <DnsPane data={filterDnsData(dns, filter, lang)} pinned={views.shown?.pinned ?? false} cursor={cursor} width={width} height={height} focused lang={lang} capture={{ at: snapshot.meta.capturedAt, live: snapshot.meta.source.live }} />
    ),
  },
  {
    id: 'step',
    key: '6',
    title: 'pane.step',
    follows: false,
    tour: true,
    rowCount: ({ views }) => (views.step.kind === 'result' ? views.step.result.steps.length : 0),
    render: ({ views, ui, snapshot, cursor, width, height, lang }) => <StepPane data={stepData(views.step, ui, snapshot, lang)} cursor={cursor} width={width} height={height} focused lang={lang} />,
  },
  {
    id: 'compare',
    key: '7',
    title: 'pane.compare',
    short: 'pane.compare.short',
    follows: true,
    tour: true,
    rowCount: ({ views }) => views.compareServices?.length ?? 0,
    render: ({ views, snapshot, width, height, lang }) =>
      snapshot.pending?.length ? <Text color={theme.muted}>{t(lang, 'status.loading')}</Text> : <ComparePane data={views.compare} services={views.compareServices ?? undefined} shown={views.shown} width={width} height={height} focused lang={lang} />,
  },
  {
    id: 'ipvs',
    key: '8',
    title: 'pane.ipvs',
    follows: false,
    tour: true,
    rowCount: (ctx) => {
      const view = ipvsView(ctx);
      return view.status === 'ready' ? view.virtualServers.length : 0;
    },
    render: (ctx) => <IpvsPane data={ipvsView(ctx)} cursor={ctx.cursor} width={ctx.width} height={ctx.height} focused lang={ctx.lang} />,
  },
] as const satisfies readonly PaneEntry[];

export { PANE_IDS, type PaneId };

// The registry and pane-ids.ts name the same panes (a compile error otherwise); the registry-order test checks the order.
type RegistryId = (typeof PANE_REGISTRY)[number]['id'];
export const registryMatchesIds: [RegistryId] extends [PaneId] ? ([PaneId] extends [RegistryId] ? true : never) : never = true;
// Every pane a tour may name is one the registry marks as a tour pane (src/tour/model.ts keeps the list: tour may not import ui).
type RegistryTourId = Extract<(typeof PANE_REGISTRY)[number], { tour: true }>['id'];
export const tourPanesMatch: [TourPane] extends [RegistryTourId] ? ([RegistryTourId] extends [TourPane] ? true : never) : never = true;

/** The registry entry of a pane. */
export function paneEntry(id: PaneId): PaneEntry<PaneId> {
  return PANE_REGISTRY.find((p) => p.id === id)!;
}

/** The pane a typed key switches to, or undefined. */
export function paneByKey(input: string): PaneEntry<PaneId> | undefined {
  return input.length === 1 ? PANE_REGISTRY.find((p) => p.key === input) : undefined;
}

/** The panes that follow the shown Service (Space pins there). */
export function followingPanes(): readonly PaneId[] {
  return PANE_REGISTRY.filter((p) => p.follows).map((p) => p.id);
}

/** The pane ids a tour step may name. */
export function tourPanes(): readonly PaneId[] {
  return PANE_REGISTRY.filter((p) => p.tour).map((p) => p.id);
}

/**
 * The app shell: header, the active pane, footer, help overlay; keys dispatch
 * reducer actions. Data comes from a {@link SessionLike}; the UI never fetches.
 */
import { Box, useApp, useInput, useStdout } from 'ink';
import { Text } from './components/SafeText.js';
import React, { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { conntrackElapsedSeconds } from '../analysis/conntrack-view.js';
import { lbFrontendIndexForService } from '../analysis/lb-view.js';
import { defaultStepPacket } from '../analysis/step-defaults.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { nftChainRows } from '../analysis/nft-view.js';
import { chainRows } from '../analysis/rules-view.js';
import { iptablesServiceChains, nftServiceChains } from '../analysis/service-dataplane.js';
import type { SessionLike } from '../collect/session.js';
import { Footer } from './components/Footer.js';
import { Header } from './components/Header.js';
import { Help } from './components/Help.js';
import { TourBar, tourBarLines, useTour, useTourSteps, type TourRun } from './components/TourBar.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { ConntrackPane } from './panes/ConntrackPane.js';
import { DnsPane, dnsPaneData, dnsRowCount } from './panes/DnsPane.js';
import { ComparePane } from './panes/ComparePane.js';
import { LbPane } from './panes/LbPane.js';
import { StepPane, type StepPaneData } from './panes/StepPane.js';
import { createAppViews, lbViewForOpen, type AppViews, type AppViewsOf } from './app-views.js';
import { modeEvidenceFit, modeLabelIn } from './mode-evidence.js';
import { RulesPane } from './panes/RulesPane.js';
import { highlightedService, togglePin } from './shown-service.js';
import { ServicesPane } from './panes/ServicesPane.js';
import { cursorOf, currentRules, filterOf, initialUiState, PANES, uiReducer, type UiAction, type UiState } from './state.js';
import { theme } from './theme.js';

/** Props of {@link App}. `now`: injected clock (ms since epoch); `width`/`height` override the terminal size. */
export interface AppProps {
  readonly session: SessionLike;
  readonly lang: Lang;
  readonly now?: () => number;
  readonly width?: number;
  readonly height?: number;
  readonly initialState?: UiState;
  readonly onQuit?: () => void;
  /** A guided tour: its steps drive the panes (keys n, p, .) and its bar sits under the pane. */
  readonly tour?: TourRun;
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

/** Space pins or unpins the shown Service in these panes (src/ui/shown-service.ts). */
const FOLLOWING_PANES: ReadonlySet<string> = new Set(['services', 'conntrack', 'dns', 'compare']);

/**
 * The row a move key takes a cursor at `at` (-1: none yet) to, among `count` rows, or
 * null when the key is not a move key or there are no rows.
 */
function moveTarget(input: string, key: { upArrow: boolean; downArrow: boolean; pageUp: boolean; pageDown: boolean }, at: number, count: number, page: number): number | null {
  if (count === 0) return null;
  let to: number;
  if (/^[jk]+$/.test(input)) to = at + input.split('').reduce((d, c) => d + (c === 'j' ? 1 : -1), 0);
  else if (key.upArrow) to = at - 1;
  else if (key.downArrow) to = at + 1;
  else if (key.pageUp) to = at - page;
  else if (key.pageDown) to = at + page;
  else if (input === 'g') to = 0;
  else if (input === 'G') to = count - 1;
  else return null;
  return Math.max(0, Math.min(to, count - 1));
}

const HEADER_LINES = 3;
const FOOTER_LINES = 1;

/** The whole TUI. */
export function App({ session: ownSession, lang, now = Date.now, width: forcedWidth, height: forcedHeight, initialState, onQuit, tour }: AppProps): React.JSX.Element {
  const tourControl = useTour(tour);
  const session = tourControl?.session ?? ownSession;
  // A stable subscribe: a new function each render would make React re-subscribe each render.
  const subscribe = useCallback((listener: () => void) => session.subscribe(listener), [session]);
  const state = useSyncExternalStore(subscribe, () => session.getState());
  // The UI state lives in a ref that each action updates at once, so keys that arrive
  // faster than frames act on the state the previous keys made, in order; the React
  // state only triggers the render.
  const uiRef = useRef<UiState>(initialState ?? initialUiState);
  const [ui, setUi] = useState<UiState>(uiRef.current);
  const dispatch = useCallback((action: UiAction) => {
    uiRef.current = uiReducer(uiRef.current, action);
    setUi(uiRef.current);
  }, []);
  const viewsOf = useRef<AppViewsOf | null>(null);
  viewsOf.current ??= createAppViews();
  const { stdout } = useStdout();
  const { exit } = useApp();
  const width = forcedWidth ?? stdout.columns ?? 80;
  const height = forcedHeight ?? stdout.rows ?? 24;
  const snapshot = state.snapshot;
  const tourResolution = useTourSteps(tourControl, snapshot, ui, dispatch, lang);
  const tourBar = tour && tourControl ? { tour: tour.tour, position: tourControl.position, resolution: tourResolution, error: snapshot ? null : state.error, width, lang } : null;
  const bodyHeight = Math.max(3, height - HEADER_LINES - FOOTER_LINES - (tourBar ? tourBarLines(tourBar).length : 0));
  const live = snapshot?.meta.source.live ?? false;

  // Tick once a second in live mode so the data's age stays true.
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!live) return;
    const id = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(id);
  }, [live]);

  const filter = filterOf(ui);
  const views = viewsOf.current(snapshot, state, ui, lang);
  const { services, mode, shown } = views;
  // The DNS pane asks about the Service shown: pinned, else under the Services cursor.
  const dnsService = shown?.service ?? null;
  useEffect(() => {
    if (ui.pane === 'dns' && dnsService) session.resolveDns?.(dnsService);
  }, [ui.pane, dnsService, session, snapshot]);
  const dnsState = state.dns?.service === dnsService ? state.dns : null;
  const dns = dnsPaneData({ hasApi: Boolean(snapshot?.api?.value), selectedService: dnsService, result: dnsState?.result ?? null, loading: dnsState?.loading ?? dnsService !== null, error: dnsState?.error ?? null });

  // Key handling reads the latest state (uiRef, session.getState()), never this render's.
  const rowCount = (u: UiState, v: AppViews): number => {
    if (u.pane === 'services') return v.services.rows?.length ?? 0;
    if (u.pane === 'rules') return !v.rules || v.rules.kind === 'message' ? 0 : v.rules.rows.length;
    if (u.pane === 'lb') return v.lb?.frontends.length ?? 0;
    if (u.pane === 'conntrack') return v.conntrack?.order.length ?? 0;
    if (u.pane === 'dns') return dnsRowCount(dns);
    if (u.pane === 'compare') return v.compare?.services.length ?? 0;
    if (u.pane === 'step') return v.step.kind === 'result' ? v.step.result.steps.length : 0;
    return 0;
  };

  // Step mode from the Service under the cursor: a pod on this node to its ClusterIP.
  const startStep = (u: UiState, v: AppViews, snap: NodeSnapshot | null): void => {
    const row = v.services.rows?.[cursorOf(u)];
    if (!row || !snap) return;
    const packet = defaultStepPacket(snap, row.namespace, row.name);
    dispatch({ type: 'selectService', service: `${row.namespace}/${row.name}` });
    if ('from' in packet) dispatch({ type: 'startStep', from: packet.from, to: packet.to, ...(packet.entry ? { entry: packet.entry } : {}) });
    else dispatch({ type: 'stepNoPacket', reason: packet.reason });
  };

  const open = (u: UiState, v: AppViews, snap: NodeSnapshot | null): void => {
    const cursor = cursorOf(u);
    if (u.pane === 'services') {
      const row = v.services.rows?.[cursor];
      if (!row || !snap) return;
      dispatch({ type: 'selectService', service: `${row.namespace}/${row.name}` });
      // A headless Service has no ClusterIP, so kube-proxy and Cilium write nothing for it.
      if (row.headless) {
        dispatch({ type: 'notice', notice: 'headless' });
        return;
      }
      // The Service's entry chain in whichever rewrite table the node has.
      const ipt = snap.iptables?.value;
      const viaIptables = ipt ? iptablesServiceChains(ipt, row.namespace, row.name, row.ports.map((p) => ({ name: p.name, protocol: p.protocol }))) : [];
      // The cursor lands on the first endpoint branch, so Enter follows it straight to the DNAT.
      if (ipt && viaIptables[0]) {
        const rows = chainRows(ipt, 'nat', viaIptables[0].chain) ?? [];
        const focus = Math.max(0, rows.findIndex((r) => r.probability !== null));
        dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: 'iptables', table: 'nat', chain: viaIptables[0].chain, focusRule: focus, from: 'services' } });
        return;
      }
      const nft = snap.nft?.value;
      const viaNft = nft ? nftServiceChains(nft, row.namespace, row.name) : [];
      if (nft && viaNft[0]) {
        const rows = nftChainRows(nft, viaNft[0].table, viaNft[0].chain) ?? [];
        const focus = Math.max(0, rows.findIndex((r) => r.branch === true));
        dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: 'nft', table: viaNft[0].table, chain: viaNft[0].chain, focusRule: focus, from: 'services' } });
        return;
      }
      // A Cilium node: the Service's frontend in the LB maps.
      const lb = lbViewForOpen(snap);
      const fe = lbFrontendIndexForService(lb, row.namespace, row.name);
      if (fe >= 0) {
        dispatch({ type: 'switchPane', pane: 'lb' });
        dispatch({ type: 'jumpTo', index: fe, count: lb.frontends.length });
      } else dispatch({ type: 'notice', notice: 'noDataplane' });
      return;
    }
    if (u.pane === 'rules' && v.rules) {
      const loc = currentRules(u);
      const rules = v.rules;
      if (rules.kind === 'chains') {
        const row = rules.rows.at(cursor);
        if (!row) return;
        if (row.kind === 'chain') dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: row.ruleset, table: row.table, chain: row.name } });
        else dispatch({ type: 'openRules', location: { kind: 'set', ruleset: row.ruleset, table: row.table, set: row.name } });
      } else if (rules.kind === 'chain' && loc.kind !== 'chains') {
        const row = rules.rows.at(cursor);
        if (row?.jumpTo) dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: loc.ruleset, table: loc.table, chain: row.jumpTo } });
        else if (row?.jumpSet) dispatch({ type: 'openRules', location: { kind: 'set', ruleset: loc.ruleset, table: loc.table, set: row.jumpSet } });
      }
    }
  };

  useInput((input, key) => {
    const u = uiRef.current;
    if (u.typingFilter) {
      const typed = filterOf(u);
      if (key.escape) dispatch({ type: 'filterEnd', keep: false });
      else if (key.return) dispatch({ type: 'filterEnd', keep: true });
      else if (key.backspace || key.delete) dispatch({ type: 'filterInput', text: typed.slice(0, -1) });
      else if (input && !key.ctrl && !key.meta) dispatch({ type: 'filterInput', text: typed + input });
      return;
    }
    if (tourControl?.onKey(input)) return;
    const current = session.getState();
    const v = viewsOf.current!(current.snapshot, current, u, lang);
    const count = rowCount(u, v);
    const page = Math.max(1, bodyHeight - 4);
    // The Modes pane's cursor is the Service it shows: moving it there pins the row's Service.
    if (u.pane === 'compare' && v.compare && !key.return) {
      const rows = v.compare.services;
      const at = v.shown ? v.compare.indexOf(v.shown.service) : -1;
      const to = moveTarget(input, key, at, rows.length, page);
      if (to !== null) {
        const row = rows[to];
        if (row) dispatch({ type: 'pinService', service: row });
        return;
      }
    }
    // A held or fast-typed j/k arrives as one chunk ("jjj"): move by all of it.
    if (input.length > 1 && /^[jk]+$/.test(input)) {
      dispatch({ type: 'move', delta: input.split('').reduce((d, c) => d + (c === 'j' ? 1 : -1), 0), count });
      return;
    }
    if (input === ' ' && FOLLOWING_PANES.has(u.pane)) {
      const highlighted = highlightedService(v.services.rows, u);
      dispatch({ type: 'pinService', service: togglePin(u.pane === 'services', u.pane === 'services' ? highlighted : (v.shown?.service ?? null), u) });
      return;
    }
    const stepBranches = v.step.kind === 'result' ? (v.step.result.steps.find((s) => s.branches && s.branches.length > 1)?.branches?.length ?? 0) : 0;
    if (input === 'q' || (key.ctrl && input === 'c')) {
      dispatch({ type: 'quit' });
      onQuit?.();
      exit();
    } else if (input === '?') dispatch({ type: 'toggleHelp' });
    else if (key.escape || key.backspace || key.delete) dispatch({ type: 'back' });
    else if (key.tab) dispatch({ type: 'nextPane', delta: key.shift ? -1 : 1 });
    else if (/^[1-7]$/.test(input)) dispatch({ type: 'switchPane', pane: PANES[Number(input) - 1]! });
    else if (key.upArrow || input === 'k') dispatch({ type: 'move', delta: -1, count });
    else if (key.downArrow || input === 'j') dispatch({ type: 'move', delta: 1, count });
    else if (key.pageUp) dispatch({ type: 'move', delta: -page, count });
    else if (key.pageDown) dispatch({ type: 'move', delta: page, count });
    else if (input === 'g') dispatch({ type: 'jumpTo', index: 0, count });
    else if (input === 'G') dispatch({ type: 'jumpTo', index: count - 1, count });
    else if (key.return) open(u, v, current.snapshot);
    else if (input === '/') dispatch({ type: 'filterStart' });
    else if (input === 'r') session.refreshNow();
    else if (input === 't' && u.pane === 'services') startStep(u, v, current.snapshot);
    else if (u.pane === 'step' && (input === 'n' || input === 'p')) dispatch({ type: 'move', delta: input === 'n' ? 1 : -1, count });
    else if (u.pane === 'step' && input === 'b') dispatch({ type: 'stepBranch', branches: stepBranches });
    else if (u.pane === 'conntrack' && input === 's') dispatch({ type: 'conntrackSortNext' });
    else if (u.pane === 'conntrack' && input === 'S') dispatch({ type: 'conntrackSortReverse' });
    else if (u.pane === 'conntrack' && input === 'a') dispatch({ type: 'conntrackScopeToggle' });
  });

  const age = state.dataAt === null ? null : (now() - state.dataAt) / 1000;
  const paneHeight = bodyHeight;
  let body: React.JSX.Element;
  if (ui.help) body = <Help lang={lang} apiError={state.apiError ?? null} height={bodyHeight} />;
  else if (!snapshot) body = <Text color={state.error ? theme.error : theme.muted}>{state.error ? tf(lang, 'status.failed', { reason: state.error }) : t(lang, 'status.loading')}</Text>;
  else if (ui.pane === 'services') body = <ServicesPane rows={services.rows} diagnostics={services.diagnostics} pinned={ui.pinnedService} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'rules' && views.rules) body = <RulesPane data={views.rules} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'lb' && views.lb) body = <LbPane data={views.lb} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'step') body = <StepPane data={stepData(views.step, ui, snapshot, lang)} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'compare' && snapshot.pending?.length) body = <Text color={theme.muted}>{t(lang, 'status.loading')}</Text>;
  else if (ui.pane === 'compare') body = <ComparePane data={views.compare} shown={shown} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'dns') body = <DnsPane data={dns} pinned={shown?.pinned ?? false} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'conntrack' && views.conntrack) body = <ConntrackPane data={views.conntrack} elapsedSeconds={conntrackElapsedSeconds(views.conntrack, now())} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} sessionError={state.error} shown={shown} />;
  else body = <Text color={theme.muted}>{t(lang, 'status.empty')}</Text>;

  return (
    <Box flexDirection="column" width={width}>
      <Header
        node={snapshot?.meta.node ?? state.node ?? '…'}
        live={live}
        sourceLabel={snapshot?.meta.source.label ?? ''}
        capturedAt={snapshot?.meta.capturedAt ?? state.capturedAt ?? null}
        mode={mode ? modeLabelIn(lang, mode) : (state.error && !snapshot ? '—' : t(lang, 'header.modeReading'))}
        evidence={mode ? (room: number) => modeEvidenceFit(lang, mode.facts, room) : ''}
        ageSeconds={age}
        error={state.error}
        apiError={state.apiError ?? null}
        apiProblem={state.apiProblem ?? null}
        refreshing={state.refreshing}
        pane={ui.pane}
        width={width}
        lang={lang}
        now={now}
      />
      <Box flexDirection="column" height={bodyHeight}>
        {body}
      </Box>
      {tourBar ? <TourBar {...tourBar} /> : null}
      <Footer hint={FOLLOWING_PANES.has(ui.pane) && ui.pane !== 'services' ? t(lang, 'footer.hintShown') : undefined} typingFilter={ui.typingFilter} filter={filter} notice={ui.notice ? t(lang, `notice.${ui.notice}`) : null} width={width} lang={lang} />
    </Box>
  );
}

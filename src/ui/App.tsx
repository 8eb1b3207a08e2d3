/**
 * The app shell: header, the active pane, footer, help overlay; keys dispatch
 * reducer actions. Data comes from a {@link SessionLike}; the UI never fetches.
 */
import { Box, Text, useApp, useInput, useStdout } from 'ink';
import React, { useEffect, useMemo, useReducer, useState, useSyncExternalStore } from 'react';
import { conntrackElapsedSeconds, conntrackView } from '../analysis/conntrack-view.js';
import { buildLbView, lbFrontendIndexForService } from '../analysis/lb-view.js';
import { compareModes } from '../analysis/compare-modes.js';
import { detectProxyMode } from '../analysis/proxy-mode.js';
import { defaultStepPacket } from '../analysis/step-defaults.js';
import { UserError } from '../errors.js';
import { traceFromSnapshot } from '../report/trace.js';
import { nftChainRows } from '../analysis/nft-view.js';
import { chainRows } from '../analysis/rules-view.js';
import { iptablesServiceChains, nftServiceChains } from '../analysis/service-dataplane.js';
import type { SessionLike } from '../session.js';
import { Footer } from './components/Footer.js';
import { Header } from './components/Header.js';
import { Help } from './components/Help.js';
import { TourBar, tourBarLines, useTour, useTourSteps, type TourRun } from './components/TourBar.js';
import { t, tf, type Lang } from './i18n.js';
import { ConntrackPane } from './panes/ConntrackPane.js';
import { DnsPane, dnsPaneData, dnsRowCount } from './panes/DnsPane.js';
import { ComparePane } from './panes/ComparePane.js';
import { LbPane } from './panes/LbPane.js';
import { StepPane, type StepPaneData } from './panes/StepPane.js';
import { RulesPane } from './panes/RulesPane.js';
import { ServicesPane } from './panes/ServicesPane.js';
import { cursorOf, currentRules, filterOf, initialUiState, PANES, uiReducer, type UiState } from './state.js';
import { theme } from './theme.js';
import { rulesView, servicesView } from './views.js';

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

const HEADER_LINES = 3;
const FOOTER_LINES = 1;

/** The whole TUI. */
export function App({ session: ownSession, lang, now = Date.now, width: forcedWidth, height: forcedHeight, initialState, onQuit, tour }: AppProps): React.JSX.Element {
  const tourControl = useTour(tour);
  const session = tourControl?.session ?? ownSession;
  const state = useSyncExternalStore(session.subscribe.bind(session), () => session.getState());
  const [ui, dispatch] = useReducer(uiReducer, initialState ?? initialUiState);
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
  const services = useMemo(() => servicesView(snapshot, ui.pane === 'services' ? filter : ''), [snapshot, ui.pane, filter]);
  const rules = useMemo(() => rulesView(snapshot, state, ui, ui.pane === 'rules' ? filter : '', lang), [snapshot, state, ui, filter, lang]);
  const mode = useMemo(() => (snapshot ? detectProxyMode(snapshot) : null), [snapshot]);
  const lb = useMemo(() => buildLbView(snapshot, ui.pane === 'lb' ? filter : ''), [snapshot, ui.pane, filter]);
  // The DNS pane asks about the Service chosen in the Services pane, else the one under its cursor.
  const dnsService = ui.selectedService ?? (services.rows?.[ui.cursors['services'] ?? 0] ? `${services.rows[ui.cursors['services'] ?? 0]!.namespace}/${services.rows[ui.cursors['services'] ?? 0]!.name}` : null);
  useEffect(() => {
    if (ui.pane === 'dns' && dnsService) session.resolveDns?.(dnsService);
  }, [ui.pane, dnsService, session, snapshot]);
  const dnsState = state.dns?.service === dnsService ? state.dns : null;
  const dns = dnsPaneData({ hasApi: Boolean(snapshot?.api?.value), selectedService: dnsService, result: dnsState?.result ?? null, loading: dnsState?.loading ?? dnsService !== null, error: dnsState?.error ?? null });
  const step = useMemo((): StepPaneData => {
    if (!snapshot || !ui.step) return { kind: 'none' };
    try {
      const { from, to, branch, flags, entry } = ui.step;
      return { kind: 'result', result: traceFromSnapshot(snapshot, { from, to, branch: String(branch), ...(flags ? { flags } : {}), ...(entry ? { entry } : {}) }) };
    } catch (e) {
      if (e instanceof UserError) return { kind: 'failed', reason: `${e.message}${e.hint ? ` (${e.hint})` : ''}` };
      throw e;
    }
  }, [snapshot, ui.step]);
  const stepBranches = step.kind === 'result' ? (step.result.steps.find((s) => s.branches && s.branches.length > 1)?.branches?.length ?? 0) : 0;
  const compare = useMemo(() => (snapshot && ui.pane === 'compare' ? compareModes(snapshot) : null), [snapshot, ui.pane]);
  const ct = useMemo(
    () => conntrackView(snapshot, { sort: ui.conntrackSort, filter: ui.pane === 'conntrack' ? filter : '', service: ui.conntrackAll ? null : ui.selectedService }),
    [snapshot, ui.conntrackSort, ui.conntrackAll, ui.selectedService, ui.pane, filter],
  );

  const rowCount = (): number => {
    if (ui.pane === 'services') return services.rows?.length ?? 0;
    if (ui.pane === 'rules') return rules.kind === 'message' ? 0 : rules.rows.length;
    if (ui.pane === 'lb') return lb.frontends.length;
    if (ui.pane === 'conntrack') return ct.order.length;
    if (ui.pane === 'dns') return dnsRowCount(dns);
    if (ui.pane === 'compare') return compare?.perService.length ?? 0;
    if (ui.pane === 'step') return step.kind === 'result' ? step.result.steps.length : 0;
    return 0;
  };

  // Step mode from the Service under the cursor: a pod on this node to its ClusterIP.
  const startStep = (): void => {
    const row = services.rows?.[cursorOf(ui)];
    if (!row || !snapshot) return;
    const packet = defaultStepPacket(snapshot, row.namespace, row.name);
    dispatch({ type: 'selectService', service: `${row.namespace}/${row.name}` });
    if ('from' in packet) dispatch({ type: 'startStep', from: packet.from, to: packet.to });
    else dispatch({ type: 'switchPane', pane: 'step' });
  };

  const open = (): void => {
    const cursor = cursorOf(ui);
    if (ui.pane === 'services') {
      const row = services.rows?.[cursor];
      if (!row || !snapshot) return;
      dispatch({ type: 'selectService', service: `${row.namespace}/${row.name}` });
      // The Service's entry chain in whichever rewrite table the node has.
      const ipt = snapshot.iptables?.value;
      const viaIptables = ipt ? iptablesServiceChains(ipt, row.namespace, row.name, row.ports.map((p) => ({ name: p.name, protocol: p.protocol }))) : [];
      // The cursor lands on the first endpoint branch, so Enter follows it straight to the DNAT.
      if (ipt && viaIptables[0]) {
        const rows = chainRows(ipt, 'nat', viaIptables[0].chain) ?? [];
        const focus = Math.max(0, rows.findIndex((r) => r.probability !== null));
        dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: 'iptables', table: 'nat', chain: viaIptables[0].chain, focusRule: focus, from: 'services' } });
        return;
      }
      const nft = snapshot.nft?.value;
      const viaNft = nft ? nftServiceChains(nft, row.namespace, row.name) : [];
      if (nft && viaNft[0]) {
        const rows = nftChainRows(nft, viaNft[0].table, viaNft[0].chain) ?? [];
        const focus = Math.max(0, rows.findIndex((r) => r.branch === true));
        dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: 'nft', table: viaNft[0].table, chain: viaNft[0].chain, focusRule: focus, from: 'services' } });
        return;
      }
      // A Cilium node: the Service's frontend in the LB maps.
      const fe = lbFrontendIndexForService(lb, row.namespace, row.name);
      if (fe >= 0) {
        dispatch({ type: 'switchPane', pane: 'lb' });
        dispatch({ type: 'jumpTo', index: fe, count: lb.frontends.length });
      }
      return;
    }
    if (ui.pane === 'rules') {
      const loc = currentRules(ui);
      if (rules.kind === 'chains') {
        const row = rules.rows[cursor];
        if (!row) return;
        if (row.kind === 'chain') dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: row.ruleset, table: row.table, chain: row.name } });
        else dispatch({ type: 'openRules', location: { kind: 'set', ruleset: row.ruleset, table: row.table, set: row.name } });
      } else if (rules.kind === 'chain' && loc.kind !== 'chains') {
        const row = rules.rows[cursor];
        if (row?.jumpTo) dispatch({ type: 'openRules', location: { kind: 'chain', ruleset: loc.ruleset, table: loc.table, chain: row.jumpTo } });
        else if (row?.jumpSet) dispatch({ type: 'openRules', location: { kind: 'set', ruleset: loc.ruleset, table: loc.table, set: row.jumpSet } });
      }
    }
  };

  useInput((input, key) => {
    if (ui.typingFilter) {
      if (key.escape) dispatch({ type: 'filterEnd', keep: false });
      else if (key.return) dispatch({ type: 'filterEnd', keep: true });
      else if (key.backspace || key.delete) dispatch({ type: 'filterInput', text: filter.slice(0, -1) });
      else if (input && !key.ctrl && !key.meta) dispatch({ type: 'filterInput', text: filter + input });
      return;
    }
    if (tourControl?.onKey(input)) return;
    const count = rowCount();
    const page = Math.max(1, bodyHeight - 4);
    // A held or fast-typed j/k arrives as one chunk ("jjj"): move by all of it.
    if (input.length > 1 && /^[jk]+$/.test(input)) {
      dispatch({ type: 'move', delta: input.split('').reduce((d, c) => d + (c === 'j' ? 1 : -1), 0), count });
      return;
    }
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
    else if (key.return) open();
    else if (input === '/') dispatch({ type: 'filterStart' });
    else if (input === 'r') session.refreshNow();
    else if (input === 't' && ui.pane === 'services') startStep();
    else if (ui.pane === 'step' && (input === 'n' || input === 'p')) dispatch({ type: 'move', delta: input === 'n' ? 1 : -1, count });
    else if (ui.pane === 'step' && input === 'b') dispatch({ type: 'stepBranch', branches: stepBranches });
    else if (ui.pane === 'conntrack' && input === 's') dispatch({ type: 'conntrackSortNext' });
    else if (ui.pane === 'conntrack' && input === 'S') dispatch({ type: 'conntrackSortReverse' });
    else if (ui.pane === 'conntrack' && input === 'a') dispatch({ type: 'conntrackScopeToggle' });
  });

  const age = state.dataAt === null ? null : (now() - state.dataAt) / 1000;
  const paneHeight = bodyHeight;
  let body: React.JSX.Element;
  if (ui.help) body = <Help lang={lang} />;
  else if (!snapshot) body = <Text color={state.error ? theme.error : theme.muted}>{state.error ? tf(lang, 'status.failed', { reason: state.error }) : t(lang, 'status.loading')}</Text>;
  else if (ui.pane === 'services') body = <ServicesPane rows={services.rows} diagnostics={services.diagnostics} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'rules') body = <RulesPane data={rules} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'lb') body = <LbPane data={lb} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'step') body = <StepPane data={step} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'compare') body = <ComparePane data={compare} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'dns') body = <DnsPane data={dns} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} />;
  else if (ui.pane === 'conntrack') body = <ConntrackPane data={ct} elapsedSeconds={conntrackElapsedSeconds(ct, now())} cursor={cursorOf(ui)} width={width} height={paneHeight} focused lang={lang} sessionError={state.error} />;
  else body = <Text color={theme.muted}>{t(lang, 'status.empty')}</Text>;

  return (
    <Box flexDirection="column" width={width}>
      <Header
        node={snapshot?.meta.node ?? '…'}
        live={live}
        sourceLabel={snapshot?.meta.source.label ?? ''}
        capturedAt={snapshot?.meta.capturedAt ?? null}
        mode={mode?.mode ?? '…'}
        evidence={mode?.evidence.join('; ') ?? ''}
        ageSeconds={age}
        error={state.error}
        refreshing={state.refreshing}
        pane={ui.pane}
        width={width}
        lang={lang}
      />
      <Box flexDirection="column" height={bodyHeight}>
        {body}
      </Box>
      {tourBar ? <TourBar {...tourBar} /> : null}
      <Footer typingFilter={ui.typingFilter} filter={filter} width={width} lang={lang} />
    </Box>
  );
}

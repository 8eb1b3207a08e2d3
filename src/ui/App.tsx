/**
 * The app shell: header, the active pane, footer, help overlay; keys dispatch
 * reducer actions. Data comes from a {@link SessionLike}; the UI never fetches.
 */
import { Box, useApp, useInput } from 'ink';
import { Text } from './components/SafeText.js';
import React, { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { apiUnreadNote } from '../analysis/api-notes.js';
import { iptablesDumpNotes } from '../analysis/iptables-faults.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { SessionLike, SessionState } from '../collect/session.js';
import { LB_MAPS_FOCUS } from '../collect/map-refresh.js';
import { createAppViews, type AppViewsOf } from './app-views.js';
import { handleKey } from './app-keys.js';
import { commandOf } from './key-bindings.js';
import { Footer } from './components/Footer.js';
import { Header } from './components/Header.js';
import { Help, helpLayout, helpProbeRows, type HelpContent } from './components/Help.js';
import { TourBar, tourBarLines, useTour, useTourSteps, type TourRun } from './components/TourBar.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { modeEvidenceFit, modeLabelIn } from '../analysis/mode-evidence.js';
import { paneEntry, type PaneContext } from './pane-registry.js';
import { dnsPaneData } from './panes/DnsPane.js';
import { currentRules, cursorOf, filterOf, initialUiState, sortOf, uiReducer, type UiAction, type UiState } from './state.js';
import { TableSortContext } from './components/Table.js';
import { conntrackSortColumns, sortChoices } from './sort-columns.js';
import { sortPrompt, type TableSort } from './table-sort.js';
import { theme } from './theme.js';
import { findHits } from './find-view.js';
import { FindView } from './panes/FindView.js';
import { useTerminalSize } from './terminal-size.js';
import { startTraceActions } from './command-line.js';
import type { StartTrace } from '../analysis/trace-choice.js';

/** Props of {@link App}. `now`: injected clock (ms since epoch); `width`/`height` override the terminal size. */
export interface AppProps {
  readonly session: SessionLike;
  readonly lang: Lang;
  readonly now?: () => number;
  readonly width?: number;
  readonly height?: number;
  readonly initialState?: UiState;
  readonly onQuit?: () => void;
  /** Esc with nothing left to close here (no help, filter, chain stack): the caller goes back (the fleet matrix). */
  readonly onBack?: () => void;
  /** A guided tour: its steps drive the panes (keys n, p, .) and its bar sits under the pane. */
  readonly tour?: TourRun;
  /** `--from … --to…`: the packet to open the Step pane on once the first snapshot is there. */
  readonly startTrace?: StartTrace;
}

/** The footer's key hint for the shown pane (the DNS pane names its `n`, which a tour takes for its next step; the Services list its `d` and `t`). */
function footerHint(ui: UiState, lang: Lang, touring: boolean): string | undefined {
  if (ui.pane === 'dns' && !touring) return t(lang, ui.dnsName === null ? 'footer.hintDns' : 'footer.hintDnsName');
  // The Services list names its own keys: `d` (the findings) and `t` (the step walk).
  if (ui.pane === 'services' && !ui.findings && !ui.help) return t(lang, 'footer.hintServices');
  return paneEntry(ui.pane).follows && ui.pane !== 'services' ? t(lang, 'footer.hintShown') : undefined;
}

const HEADER_LINES = 3;
const FOOTER_LINES = 1;

/** The sort the shown table's header marks: the Conntrack pane's order names the column it is drawn in. */
/** The header's warnings: the dumps' own (iptables-faults) and the API kinds not read (ServiceCIDR/IPAddress 403/404). */
function headerNotes(snapshot: NodeSnapshot, lang: Lang): string[] {
  const unread = apiUnreadNote(snapshot.api?.value);
  return [...iptablesDumpNotes(snapshot).map((n) => (n.key ? t(lang, n.key) : n.short)), ...(unread ? [tf(lang, 'header.apiUnread', { kinds: unread.kinds })] : [])];
}

function headerSort(ui: UiState, lang: Lang): TableSort | null {
  const sort = sortOf(ui);
  if (!sort || ui.pane !== 'conntrack') return sort;
  const header = conntrackSortColumns(lang).find((c) => c.key === sort.column)?.header;
  return header ? { column: header, descending: sort.descending } : null;
}

/** The footer's question: the `:` line with what Tab offered or why it failed, or the sort columns after `s`. */
function footerPrompt(ui: UiState, lang: Lang): string | null {
  const line = ui.commandLine;
  if (line) return `:${line.text}▏${line.error ? `   ${line.error}` : line.choices.length > 1 ? `   ${line.choices.join(' ')}` : ''}`;
  return ui.sortPicking ? `${t(lang, 'sort.prompt')} ${sortPrompt(sortChoices(ui.pane, currentRules(ui).kind === 'chains', lang))}` : null;
}

/** What the `?` box shows: the API objects' problem, the replay's note and the probes of the snapshot. */
function helpContent(state: SessionState, lang: Lang): HelpContent {
  const snapshot = state.snapshot;
  return {
    lang,
    apiError: state.apiError ?? null,
    probes: snapshot ? helpProbeRows(snapshot.probes, snapshot.skipped?.filter((s) => !s.silent)) : [],
    ...(snapshot?.meta.note ? { note: snapshot.meta.note } : {}),
  };
}

/** Opens the startup packet once (`--from …`): its Pod and Service names need the first snapshot's API objects. */
function useStartTrace(startTrace: StartTrace | undefined, snapshot: NodeSnapshot | null, dispatch: (action: UiAction) => void): void {
  const started = useRef(false);
  useEffect(() => {
    if (!startTrace || !snapshot || started.current) return;
    started.current = true;
    for (const action of startTraceActions(startTrace, snapshot)) dispatch(action);
  }, [startTrace, snapshot, dispatch]);
}

/**
 * What live refreshes re-read alone, as a key (`ruleset\0table\0chain`): the Rules pane's open
 * chain, or Cilium's service maps while the LB pane shows maps read from their pins
 * (src/collect/map-refresh.ts), followed by the frontends the pane may show (`\0`-separated:
 * every row within `height` of the cursor, a superset of the pane's window, components/Table.tsx
 * `windowStart`); '' for none.
 */
function focusKeyOf(ui: UiState, snapshot: NodeSnapshot | null, lbRows: readonly { readonly key: string }[] | undefined, height: number): string {
  const open = ui.pane === 'rules' ? currentRules(ui) : null;
  if (open?.kind === 'chain') return `${open.ruleset}\0${open.table}\0${open.chain}`;
  const lb = LB_MAPS_FOCUS;
  if (ui.pane !== 'lb' || !snapshot?.lbMapsRead.length) return '';
  const at = cursorOf(ui);
  const near = (lbRows ?? []).slice(Math.max(0, at - height), at + height + 1).map((r) => r.key);
  return [lb.ruleset, lb.table, lb.chain, ...near].join('\0');
}

/** The whole TUI. */
export function App({ session: ownSession, lang, now = Date.now, width: forcedWidth, height: forcedHeight, initialState, onQuit, onBack, tour, startTrace }: AppProps): React.JSX.Element {
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
  const terminal = useTerminalSize();
  const { exit } = useApp();
  const width = forcedWidth ?? terminal.columns;
  const height = forcedHeight ?? terminal.rows;
  const snapshot = state.snapshot;
  const tourResolution = useTourSteps(tourControl, snapshot, ui, dispatch, lang);
  const tourBar = tour && tourControl ? { tour: tour.tour, position: tourControl.position, resolution: tourResolution, error: snapshot ? null : state.error, width, lang } : null;
  const bodyHeight = Math.max(3, height - HEADER_LINES - FOOTER_LINES - (tourBar ? tourBarLines(tourBar).length : 0));
  const live = snapshot?.meta.source.live ?? false;
  useStartTrace(startTrace, snapshot, dispatch);

  // Tick once a second in live mode so the data's age stays true.
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!live) return;
    const id = setInterval(() => setTick((n) => n + 1), 1000);
    return () => clearInterval(id);
  }, [live]);

  const filter = filterOf(ui);
  const views = viewsOf.current(snapshot, state, ui, lang);
  // Live refreshes re-read the chain or the LB frontends on screen alone (src/collect/focused-refresh.ts, map-refresh.ts).
  const focusKey = focusKeyOf(ui, snapshot, views.lb?.frontends, bodyHeight);
  useEffect(() => {
    const [ruleset, table, chain, ...frontends] = focusKey.split('\0');
    session.focus?.(focusKey && ruleset && table && chain ? { ruleset, table, chain, ...(frontends.length ? { frontends } : {}) } : null);
  }, [session, focusKey]);
  const { mode, shown } = views;
  // The DNS pane asks about the Service shown: pinned, else under the Services cursor.
  const dnsService = shown?.service ?? null;
  useEffect(() => {
    if (ui.pane === 'dns' && dnsService) session.resolveDns?.(dnsService);
  }, [ui.pane, dnsService, session, snapshot]);
  // A name typed in the DNS pane (`n`) is resolved as `dig +search` does.
  const dnsName = ui.dnsName;
  useEffect(() => {
    if (ui.pane === 'dns' && dnsName !== null) session.resolveName?.(dnsName);
  }, [ui.pane, dnsName, session]);
  const dnsState = state.dns?.service === dnsService ? state.dns : null;
  const nameState = dnsName !== null && state.dnsName?.name === dnsName ? state.dnsName : null;
  const dns = dnsPaneData({
    hasApi: Boolean(snapshot?.api?.value), selectedService: dnsService, result: dnsState?.result ?? null, loading: dnsState?.loading ?? dnsService !== null, error: dnsState?.error ?? null,
    name: dnsName === null ? null : { name: dnsName, run: nameState?.run ?? null, error: nameState?.error ?? null, zone: nameState?.domain?.name ?? null },
  });
  // What the registry's panes render from (the snapshot is set where one is shown).
  const paneContext: Omit<PaneContext, 'snapshot'> = { views, ui, cursor: cursorOf(ui), filter, session: state, dns, width, height: bodyHeight, lang, now };

  // Key handling reads the latest state (uiRef, session.getState()), never this render's.
  useInput((input, key) => {
    const u = uiRef.current;
    if (!u.typingFilter && u.dnsPrompt === null && tourControl?.onKey(input)) return;
    if (onBack && !u.typingFilter && u.dnsPrompt === null && commandOf(input, key, u.pane)?.command === 'back' && uiReducer(u, { type: 'back' }) === u) return onBack();
    const current = session.getState();
    const v = viewsOf.current!(current.snapshot, current, u, lang);
    const rows = (ui: UiState, views: typeof v) => (current.snapshot ? paneEntry(ui.pane).rowCount({ ...paneContext, ui, views, snapshot: current.snapshot, session: current, cursor: cursorOf(ui), filter: filterOf(ui) }) : 0);
    // The help box scrolls by its own lines: its first lines possible, a page of what it shows.
    const help = u.help ? helpLayout(helpContent(current, lang), width, bodyHeight) : null;
    const count = help ? help.maxTop + 1 : u.find !== null ? findHits(current.snapshot, u.find, u.conntrackSort).hits.length : rows(u, v);
    const after = () => {
      const ui = uiRef.current;
      const views = viewsOf.current!(current.snapshot, current, ui, lang);
      return { ui, views, count: rows(ui, views) };
    };
    handleKey(input, key, { ui: u, views: v, snapshot: current.snapshot, count, page: help ? help.rows : Math.max(1, bodyHeight - 4), session, dispatch, quit: () => (onQuit?.(), exit()), lang, after });
  });

  let body: React.JSX.Element;
  if (ui.help) body = <Help {...helpContent(state, lang)} width={width} height={bodyHeight} top={ui.helpTop} />;
  else if (snapshot && ui.find !== null) body = <FindView result={findHits(snapshot, ui.find, ui.conntrackSort)} cursor={cursorOf(ui)} width={width} height={bodyHeight} lang={lang} />;
  else if (!snapshot) body = <Text color={state.error ? theme.error : theme.muted}>{state.error ? tf(lang, 'status.failed', { reason: state.error }) : t(lang, 'status.loading')}</Text>;
  else body = paneEntry(ui.pane).render({ ...paneContext, snapshot }) ?? <Text color={theme.muted}>{t(lang, 'status.empty')}</Text>;

  return (
    <Box flexDirection="column" width={width}>
      <Header
        node={snapshot?.meta.node ?? state.node ?? '…'}
        live={live}
        sourceLabel={snapshot?.meta.source.label ?? ''}
        capturedAt={snapshot?.meta.capturedAt ?? state.capturedAt ?? null}
        mode={mode ? modeLabelIn(lang, mode) : views.earlyMode ? tf(lang, 'header.modeEarly', { mode: views.earlyMode.mode }) : state.error && !snapshot ? '—' : t(lang, 'header.modeReading')}
        evidence={mode ? (room: number) => modeEvidenceFit(lang, mode.facts, room) : ''}
        notes={snapshot ? headerNotes(snapshot, lang) : []}
        skipped={snapshot?.skipped?.filter((s) => !s.silent).map((s) => s.id) ?? []}
        fullReadAt={state.fullReadAt && state.dataAt && state.fullReadAt < state.dataAt ? state.fullReadAt : null}
        stretched={state.stretched ?? null}
        ageSeconds={state.dataAt === null ? null : (now() - state.dataAt) / 1000}
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
        <TableSortContext.Provider value={headerSort(ui, lang)}>{body}</TableSortContext.Provider>
      </Box>
      {tourBar ? <TourBar {...tourBar} /> : null}
      <Footer prompt={footerPrompt(ui, lang)} hint={footerHint(ui, lang, tourControl !== null)} typingFilter={ui.typingFilter} namePrompt={ui.dnsPrompt} filter={filter} notice={ui.notice ? t(lang, `notice.${ui.notice}`) : null} width={width} lang={lang} />
    </Box>
  );
}

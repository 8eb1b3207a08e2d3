/**
 * `nodescope dash`: a projector dashboard in blessed-contrib (a renderer of its own, not
 * Ink: big braille line charts and gauges read from the back of a room). It follows one
 * Service: packets (iptables) or new connections (nftables, from conntrack) per second
 * for each endpoint, the conntrack table against `nf_conntrack_max`, and the Cilium LB
 * map against its size. Data comes from a {@link SessionLike}: a live session refreshes
 * every interval and the charts move; a replay has one snapshot, which the screen says,
 * showing totals instead of inventing motion.
 *
 * Only this directory imports blessed. Strings come from the UI's i18n table and are laid
 * out with the UI's cell-width helpers, so Japanese labels keep their columns.
 */
import blessed from 'blessed';
import contrib, { type BarChart, type LineChart } from 'blessed-contrib';
import type { SessionLike } from '../collect/session.js';
import { t, tf, type Lang } from '../text/i18n.js';
import { cellWidth, fitCell, fitCellMiddle, humanCount } from '../text/cells.js';
import { dashSample, DashHistory, DEFAULT_LB_MAP_MAX, gaugeValue, HISTORY_POINTS, percentText, type DashSample } from './series.js';
import { canCheckService, dashServiceError } from './service-check.js';
import { terminalSafe } from '../text/terminal-safe.js';

const LEGEND_WIDTH = 20;

/**
 * A line chart's legend title: blessed-contrib draws the legend with blessed tags on and cuts
 * each title to the legend's inner width, so the text is made terminal-safe, then its braces
 * written as blessed's `{open}`/`{close}`, and cut here, whole characters and whole tags, to fit.
 */
export function legendTitle(text: string, max = LEGEND_WIDTH - 2): string {
  let out = '';
  for (const ch of terminalSafe(text)) {
    const piece = ch === '{' ? '{open}' : ch === '}' ? '{close}' : ch;
    if (out.length + piece.length > max) break;
    out += piece;
  }
  return out;
}

/**
 * Options of {@link runDash}.
 * - `session`: the data (already started, or started by the caller after this returns);
 * - `service`: `namespace/name` of the Service to follow;
 * - `screen`: a blessed screen to draw on (default: a new one on the process's terminal);
 * - `lbMapMax`: the LB map size the fill is measured against (entries, default 65,536).
 */
export interface DashOptions {
  readonly session: SessionLike;
  readonly service: string;
  readonly lang: Lang;
  readonly screen?: blessed.Widgets.Screen;
  readonly lbMapMax?: number;
}

/**
 * A running dashboard: `done` resolves when the user quits (q, Esc, Ctrl-C), and rejects
 * with a UserError, before any screen opens, when the source does not know the Service
 * (see {@link dashServiceError}); `stop` quits.
 */
export interface DashHandle {
  readonly done: Promise<void>;
  stop(): void;
}

const COLORS = ['yellow', 'cyan', 'magenta', 'green', 'red', 'blue', 'white'];

function percent(count: number | null, max: number | null): number {
  return count === null || !max ? 0 : Math.min(100, (count / max) * 100);
}

/** The endpoint table as text lines, `width` cells wide. */
function tableLines(history: DashHistory, lang: Lang, width: number, replay: boolean): string[] {
  const w = Math.max(20, width);
  const rateW = 7;
  const totalW = 6;
  const epW = w - rateW - totalW - 2;
  const lines = [`${fitCell(t(lang, 'dash.col.endpoint'), epW)} ${fitCell(t(lang, 'dash.col.rate'), rateW, 'right')} ${fitCell(t(lang, 'dash.col.total'), totalW, 'right')}`];
  for (const s of history.endpointSeries()) {
    const rate = replay || s.rates.length === 0 ? '-' : (s.rates[s.rates.length - 1] ?? 0).toFixed(1);
    lines.push(`${fitCell(s.endpoint, epW)} ${fitCell(rate, rateW, 'right')} ${fitCell(humanCount(s.total), totalW, 'right')}`);
  }
  return lines;
}

function statusLine(sample: DashSample | null, history: DashHistory, replay: boolean, lang: Lang, service: string): string {
  if (!sample) return t(lang, 'status.loading');
  if (!sample.serviceFound) return sample.kind === 'none' && sample.mode !== 'iptables' && sample.mode !== 'nftables' ? tf(lang, 'dash.noCounters', { mode: sample.mode }) : tf(lang, 'dash.noService', { service });
  if (replay) return t(lang, 'dash.replay');
  if (!history.hasRates()) return t(lang, 'dash.waiting');
  return '';
}

/** The head's first line: title, source and mode, the source's folder or name cut in its middle when the line is too long (its end names the capture). */
function headLine(title: string, kind: string, label: string, mode: string, width: number): string {
  const rest = `${title} · ${kind}  · ${mode}`;
  const room = Math.max(12, width - cellWidth(rest));
  return `${title} · ${kind} ${fitCellMiddle(label, Math.min(room, cellWidth(label)))} · ${mode}`;
}

/** A bar's label: the endpoint's address without its port (readable under a bar; the table beside gives the port). */
export function barLabel(endpoint: string): string {
  const m = /^\[(.*)\]:\d+$/.exec(endpoint) ?? /^([^:]*):\d+$/.exec(endpoint);
  return terminalSafe(m ? m[1]! : endpoint);
}

/**
 * Draws the dashboard for `options.service` and keeps it current with the session, once
 * the session's data shows the Service exists (the screen opens then; a failed load opens
 * it too, to show the failure). Returns at once; see {@link DashHandle}.
 */
export function runDash(options: DashOptions): DashHandle {
  let finish: () => void = () => {};
  let fail: (e: Error) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  let ended = false;
  let close: (() => void) | null = null;
  const check = (): void => {
    if (ended || close) return;
    const state = options.session.getState();
    const checkable = canCheckService(state.snapshot);
    if (!checkable && !(state.error !== null && !state.loading)) return;
    unsubscribe();
    const error = checkable ? dashServiceError(state.snapshot!, options.service) : null;
    ended = error !== null;
    if (error) fail(error);
    else
      close = openScreen(options, () => {
        ended = true;
        finish();
      });
  };
  const unsubscribe = options.session.subscribe(check);
  check();
  const stop = (): void => {
    if (ended) return;
    unsubscribe();
    if (close) close();
    else {
      ended = true;
      finish();
    }
  };
  return { done, stop };
}

/** Opens the screen and draws; `onQuit` runs when the user quits. Returns the quit function. */
function openScreen(options: DashOptions, onQuit: () => void): () => void {
  const { session, service, lang } = options;
  const lbMapMax = options.lbMapMax ?? DEFAULT_LB_MAP_MAX;
  const screen = options.screen ?? blessed.screen({ smartCSR: true, fullUnicode: true, forceUnicode: true, title: 'nodescope dash' });
  // UTF-8 box drawing rather than the VT100 line-drawing set: the labels are UTF-8 anyway
  // (Japanese), and terminal multiplexers (tmux, screen) then show and capture the same text.
  (screen.tput as unknown as { brokenACS: boolean }).brokenACS = true;
  const grid = new contrib.grid({ rows: 12, cols: 12, screen });
  const head = grid.set(0, 0, 2, 12, blessed.box, { tags: false });
  let chart: LineChart | BarChart | null = null;
  const table = grid.set(2, 8, 7, 4, blessed.box, { tags: false });
  // The gauges' own label rounds (16 of 262,144 reads 1%): the percentage goes in the border label instead.
  const ctGauge = grid.set(9, 0, 3, 6, contrib.gauge, { label: ' conntrack ', stroke: 'green', fill: 'white', showLabel: false });
  const lbGauge = grid.set(9, 6, 3, 6, contrib.gauge, { label: ' LB map ', stroke: 'cyan', fill: 'white', showLabel: false });
  let history = DashHistory.empty();
  let lastAt: number | null = null;

  const render = (): void => {
    const state = session.getState();
    const snapshot = state.snapshot;
    const replay = snapshot ? !snapshot.meta.source.live : false;
    // A staged load publishes partial snapshots first (rules, conntrack still parsing): sample only whole ones.
    const whole = snapshot !== null && (snapshot.pending?.length ?? 0) === 0;
    if (snapshot && whole && state.dataAt !== null && state.dataAt !== lastAt) {
      lastAt = state.dataAt;
      history = history.add(dashSample(snapshot, service, state.dataAt, lbMapMax));
    }
    const sample = history.latest();
    const width = typeof screen.width === 'number' ? screen.width : 80;
    const title = tf(lang, 'dash.title', { service, node: snapshot?.meta.node ?? '…' });
    // Transport labels already name their kind (`replay:DIR`): say it once.
    const first = snapshot
      ? headLine(title, replay ? t(lang, 'header.replay') : t(lang, 'header.live'), snapshot.meta.source.label.replace(/^replay:/, ''), `${t(lang, 'header.mode')} ${sample?.mode ?? '…'}`, width - 2)
      : title;
    const counted = sample?.kind === 'dnat-packets' ? t(lang, 'dash.fromDnat') : sample?.kind === 'conntrack-flows' ? t(lang, 'dash.fromConntrack') : '';
    // The keys stay on screen whatever the status says (a first-time user finds `q` and `?` there).
    const status = [statusLine(sample, history, replay, lang, service), t(lang, 'dash.keys')].filter(Boolean).join('   ');
    head.setContent([first, counted, status].map((l) => fitCell(l, width - 2)).join('\n'));

    const chartLabel = ` ${terminalSafe(tf(lang, sample?.kind === 'conntrack-flows' ? 'dash.ratesNft' : 'dash.rates', { service }))} `;
    if (chart === null && sample) {
      chart = replay
        ? grid.set(2, 0, 7, 8, contrib.bar, { label: chartLabel, barWidth: 15, barSpacing: 17, xOffset: 2, maxHeight: 1 })
        : grid.set(2, 0, 7, 8, contrib.line, { label: chartLabel, showLegend: true, legend: { width: LEGEND_WIDTH }, minY: 0, wholeNumbersOnly: false });
    }
    const series = history.endpointSeries();
    if (chart && sample) {
      if (replay) (chart as BarChart).setData({ titles: series.map((s) => barLabel(s.endpoint)), data: series.map((s) => s.total) });
      else {
        const points = Math.max(2, Math.min(HISTORY_POINTS, Math.max(...series.map((s) => s.rates.length), 2)));
        const x = Array.from({ length: points }, (_, i) => `${i - points + 1}`);
        const lines = series.map((s, i) => {
          const y = [...Array<number>(Math.max(0, points - s.rates.length)).fill(0), ...s.rates].slice(-points);
          return { title: legendTitle(s.endpoint), x, y, style: { line: COLORS[i % COLORS.length]! } };
        });
        if (lines.length > 0) (chart as LineChart).setData(lines);
      }
    }
    const tableWidth = typeof table.width === 'number' ? table.width - 2 : 30;
    table.setContent(tableLines(history, lang, tableWidth, replay).join('\n'));

    const ct = sample ?? (snapshot ? dashSample(snapshot, service, 0, lbMapMax) : null);
    ctGauge.setLabel(` ${ct?.conntrackMax ? `${tf(lang, 'dash.conntrack', { count: ct.conntrackCount ?? 0, max: ct.conntrackMax })} (${percentText(ct.conntrackCount ?? 0, ct.conntrackMax)})` : t(lang, 'dash.noConntrack')} `);
    ctGauge.setPercent(gaugeValue(percent(ct?.conntrackCount ?? null, ct?.conntrackMax ?? null)));
    const map = ct?.lbMaps[0];
    // Only a Cilium node has LB maps: elsewhere an empty gauge would only say 0%.
    if (map || ct?.mode === 'cilium') {
      lbGauge.show();
      lbGauge.setLabel(` ${map ? `${tf(lang, 'dash.lbFill', { map: terminalSafe(map.map), count: map.entries, max: map.max })} (${percentText(map.entries, map.max)})` : t(lang, 'dash.noLb')} `);
      lbGauge.setPercent(gaugeValue(map ? percent(map.entries, map.max) : 0));
    } else lbGauge.hide();
    screen.render();
  };

  const unsubscribe = session.subscribe(render);
  const stop = (): void => {
    unsubscribe();
    screen.destroy();
    onQuit();
  };
  // `?` shows the keys over the charts; Esc then closes it rather than the dashboard.
  const help = blessed.box({ parent: screen, top: 'center', left: 'center', width: 60, height: 9, border: { type: 'line' }, label: ` ${t(lang, 'dash.helpTitle')} `, tags: false, hidden: true, content: t(lang, 'dash.help') });
  screen.key(['?'], () => {
    // The chart is made at the first sample, after the help box: bring the help over it.
    help.setFront();
    help.toggle();
    screen.render();
  });
  screen.key(['q', 'escape', 'C-c'], (_ch: unknown, key: { name?: string }) => {
    if (key.name === 'escape' && help.visible) {
      help.hide();
      screen.render();
      return;
    }
    stop();
  });
  screen.on('resize', render);
  render();
  return stop;
}

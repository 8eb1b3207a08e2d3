/**
 * The freshness facts in `cilium-dbg status --verbose` text (cilium/cilium pkg/client
 * `FormatStatusResponse`): the `Kubernetes:` line (the agent's API watch: `Ok` while events
 * or version checks arrive, else `Warning`/`Failure` with why), `Stale status:` (status
 * probes that stopped answering, `"probe" since TIME`), and the controller table under
 * `Controller Status: N/M healthy` — `  Name  Last success  Last error  Count  Message`,
 * tabwriter-aligned, ages as `timeSince` prints them (Go's `Duration.String()` truncated to
 * seconds, then ` ago`; `never`), Count the consecutive failures. Without `--verbose` only
 * failing controllers are listed. Pure; never throws.
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import { headerColumns, isKubectlNotice, splitRow, textLines } from './cilium-columns.js';

/** One controller row. Ages in seconds before the status was printed; null: `never`. */
export interface CiliumControllerRow {
  readonly name: string;
  readonly lastSuccessSeconds: number | null;
  readonly lastErrorSeconds: number | null;
  /** Consecutive failures (0: the last run succeeded). */
  readonly failures: number;
  readonly message: string;
}

/** What the status text says about how current the agent is. Null fields: the line was not there. */
export interface CiliumAgentFacts {
  /** `Kubernetes:` state (`Ok`, `Warning`, `Failure`, `Disabled`) and its message. */
  readonly kubernetes: { readonly state: string; readonly message: string } | null;
  /** `Stale status:` entries (`"probe" since TIME`), as printed. */
  readonly stale: readonly string[];
  /** `Controller Status: N/M healthy`. */
  readonly controllersHealthy: number | null;
  readonly controllersTotal: number | null;
  /** The controller table's rows (every controller with --verbose, else the failing ones). */
  readonly controllers: readonly CiliumControllerRow[];
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { y: 365 * 86400, d: 86400, h: 3600, m: 60, s: 1, ms: 0.001, 'µs': 1e-6, us: 1e-6, ns: 1e-9 };

/**
 * Seconds of an age word: Go's `Duration.String()` (`1h2m3.5s`, `4m0s`, `0s`) or Kubernetes'
 * `duration.HumanDuration` (`42s`, `3m5s`, `2d3h`, `1y20d`), an optional ` ago` after it;
 * null for anything else (`never`, `<invalid>`).
 */
export function parseAgeText(text: string): number | null {
  const t = text.trim().replace(/ ago$/, '');
  if (!/^(?:\d+(?:\.\d+)?(?:y|d|h|ms|µs|us|ns|m|s))+$/.test(t)) return null;
  let total = 0;
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(y|d|h|ms|µs|us|ns|m|s)/g)) total += Number(m[1]) * (UNIT_SECONDS[m[2] ?? ''] ?? 0);
  return total;
}

const COLUMNS = ['Name', 'Last success', 'Last error', 'Count', 'Message'] as const;

/** Reads {@link CiliumAgentFacts} from `cilium-dbg status [--verbose]` text; lines it does not read are left alone. */
export function parseCiliumAgentFacts(text: string, origin: string): ParseResult<CiliumAgentFacts> {
  const diags: Diagnostic[] = [];
  let kubernetes: CiliumAgentFacts['kubernetes'] = null;
  const stale: string[] = [];
  let healthy: number | null = null;
  let total: number | null = null;
  const controllers: CiliumControllerRow[] = [];
  let cols: ReturnType<typeof headerColumns> = null;
  let inControllers = false;
  textLines(text).forEach((line, i) => {
    if (line.trim() === '' || isKubectlNotice(line)) return;
    if (!/^\s/.test(line)) {
      cols = null;
      inControllers = line.startsWith('Controller Status:');
      const k = /^Kubernetes:\s+(\S+)\s*(.*?)\s*$/.exec(line);
      if (k) kubernetes = { state: k[1] ?? '', message: k[2] ?? '' };
      const s = /^Stale status:\s+(.*?)\s*$/.exec(line);
      if (s) stale.push(...(s[1] ?? '').split(/, (?=")/).filter((x) => x !== ''));
      const c = /^Controller Status:\s+(\d+)\/(\d+) healthy/.exec(line);
      if (c) [healthy, total] = [Number(c[1]), Number(c[2])];
      return;
    }
    if (cols === null) {
      if (inControllers) cols = headerColumns(line, COLUMNS);
      inControllers = false;
      return;
    }
    const [name = '', success = '', error = '', count = '', message = ''] = splitRow(line, cols);
    const failures = Number(count);
    if (name === '' || !/^\d+$/.test(count)) {
      diags.push(diagnostic('warning', origin, i + 1, line, 'bad-row', 'controller row not understood'));
      return;
    }
    controllers.push({ name, lastSuccessSeconds: parseAgeText(success), lastErrorSeconds: parseAgeText(error), failures, message });
  });
  return { value: { kubernetes, stale, controllersHealthy: healthy, controllersTotal: total, controllers }, diagnostics: diags };
}

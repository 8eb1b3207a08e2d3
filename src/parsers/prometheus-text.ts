/**
 * The Prometheus text exposition format (version 0.0.4, what kube-proxy's `/metrics`
 * serves): `name{label="value",…} value [timestamp]` per line, `# HELP` / `# TYPE`
 * comments. Only samples are kept (name, labels, value as a number: `NaN`, `+Inf`, `-Inf`
 * included); a line that is neither a comment nor a sample becomes a diagnostic with its
 * line number. Pure; never throws.
 */
import { diagnostic, type Diagnostic, type ParseResult } from '../model/diagnostics.js';

/** One sample line. `value` as the exposition format writes it (Go's ParseFloat). */
export interface MetricSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  /** 1-based line number in the text. */
  readonly line: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?[0-9]+)?\s*$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

function number(text: string): number | null {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  const n = Number(text);
  return text !== '' && !Number.isNaN(n) ? n : null;
}

function labels(text: string): Record<string, string> | null {
  const out: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (!m) return text.slice(LABEL.lastIndex).trim() === '' ? out : null;
    out[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    if (m[3] === '') break;
  }
  return out;
}

/** Parses an exposition text into its samples. */
export function parsePrometheusText(text: string, origin: string): ParseResult<MetricSample[]> {
  const samples: MetricSample[] = [];
  const diagnostics: Diagnostic[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '' || line.startsWith('#')) return;
    const m = SAMPLE.exec(line);
    const value = m ? number(m[4]!) : null;
    const lab = m ? (m[3] !== undefined ? labels(m[3]) : {}) : null;
    if (!m || value === null || lab === null) {
      diagnostics.push(diagnostic('warning', origin, i + 1, line, 'metrics-line', 'not a metric sample'));
      return;
    }
    samples.push({ name: m[1]!, labels: lab, value, line: i + 1 });
  });
  return { value: samples, diagnostics };
}

/**
 * Recording and replaying DNS exchanges. {@link RecordingDnsTransport} wraps a live
 * transport and keeps every exchange; its capture is written as a bundle's
 * `extra/dns.json` ({@link dnsCaptureExtras}). {@link ReplayDnsTransport} answers each
 * question with the exchange recorded for the same server, port, name and type — in
 * recorded order when the same question was asked more than once — and an exchange
 * with outcome `not-captured` for a question the capture never asked.
 */
import { readFileSync } from 'node:fs';
import { diagnostic, type Diagnostic } from '../model/diagnostics.js';
import type { DnsCapture, DnsExchange } from '../model/dns.js';
import { bundleFilePath } from '../sources/bundle.js';
import { DNS_CAPTURE_FILE, formatDnsCapture, parseDnsCapture } from './capture.js';
import { checkQuery, exchangeWithoutReply, type DnsQuery, type DnsQueryOptions, type DnsTransport } from './transport.js';

/** The replay key of a question: server, port, lower-case name without final dot, type. */
export function questionKey(q: Pick<DnsQuery, 'server' | 'port' | 'qname' | 'qtype'>): string {
  return `${q.server}|${q.port}|${q.qname.replace(/\.$/, '').toLowerCase()}|${q.qtype}`;
}

/** Wraps `inner` and records every exchange it returns. */
export class RecordingDnsTransport implements DnsTransport {
  readonly kind = 'recording' as const;
  private readonly recorded: DnsExchange[] = [];

  constructor(private readonly inner: DnsTransport) {}

  /** The inner transport's label, read each time (a port-forward names its pod once chosen). */
  get label(): string {
    return this.inner.label;
  }

  get note(): string | undefined {
    return this.inner.note;
  }

  async query(q: DnsQuery, options: DnsQueryOptions = {}): Promise<DnsExchange> {
    const e = await this.inner.query(q, options);
    this.recorded.push(e);
    return e;
  }

  /** Everything recorded so far, in order. */
  capture(): DnsCapture {
    return { formatVersion: 1, exchanges: [...this.recorded] };
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}

/** The `extras` entry of `writeBundle` holding a capture: `{'dns.json': text}`. */
export function dnsCaptureExtras(capture: DnsCapture): Record<string, string> {
  return { [DNS_CAPTURE_FILE]: formatDnsCapture(capture) };
}

/** The note of every replayed answer (`dig --replay`, the DNS pane on a capture). */
export const REPLAY_NOTE = 'recorded answer replayed from the capture: its path (via), query time and WHEN are the capture\'s, not asked now';

/**
 * The recorded exchanges of bundle `dir` (`extra/dns.json`): an empty capture when the bundle
 * has none (`present` false), parse problems in `diagnostics`. Throws `UserError` when the
 * file is a symlink that leads out of the bundle.
 */
export function readBundleDnsCapture(dir: string): { capture: DnsCapture; present: boolean; diagnostics: readonly Diagnostic[] } {
  const relative = `extra/${DNS_CAPTURE_FILE}`;
  const file = bundleFilePath(dir, relative, relative);
  const empty: DnsCapture = { formatVersion: 1, exchanges: [] };
  if (file === undefined) return { capture: empty, present: false, diagnostics: [] };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    // A directory, a file without read permission: a diagnostic, not a crash.
    return { capture: empty, present: false, diagnostics: [diagnostic('error', file, 0, '', 'unreadable', `cannot read: ${(e as Error).message}`)] };
  }
  const parsed = parseDnsCapture(text, file);
  return { capture: parsed.value, present: true, diagnostics: parsed.diagnostics };
}

/** Answers from a recorded capture. `label` is `replay:DIR` for a bundle. */
export class ReplayDnsTransport implements DnsTransport {
  readonly kind = 'replay' as const;
  private readonly byKey = new Map<string, DnsExchange[]>();
  private readonly used = new Map<string, number>();
  /**
   * Replayed answers carry the capture's path (`via`), time and WHEN: said, so they are not
   * read as asked now. A capture file that could not be read (whole or in part) is said too:
   * its questions would otherwise look merely "not in the capture".
   */
  get note(): string {
    const problems = this.diagnostics.filter((d) => d.severity !== 'info');
    if (problems.length === 0) return REPLAY_NOTE;
    const shown = problems.slice(0, 3).map((d) => `${d.origin}${d.line ? `:${d.line}` : ''}: ${d.message}`);
    const more = problems.length > 3 ? ` (+${problems.length - 3} more)` : '';
    return `${REPLAY_NOTE}; the recorded answers could not all be read — ${shown.join('; ')}${more}`;
  }

  /**
   * The one server every recorded question went to, if only one: a capture made with
   * `--dns-server POD_IP` (where the ClusterIP is not translated, as in the Cilium lab)
   * answers a replay that asks the kube-dns ClusterIP; the answers keep their real server.
   */
  private readonly onlyServer: string | null;

  constructor(capture: DnsCapture, readonly label: string, readonly diagnostics: readonly Diagnostic[] = []) {
    const servers = new Set<string>();
    for (const e of capture.exchanges) {
      servers.add(e.server);
      const k = questionKey(e);
      const list = this.byKey.get(k);
      if (list) list.push(e);
      else this.byKey.set(k, [e]);
    }
    this.onlyServer = servers.size === 1 ? [...servers][0]! : null;
  }

  /**
   * The capture of bundle `dir` (`extra/dns.json`); an empty capture when the bundle has
   * none (every question is then `not-captured`). Parse problems are in `diagnostics`.
   * Throws `UserError` when the file is a symlink that leads out of the bundle.
   */
  static fromBundle(dir: string): ReplayDnsTransport {
    const read = readBundleDnsCapture(dir);
    return new ReplayDnsTransport(read.capture, `replay:${dir}`, read.diagnostics);
  }

  /** Throws `UserError` for an invalid question, as a live transport would. */
  async query(q: DnsQuery, options: DnsQueryOptions = {}): Promise<DnsExchange> {
    checkQuery(q, options);
    let k = questionKey(q);
    if (!this.byKey.has(k) && this.onlyServer !== null) k = questionKey({ ...q, server: this.onlyServer });
    const list = this.byKey.get(k);
    if (!list || list.length === 0) {
      return exchangeWithoutReply(q, this.label, 'not-captured', 'this question is not in the capture', new Date(0).toISOString());
    }
    const i = this.used.get(k) ?? 0;
    this.used.set(k, i + 1);
    return list[Math.min(i, list.length - 1)]!;
  }

  async close(): Promise<void> {}
}

void (null as unknown as ReplayDnsTransport satisfies DnsTransport);
void (null as unknown as RecordingDnsTransport satisfies DnsTransport);

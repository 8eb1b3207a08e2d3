/**
 * DNS through the declared `dns-query` probe (commands/probes.yaml): the question is
 * asked by nodescope's query program run by a {@link Transport} — with `--netns NAME`,
 * `ip netns exec NAME node …/query-main.js …` — so it leaves from inside that namespace
 * as a pod's query would. The probe prints the raw exchange; it is decoded here.
 */
import { packageRoot } from '../paths.js';
import type { DnsExchange } from '../model/dns.js';
import { catalog, probe, type Catalog } from '../sources/catalog.js';
import { runProbe } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { DEFAULT_TIMEOUT_MS, DEFAULT_TRIES } from './engine.js';
import { decodeExchange, parseRawExchange } from './raw.js';
import { checkQuery, exchangeWithoutReply, type DnsQuery, type DnsQueryOptions, type DnsTransport } from './transport.js';

/** The probe's id in the catalog. */
export const DNS_QUERY_PROBE = 'dns-query';

/** Options of {@link ProbeDnsTransport}: the catalog, and where nodescope is installed on the probed machine. */
export interface ProbeDnsOptions {
  readonly catalog?: Catalog;
  /** Directory holding `dist/src/dns/query-main.js` (default: this nodescope's package root). */
  readonly nodescopeRoot?: string;
}

/** The probe parameters for one question (validated again by the catalog's patterns). */
export function dnsProbeParams(q: DnsQuery, options: DnsQueryOptions, nodescopeRoot: string): Record<string, string> {
  return {
    nodescopeRoot,
    dnsServer: q.server,
    dnsPort: String(q.port),
    dnsName: q.qname,
    dnsType: q.qtype,
    dnsProto: options.proto ?? 'udp',
    dnsTimeoutMs: String(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    dnsTries: String(options.tries ?? DEFAULT_TRIES),
  };
}

/** Asks through the `dns-query` probe on `transport` (label e.g. `netns:ns-node`). */
export class ProbeDnsTransport implements DnsTransport {
  readonly kind = 'netns-probe' as const;
  readonly label: string;
  private readonly cat: Catalog;
  private readonly root: string;

  constructor(private readonly transport: Transport, options: ProbeDnsOptions = {}) {
    this.label = transport.label;
    this.cat = options.catalog ?? catalog();
    this.root = options.nodescopeRoot ?? packageRoot();
  }

  /** Throws `UserError` for an invalid question before anything runs (see `checkQuery`). */
  async query(q: DnsQuery, options: DnsQueryOptions = {}): Promise<DnsExchange> {
    checkQuery(q, options);
    const spec = probe(DNS_QUERY_PROBE, this.cat);
    const run = await runProbe(this.transport, spec, dnsProbeParams(q, options, this.root), this.cat);
    const r = run.result;
    const stderr = r.stderr.trim().split('\n').slice(-3).join(' ');
    if (run.status === 'missing' && r.notCaptured) {
      return exchangeWithoutReply(q, this.label, 'not-captured', 'this question is not in the capture', r.startedAt, r.durationMs);
    }
    if (run.status === 'missing') {
      return exchangeWithoutReply(q, this.label, 'failed', `the query program could not start on ${this.label} (${run.argv[0]} or ${run.argv[1]} missing): ${stderr}`, r.startedAt, r.durationMs);
    }
    if (run.status === 'timeout') {
      return exchangeWithoutReply(q, this.label, 'failed', `the query program was killed after ${spec.timeoutMs} ms`, r.startedAt, r.durationMs);
    }
    const parsed = parseRawExchange(r.stdout, `${DNS_QUERY_PROBE}@${this.label}`);
    if (run.status === 'failed' || parsed.value === null) {
      const why = parsed.diagnostics[0]?.message ?? `exit ${r.exitCode}`;
      return exchangeWithoutReply(q, this.label, 'failed', `the query program failed (exit ${r.exitCode}): ${stderr || why}`, r.startedAt, r.durationMs);
    }
    return decodeExchange(parsed.value, this.label);
  }

  async close(): Promise<void> {}
}

void (null as unknown as ProbeDnsTransport satisfies DnsTransport);

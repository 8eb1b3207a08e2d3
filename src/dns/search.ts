/**
 * A short name's search expansion sent for real: the exact sequence of questions a pod's
 * glibc resolver sends (`dnsSearchPlan`, src/analysis/dns-search.ts) with the real reply
 * to each, in order, stopping where the resolver would stop. The plan is recomputed
 * after every step from the replies so far, so the questions sent are exactly those the
 * resolver would send given these replies (NXDOMAIN … then NOERROR).
 */
import { dnsSearchPlan, type DnsOutcome, type DnsSearchOptions } from '../analysis/dns-search.js';
import type { DnsExchange, DnsExchangeOutcome, DnsSearchRun, DnsSearchStepRun, ResolvOrigin } from '../model/dns.js';
import type { ResolvConf } from '../model/resolv.js';
import type { DnsQueryOptions, DnsTransport } from './transport.js';

/**
 * Options of {@link runSearch}: `server`/`port` override the resolv.conf name server
 * (default: its first, port 53); `query` per-question options; `plan` the getaddrinfo
 * hints of `dnsSearchPlan` (family, AI_ADDRCONFIG, host name).
 */
export interface SearchRunOptions {
  readonly resolvOrigin: ResolvOrigin;
  readonly server?: string;
  readonly port?: number;
  readonly query?: DnsQueryOptions;
  readonly plan?: Omit<DnsSearchOptions, 'answer'>;
}

/** How glibc's search loop reads an exchange (a lost or unusable reply acts as no server reachable). */
export function searchOutcome(o: DnsExchangeOutcome): DnsOutcome {
  switch (o) {
    case 'answer':
    case 'nodata':
    case 'nxdomain':
    case 'servfail':
    case 'refused':
      return o;
    case 'other-rcode':
      return 'refused'; // FORMERR/NOTIMP: NO_RECOVERY, which ends the search like REFUSED
    default:
      return 'timeout';
  }
}

/**
 * Sends the search expansion of `name` under `conf` through `dns` and returns every
 * step with its exchanges, what answered, the number of questions and the time spent.
 * Throws what the transport throws for an invalid question (`UserError`).
 */
export async function runSearch(dns: DnsTransport, conf: ResolvConf, name: string, options: SearchRunOptions): Promise<DnsSearchRun> {
  const results = new Map<string, DnsExchange>();
  const key = (qname: string, type: string) => `${qname.toLowerCase()}|${type}`;
  let incomplete = false;
  const planNow = (pending: { qname: string; type: 'A' | 'AAAA' }[]) =>
    dnsSearchPlan(conf, name, {
      ...options.plan,
      answer: (qname, type) => {
        const e = results.get(key(qname, type));
        if (e) return searchOutcome(e.outcome);
        pending.push({ qname, type });
        return 'nxdomain';
      },
    });
  let plan = planNow([]);
  const server = options.server ?? plan.nameservers[0] ?? '127.0.0.1';
  const port = options.port ?? 53;
  for (;;) {
    const pending: { qname: string; type: 'A' | 'AAAA' }[] = [];
    plan = planNow(pending);
    const first = pending[0];
    if (!first) break;
    const step = plan.steps.find((s) => s.qname === first.qname)!;
    const ask = (type: 'A' | 'AAAA') => dns.query({ server, port, qname: step.qname, qtype: type }, options.query);
    const got = step.sending === 'parallel' ? await Promise.all(step.types.map(ask)) : await sequential(step.types, ask);
    got.forEach((e, i) => results.set(key(step.qname, step.types[i]!), e));
    if (got.some((e) => e.outcome === 'not-captured')) {
      incomplete = true;
      break;
    }
  }
  const steps: DnsSearchStepRun[] = [];
  for (const s of plan.steps) {
    const exchanges = s.types.map((t) => results.get(key(s.qname, t))).filter((e): e is DnsExchange => e !== undefined);
    if (exchanges.length === 0) break;
    const times = exchanges.map((e) => e.latencyMs);
    const elapsedMs = s.sending === 'parallel' ? Math.max(...times) : times.reduce((a, b) => a + b, 0);
    steps.push({ qname: s.qname, origin: s.origin, exchanges, outcome: s.outcome, elapsedMs: Math.round(elapsedMs * 100) / 100 });
  }
  const answered = !incomplete && plan.result === 'answer' ? steps[steps.length - 1] : undefined;
  const queries = steps.reduce((n, s) => n + s.exchanges.length, 0);
  return {
    name,
    resolvOrigin: options.resolvOrigin,
    ndots: plan.ndots,
    searchList: plan.searchList,
    nameserver: server,
    sending: plan.steps[0]?.sending ?? 'parallel',
    steps,
    answeredBy: answered?.qname ?? null,
    stopReason: incomplete ? 'not-captured' : plan.stopReason,
    queries,
    wastedQueries: answered ? queries - answered.exchanges.length : queries,
    elapsedMs: Math.round(steps.reduce((t, s) => t + s.elapsedMs, 0) * 100) / 100,
    incomplete,
  };
}

async function sequential<T, R>(items: readonly T[], f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const t of items) out.push(await f(t));
  return out;
}

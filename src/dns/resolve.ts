/**
 * What `<svc>.<ns>.svc.<zone>` really resolves to, checked against the API: for one
 * Service, every question the DNS pane shows is asked of the cluster DNS server (the
 * kube-dns Service's ClusterIP unless `--dns-server`), each reply is compared with the
 * kubernetes plugin's expected answer, and the short names a pod would use (`web`,
 * `web.default`) are expanded through a resolv.conf and sent for real.
 *
 * Questions per Service (after `expectedServiceDns`): A and AAAA of the FQDN; CNAME for
 * an ExternalName Service; SRV `_<port>._<proto>.<fqdn>` for each named port; for a
 * headless Service A/AAAA of each ready endpoint's name. They are asked one after the
 * other, in that order, so a capture replays deterministically.
 */
import { expectedAnswer, expectedServiceDns, serviceFqdn, type DnsExpectOptions } from '../analysis/dns-expected.js';
import { kubernetesDefaultResolvConf, type DnsSearchOptions } from '../analysis/dns-search.js';
import { said, UserError } from '../errors.js';
import type { DnsCheck, DnsQuestionType, DnsServerRef, ResolvOrigin, ServiceDnsResult } from '../model/dns.js';
import type { ApiObjects, Service } from '../model/k8s.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { ResolvConf } from '../model/resolv.js';
import { requireServiceRef, formatServiceRef } from '../model/service-ref.js';
import { parseResolvConf } from '../parsers/resolv-conf.js';
import { probe } from '../sources/catalog.js';
import { runProbe } from '../sources/probe-runner.js';
import type { Transport } from '../sources/transport.js';
import { compareExchange, TTL_NOTE } from './compare.js';
import { runSearch } from './search.js';
import type { DnsQueryOptions, DnsTransport } from './transport.js';

/** The cluster DNS Service nodescope asks by default. */
export const KUBE_DNS_SERVICE = { namespace: 'kube-system', name: 'kube-dns' } as const;

/**
 * The cluster DNS server from the API objects: the ClusterIP of `kube-system/kube-dns`
 * (else of a kube-system Service labelled `k8s-app=kube-dns`, as RKE2 names it), its
 * UDP port named `dns` (else 53). Null when there is no such Service or it is headless.
 */
export function kubeDnsServer(api: ApiObjects): DnsServerRef | null {
  const inKubeSystem = api.services.filter((s) => s.meta.namespace === KUBE_DNS_SERVICE.namespace);
  const svc: Service | undefined =
    inKubeSystem.find((s) => s.meta.name === KUBE_DNS_SERVICE.name) ?? inKubeSystem.find((s) => s.meta.labels['k8s-app'] === 'kube-dns');
  const address = svc?.clusterIPs[0];
  if (!svc || !address) return null;
  const port = svc.ports.find((p) => p.protocol === 'UDP' && p.name === 'dns') ?? svc.ports.find((p) => p.protocol === 'UDP');
  return { address, port: port?.port ?? 53, source: 'kube-dns-service', service: formatServiceRef(svc.meta) };
}


/** One question of the pane: name (no final dot) and type. */
export interface DnsQuestion {
  readonly qname: string;
  readonly qtype: DnsQuestionType;
}

/** The questions asked for one Service (see the module doc), in order. */
export function serviceQuestions(api: ApiObjects, namespace: string, name: string, expect: DnsExpectOptions = {}): DnsQuestion[] {
  const fqdn = serviceFqdn(namespace, name, expect.zone);
  const svc = api.services.find((s) => s.meta.namespace === namespace && s.meta.name === name);
  const out: DnsQuestion[] = [{ qname: fqdn, qtype: 'A' }, { qname: fqdn, qtype: 'AAAA' }];
  if (!svc) return out;
  if (svc.type === 'ExternalName') out.push({ qname: fqdn, qtype: 'CNAME' });
  const mine = expectedServiceDns(api, expect).find((e) => e.namespace === namespace && e.name === name);
  for (const a of mine?.answers ?? []) {
    if (!out.some((q) => q.qname === a.qname && q.qtype === a.qtype)) out.push({ qname: a.qname, qtype: a.qtype });
  }
  return out;
}

/**
 * Options of {@link resolveServiceDns}.
 * - `service`: `namespace/name` (a Service missing from the API is still asked: NXDOMAIN expected);
 * - `server`/`port`: `--dns-server` (default: {@link kubeDnsServer});
 * - `resolv`: the resolv.conf for the search expansion and where it came from (the node's
 *   `resolv-conf` probe, a pod's); default: the Kubernetes default for the Service's
 *   namespace, with the DNS server as name server;
 * - `shortNames`: names to expand (default `<name>` and `<name>.<namespace>`);
 * - `expect`: the Corefile settings of `dns-expected`; `query`: per-question options;
 *   `searchPlan`: getaddrinfo hints for the expansion.
 */
export interface ResolveServiceDnsOptions {
  readonly api: ApiObjects;
  readonly service: string;
  readonly dns: DnsTransport;
  readonly server?: string;
  readonly port?: number;
  readonly resolv?: { readonly conf: ResolvConf; readonly origin: ResolvOrigin };
  readonly shortNames?: readonly string[];
  readonly expect?: DnsExpectOptions;
  readonly query?: DnsQueryOptions;
  readonly searchPlan?: Omit<DnsSearchOptions, 'answer'>;
}

/** The server to ask: the flag, else the kube-dns Service; throws `UserError` when neither exists. */
export function chooseServer(api: ApiObjects | null, server?: string, port?: number): DnsServerRef {
  if (server !== undefined) return { address: server, port: port ?? 53, source: 'flag', service: null };
  const found = api ? kubeDnsServer(api) : null;
  if (!found) throw new UserError(said('ue.dns.noKubeDns'), said('ue.dns.passServer'));
  return port === undefined ? found : { ...found, port };
}

/**
 * Asks every question of one Service, compares each reply with the expected answer and
 * runs the search expansions. Network and DNS failures are outcomes in the result;
 * throws `UserError` for a malformed service reference, no server to ask, or an
 * invalid name, and what the transport throws when it breaks.
 */
export async function resolveServiceDns(options: ResolveServiceDnsOptions): Promise<ServiceDnsResult> {
  const { api, dns } = options;
  const { namespace, name } = requireServiceRef(options.service);
  const expect = options.expect ?? {};
  const zone = (expect.zone ?? 'cluster.local').toLowerCase().replace(/\.$/, '');
  const server = chooseServer(api, options.server, options.port);
  const serviceExists = api.services.some((s) => s.meta.namespace === namespace && s.meta.name === name);
  const checks: DnsCheck[] = [];
  for (const q of serviceQuestions(api, namespace, name, expect)) {
    const exchange = await dns.query({ server: server.address, port: server.port, qname: q.qname, qtype: q.qtype }, options.query);
    checks.push(compareExchange(expectedAnswer(api, q.qname, q.qtype, expect), exchange, zone));
  }
  const resolv = options.resolv ?? { conf: kubernetesDefaultResolvConf(namespace, zone, server.address), origin: 'kubernetes-default' as const };
  const searches = [];
  for (const short of options.shortNames ?? [name, `${name}.${namespace}`]) {
    searches.push(await runSearch(dns, resolv.conf, short, {
      resolvOrigin: resolv.origin,
      // The default resolv.conf names the server already; a given one keeps its own servers.
      ...(options.resolv ? {} : { server: server.address, port: server.port }),
      ...(options.query ? { query: options.query } : {}),
      ...(options.searchPlan ? { plan: options.searchPlan } : {}),
    }));
  }
  const notes = [TTL_NOTE];
  if (dns.note) notes.unshift(dns.note);
  if (!serviceExists) notes.unshift(`no Service ${namespace}/${name} in the API objects: NXDOMAIN is expected`);
  return {
    namespace, name, fqdn: serviceFqdn(namespace, name, zone), zone, serviceExists, server, via: dns.label, checks, searches, notes,
  };
}

/**
 * The node's /etc/resolv.conf through the `resolv-conf` probe (live or replayed), for
 * `resolveServiceDns({resolv: {conf, origin: 'node'}})` — what a hostNetwork pod with
 * `dnsPolicy: Default` uses. Null when the probe did not print anything (missing, failed).
 * Note that its name servers are the node's upstream resolvers, which the search then asks.
 */
export async function readNodeResolvConf(transport: Transport): Promise<{ conf: ResolvConf; diagnostics: readonly Diagnostic[] } | null> {
  const run = await runProbe(transport, probe('resolv-conf'));
  if (run.status !== 'ok' || run.result.stdout === '') return null;
  const parsed = parseResolvConf(run.result.stdout, 'resolv-conf');
  return { conf: parsed.value, diagnostics: parsed.diagnostics };
}

/**
 * The DNS queries a pod really sends for a name: the glibc stub resolver's search-list
 * expansion (`resolv/res_query.c` `__res_context_search`, glibc 2.26 and later), the
 * Kubernetes default pod resolv.conf, and DNS name validation.
 *
 * glibc's algorithm, given `name` with `dots` dots and the resolv.conf `ndots`:
 * 1. a trailing dot makes the name absolute: it is queried as-is, once, never searched;
 * 2. if `dots >= ndots`, the name is first queried as-is;
 * 3. then each search domain is appended in order (a dotless name too: RES_DEFNAMES);
 *    NXDOMAIN, NODATA and SERVFAIL move on to the next domain, any other failure
 *    (REFUSED, a timeout, no server reachable) ends the search;
 * 4. finally, if the name was not tried as-is yet (and no search domain was the root),
 *    it is queried as-is, unless it has no dot and `no-tld-query` is set.
 * The first step that gets an answer ends the lookup.
 *
 * Each step queries A and AAAA for `getaddrinfo(AF_UNSPEC)`: in parallel on one socket
 * by default, one after the other with `single-request`, on a new socket with
 * `single-request-reopen`; `no-aaaa` (glibc 2.36) drops AAAA; `use-vc` uses TCP.
 * /etc/hosts (nsswitch `files`), HOSTALIASES and the LOCALDOMAIN/RES_OPTIONS environment
 * overrides are outside this model, as are musl (Alpine) resolvers, which differ.
 *
 * Search list limits: glibc 2.26 removed the old limits (6 domains, 256 characters);
 * {@link DnsSearchOptions.glibc} `'legacy'` applies them as glibc < 2.26 did.
 */
import { parseIp } from '../model/iproute.js';
import {
  RESOLV_MAXNS,
  buildResolvConf,
  type ResolvConf,
  type ResolvLine,
} from '../model/resolv.js';

/** Record types `getaddrinfo` asks for. */
export type DnsQueryType = 'A' | 'AAAA';

/**
 * How one step ended, as the resolver sees it: `answer` (NOERROR with data), `nodata`
 * (NOERROR, no record of that type), `nxdomain`, `servfail`, `refused`, `timeout` (no
 * reply from any server after all attempts).
 */
export type DnsOutcome = 'answer' | 'nodata' | 'nxdomain' | 'servfail' | 'refused' | 'timeout';

/** Why a plan stopped. */
export type DnsStopReason =
  | 'answered'
  | 'absolute-name-failed'
  | 'search-aborted'
  | 'exhausted'
  | 'invalid-name'
  | 'ip-literal'
  | 'no-query-types';

/**
 * Options of {@link dnsSearchPlan}:
 * - `family`: the `getaddrinfo` hint: `unspec` (A + AAAA, the default), `inet` (A),
 *   `inet6` (AAAA);
 * - `glibc`: `'2.26+'` (default, no search list limit) or `'legacy'` (< 2.26: the search
 *   line cut to 255 characters, then at most 6 domains);
 * - `hostname`: the host name, whose domain part glibc uses when resolv.conf has no
 *   search/domain line;
 * - `addrconfig`: set when the caller uses AI_ADDRCONFIG (glibc's default for NULL
 *   hints; `getent ahosts`): which families have a configured address other than
 *   loopback (an IPv6 link-local address counts), e.g. from `localAddresses()` of the
 *   pod's namespace; unset means no AI_ADDRCONFIG;
 * - `answer`: what the DNS server answers for one query; default: NXDOMAIN for all,
 *   which gives the full sequence.
 */
export interface DnsSearchOptions {
  readonly family?: 'unspec' | 'inet' | 'inet6';
  readonly glibc?: '2.26+' | 'legacy';
  readonly hostname?: string;
  readonly addrconfig?: { readonly ipv4: boolean; readonly ipv6: boolean };
  readonly answer?: (qname: string, type: DnsQueryType) => DnsOutcome;
}

/**
 * One candidate name the resolver queries.
 * - `qname`: absolute, with the trailing dot; `origin` `as-is` or `search` (with the
 *   `searchDomain` appended);
 * - `types`: the queries for this name in send order; `sending`: `parallel`,
 *   `sequential` (single-request) or `sequential-reopen`; `transport` `udp`/`tcp`;
 * - `outcomes`: the answer per type (from {@link DnsSearchOptions.answer});
 * - `outcome`: the step's combined result (answer if any type answered, else the
 *   failure that decides what glibc does next: refused/timeout > servfail > nodata >
 *   nxdomain — an approximation where A and AAAA fail differently);
 * - `validName`: whether `qname` passes {@link validateDnsName} (glibc sends it anyway).
 */
export interface DnsQueryStep {
  readonly qname: string;
  readonly origin: 'as-is' | 'search';
  readonly searchDomain: string | null;
  readonly types: readonly DnsQueryType[];
  readonly sending: 'parallel' | 'sequential' | 'sequential-reopen';
  readonly transport: 'udp' | 'tcp';
  readonly outcomes: Readonly<Partial<Record<DnsQueryType, DnsOutcome>>>;
  readonly outcome: DnsOutcome;
  readonly validName: boolean;
}

/**
 * The full lookup of one name.
 * - `dots`: dots in the name (a trailing dot counts, as in glibc); `ndots` from resolv.conf;
 * - `absolute`: the name had a trailing dot;
 * - `searchList`: the effective search list after limits; `droppedSearch`: domains the
 *   legacy limits removed;
 * - `nameservers`: the servers glibc queries (the first 3), in order for the first query;
 *   `rotate` when they take turns; `timeout` seconds per try and `attempts` rounds;
 * - `steps`: queries in order, up to and including the one that ended the lookup;
 * - `result`: `answer` when a step answered; `stopReason`: why the plan ended;
 * - `problem`: the validation problem when `stopReason` is `invalid-name`.
 */
export interface DnsSearchPlan {
  readonly name: string;
  readonly absolute: boolean;
  readonly dots: number;
  readonly ndots: number;
  readonly searchList: readonly string[];
  readonly droppedSearch: readonly string[];
  readonly nameservers: readonly string[];
  readonly rotate: boolean;
  readonly timeout: number;
  readonly attempts: number;
  readonly steps: readonly DnsQueryStep[];
  readonly result: 'answer' | 'failed' | 'not-queried';
  readonly stopReason: DnsStopReason;
  readonly problem: DnsNameProblem | null;
}

/** Why a name is not a valid DNS name to look up. */
export interface DnsNameProblem {
  readonly code: 'empty' | 'too-long' | 'empty-label' | 'label-too-long' | 'bad-character' | 'hyphen-edge';
  readonly label: string | null;
  readonly message: string;
}

const MAX_NAME = 253;
const MAX_LABEL = 63;
const LEGACY_MAX_DOMAINS = 6;
const LEGACY_MAX_CHARS = 255;

/**
 * Checks a host or service name before it is queried: RFC 1035 §2.3.4 lengths (labels
 * 1–63 octets, the name at most 253 characters without its trailing dot), RFC 1123 §2.1
 * letters/digits/hyphens (a label may start with a digit, not with or end with a
 * hyphen), and an underscore allowed as a label's first character for SRV and service
 * labels (RFC 2782: `_dns._udp.kube-dns…`). A single trailing dot is allowed. Returns
 * null when valid.
 */
export function validateDnsName(name: string): DnsNameProblem | null {
  const body = name.endsWith('.') ? name.slice(0, -1) : name;
  if (body === '') return { code: 'empty', label: null, message: 'empty name' };
  if (body.length > MAX_NAME) return { code: 'too-long', label: null, message: `${body.length} characters; at most ${MAX_NAME}` };
  for (const label of body.split('.')) {
    if (label === '') return { code: 'empty-label', label, message: 'empty label (two dots in a row, or a leading dot)' };
    if (label.length > MAX_LABEL) return { code: 'label-too-long', label, message: `label of ${label.length} characters; at most ${MAX_LABEL}` };
    if (!/^_?[A-Za-z0-9-]+$/.test(label)) return { code: 'bad-character', label, message: 'only letters, digits, hyphens (and a leading underscore) are allowed' };
    const core = label.startsWith('_') ? label.slice(1) : label;
    if (core.startsWith('-') || core.endsWith('-')) return { code: 'hyphen-edge', label, message: 'a label cannot start or end with a hyphen' };
  }
  return null;
}

/** True when {@link validateDnsName} finds no problem. */
export function isValidDnsName(name: string): boolean {
  return validateDnsName(name) === null;
}

/** The effective search list under the chosen glibc limits. */
function effectiveSearch(conf: ResolvConf, opts: DnsSearchOptions): { list: string[]; dropped: string[] } {
  let list = [...conf.search];
  if (list.length === 0 && opts.hostname?.includes('.')) list = [opts.hostname.slice(opts.hostname.indexOf('.') + 1)];
  if (opts.glibc !== 'legacy') return { list, dropped: [] };
  // glibc < 2.26 copied the search line into a 256-byte buffer, then split at most 6 names.
  const cut = list.join(' ').slice(0, LEGACY_MAX_CHARS).split(' ').filter(Boolean).slice(0, LEGACY_MAX_DOMAINS);
  const dropped = list.filter((d, i) => cut[i] !== d);
  return { list: cut, dropped };
}

/**
 * The record types getaddrinfo asks for, in send order. With AI_ADDRCONFIG (glibc's
 * default when `hints` is NULL, and what `getent ahosts` passes) a family without a
 * configured non-loopback address is not asked for; when neither family has one, both
 * are. Checked against glibc 2.36 in the lab (an IPv6-only host sends AAAA before A).
 */
function queryTypes(family: 'unspec' | 'inet' | 'inet6', ac: DnsSearchOptions['addrconfig']): DnsQueryType[] {
  if (family === 'inet') return ac && !ac.ipv4 ? [] : ['A'];
  if (family === 'inet6') return ac && !ac.ipv6 ? [] : ['AAAA'];
  if (ac?.ipv4 && !ac.ipv6) return ['A'];
  if (ac?.ipv6 && !ac.ipv4) return ['AAAA', 'A'];
  return ['A', 'AAAA'];
}

const PRIORITY: Readonly<Record<DnsOutcome, number>> = { answer: 5, refused: 4, timeout: 4, servfail: 3, nodata: 2, nxdomain: 1 };

/**
 * The exact sequence of queries glibc's stub resolver sends for `name` under `conf`
 * (see the module doc for the algorithm and its sources). Never throws; an invalid name,
 * or an IP literal (which `getaddrinfo` never sends to DNS), gives a plan without steps.
 */
export function dnsSearchPlan(conf: ResolvConf, name: string, opts: DnsSearchOptions = {}): DnsSearchPlan {
  const o = conf.options;
  const { list: searchList, dropped } = effectiveSearch(conf, opts);
  const nameservers = conf.nameservers.length > 0 ? conf.nameservers.slice(0, RESOLV_MAXNS).map((n) => n.address) : ['127.0.0.1'];
  const absolute = name.endsWith('.');
  const dots = [...name].filter((c) => c === '.').length;
  const base = {
    name, absolute, dots, ndots: o.ndots, searchList, droppedSearch: dropped, nameservers,
    rotate: o.rotate, timeout: o.timeout, attempts: o.attempts,
  };
  const bare = (reason: DnsStopReason, problem: DnsNameProblem | null = null): DnsSearchPlan => ({
    ...base, steps: [], result: 'not-queried', stopReason: reason, problem,
  });
  if (parseIp(name) !== null) return bare('ip-literal');
  const problem = validateDnsName(name);
  if (problem) return bare('invalid-name', problem);

  const types = queryTypes(opts.family ?? 'unspec', opts.addrconfig).filter((t) => t !== 'AAAA' || !o.noAaaa);
  if (types.length === 0) return bare('no-query-types');
  const sending = o.singleRequestReopen ? 'sequential-reopen' : o.singleRequest ? 'sequential' : 'parallel';
  const answer = opts.answer ?? (() => 'nxdomain' as const);

  const steps: DnsQueryStep[] = [];
  const query = (qnameIn: string, origin: 'as-is' | 'search', searchDomain: string | null): DnsOutcome => {
    const qname = qnameIn.endsWith('.') ? qnameIn : `${qnameIn}.`;
    const outcomes: Partial<Record<DnsQueryType, DnsOutcome>> = {};
    for (const t of types) outcomes[t] = answer(qname, t);
    const outcome = Object.values(outcomes).reduce((a, b) => (PRIORITY[b] > PRIORITY[a] ? b : a), 'nxdomain' as DnsOutcome);
    steps.push({
      qname, origin, searchDomain, types, sending, transport: o.useVc ? 'tcp' : 'udp', outcomes, outcome,
      validName: isValidDnsName(qname),
    });
    return outcome;
  };
  const done = (result: 'answer' | 'failed', stopReason: DnsStopReason): DnsSearchPlan => ({
    ...base, steps, result, stopReason, problem: null,
  });

  let triedAsIs = false;
  if (dots >= o.ndots || absolute) {
    const r = query(name, 'as-is', null);
    if (r === 'answer') return done('answer', 'answered');
    if (absolute) return done('failed', 'absolute-name-failed');
    triedAsIs = true;
  }
  let searched = false;
  let rootOnList = false;
  // RES_DEFNAMES and RES_DNSRCH are on by default, so both dotless and dotted names search.
  for (const domain of searchList) {
    searched = true;
    const d = domain.startsWith('.') ? domain.slice(1) : domain;
    if (d === '') rootOnList = true;
    const r = query(d === '' ? `${name}.` : `${name}.${d}`, 'search', domain);
    if (r === 'answer') return done('answer', 'answered');
    if (r === 'refused' || r === 'timeout') return done('failed', 'search-aborted');
  }
  if ((dots > 0 || !searched || !o.noTldQuery) && !(triedAsIs || rootOnList)) {
    const r = query(name, 'as-is', null);
    if (r === 'answer') return done('answer', 'answered');
  }
  return done('failed', 'exhausted');
}

/** kubeadm's default kube-dns ClusterIP (the 10th address of the default 10.96.0.0/12 Service CIDR). */
export const KUBEADM_DEFAULT_DNS_IP = '10.96.0.10';

/** kubelet's limits on a Pod's search list (k8s.io/apis validation `MaxDNSSearchPaths`, `MaxDNSSearchListChars`). */
export const KUBELET_MAX_SEARCH_DOMAINS = 32;
export const KUBELET_MAX_SEARCH_CHARS = 2048;

/**
 * The search list kubelet writes for a ClusterFirst Pod in `namespace`
 * (pkg/kubelet/network/dns/dns.go `generateSearchesForDNSClusterFirst`): `<ns>.svc.<domain>
 * svc.<domain> <domain>`, then the node's own search domains (from kubelet's --resolv-conf),
 * a domain listed twice kept once (`omitDuplicates`), then cut to kubelet's limits as
 * `formDNSSearchFitsLimits` cuts it: the first 32 domains, those over 253 characters
 * dropped, then the last ones dropped until the list joined by spaces is at most 2048 characters.
 */
export function clusterFirstSearch(namespace: string, clusterDomain: string, hostSearch: readonly string[] = []): string[] {
  const all = [`${namespace}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain, ...hostSearch];
  // A domain over 253 characters is dropped after the count cut (glibc 2.28 aborts on one).
  const list = all.filter((d, i) => all.indexOf(d) === i).slice(0, KUBELET_MAX_SEARCH_DOMAINS).filter((d) => d.length <= MAX_NAME);
  while (list.length > 0 && list.join(' ').length > KUBELET_MAX_SEARCH_CHARS) list.pop();
  return list;
}

/**
 * The resolv.conf the kubelet gives a pod with `dnsPolicy: ClusterFirst`
 * (pkg/kubelet/network/dns/dns.go: the search list of {@link clusterFirstSearch}, the
 * cluster DNS servers, `options ndots:5` — the node's own options are not carried over),
 * in the line order containerd writes it (search, nameserver, options). `nameserver`
 * defaults to {@link KUBEADM_DEFAULT_DNS_IP}; `hostSearch` are the node's search
 * domains kubelet appends (e.g. `localdomain`, a cloud's internal domain).
 */
export function kubernetesDefaultResolvConf(
  namespace: string,
  clusterDomain = 'cluster.local',
  nameserver: string | readonly string[] = KUBEADM_DEFAULT_DNS_IP,
  hostSearch: readonly string[] = [],
): ResolvConf {
  const servers = typeof nameserver === 'string' ? [nameserver] : nameserver;
  const lines: ResolvLine[] = [
    { kind: 'search', line: 1, domains: clusterFirstSearch(namespace, clusterDomain, hostSearch) },
    ...servers.map((address, i): ResolvLine => ({ kind: 'nameserver', line: i + 2, address, ignored: [] })),
    { kind: 'options', line: servers.length + 2, tokens: ['ndots:5'] },
  ];
  return buildResolvConf(lines).conf;
}

/**
 * DNS answers as nodescope observed them on the wire, and how they compare with what
 * CoreDNS's `kubernetes` plugin should answer (src/analysis/dns-expected.ts).
 *
 * Message fields follow RFC 1035 §4.1 (header flags AA/TC/RD/RA, RCODE, the answer,
 * authority and additional sections), RCODE names the IANA DNS parameters registry
 * (as `dns-packet`'s `rcodes.js` spells them), SRV RDATA RFC 2782. Times are
 * milliseconds of wall time measured by the querying process; TTLs are seconds.
 *
 * One {@link DnsExchange} is one question and its final reply (after a UDP reply with
 * TC set was retried over TCP). It keeps the reply's bytes (`replyHex`) so a capture
 * can be decoded again, and is what a capture bundle stores in `extra/dns.json`.
 */

/** The questions nodescope asks (what CoreDNS's kubernetes plugin answers for Services). */
export type DnsQuestionType = 'A' | 'AAAA' | 'SRV' | 'CNAME';

/** Every question type, in the order panes list them. */
export const DNS_QUESTION_TYPES: readonly DnsQuestionType[] = ['A', 'AAAA', 'SRV', 'CNAME'];

/** The wire transport of one attempt: UDP datagram, or TCP with the 2-byte length prefix (RFC 1035 §4.2.2). */
export type DnsWireTransport = 'udp' | 'tcp';

/**
 * How one exchange ended:
 * - `answer`: NOERROR with at least one answer record; `nodata`: NOERROR, no answer;
 * - `nxdomain`, `servfail`, `refused`: those RCODEs; `other-rcode`: any other (FORMERR, NOTIMP…);
 * - `timeout`: no reply after every try; `network-error`: the socket failed (unreachable,
 *   connection refused over TCP, no route); `bad-reply`: bytes that do not decode as a DNS
 *   reply to this question;
 * - `not-captured`: a replay asked for an exchange the capture does not hold;
 * - `failed`: the query could not be sent at all (the query program is missing on the node).
 */
export type DnsExchangeOutcome =
  | 'answer'
  | 'nodata'
  | 'nxdomain'
  | 'servfail'
  | 'refused'
  | 'other-rcode'
  | 'timeout'
  | 'network-error'
  | 'bad-reply'
  | 'not-captured'
  | 'failed';

/** Outcomes that carry a DNS reply (an RCODE and sections). */
export const REPLY_OUTCOMES: ReadonlySet<DnsExchangeOutcome> = new Set(['answer', 'nodata', 'nxdomain', 'servfail', 'refused', 'other-rcode']);

/** The section of a reply a record came from (RFC 1035 §4.1). */
export type DnsSection = 'answer' | 'authority' | 'additional';

/**
 * One resource record of a reply.
 * - `name`: the owner name as received, without the final dot;
 * - `type`: the RR type mnemonic (`A`, `SRV`, `SOA`, … or `TYPE65` for an unknown one);
 * - `ttl`: seconds;
 * - `data`: presentation text (RFC 1035 §5.1 style, names without final dot):
 *   A/AAAA the address, CNAME/NS/PTR the name, SRV `priority weight port target`,
 *   SOA `mname rname serial refresh retry expire minimum`, TXT the quoted strings,
 *   anything else the RDATA in hex.
 */
export interface DnsRecord {
  readonly section: DnsSection;
  readonly name: string;
  readonly type: string;
  readonly ttl: number;
  readonly data: string;
}

/** Header flags of a reply: authoritative, truncated, recursion desired, recursion available. */
export interface DnsFlags {
  readonly aa: boolean;
  readonly tc: boolean;
  readonly rd: boolean;
  readonly ra: boolean;
}

/**
 * One question and its final reply, as observed.
 * - `server`/`port`: where the query was sent (a ClusterIP before DNAT);
 * - `via`: how nodescope reached the server (`direct`, `netns:NAME`, `tcp-stream:LABEL`);
 * - `transport`: the wire transport of the final attempt; `truncated`: a UDP reply came
 *   with TC set and the question was asked again over TCP;
 * - `tries`: attempts sent over UDP (retries after a timeout) plus the TCP one, if any;
 * - `rcode`: the reply's RCODE name, null without a reply; `flags` likewise;
 * - `startedAt`: ISO-8601 UTC; `latencyMs`: from the first send to the final reply (or to
 *   giving up), milliseconds, including retries;
 * - `error`: what went wrong when there is no usable reply;
 * - `replyHex`: the final reply's bytes (without TCP length prefix), null without one.
 */
export interface DnsExchange {
  readonly server: string;
  readonly port: number;
  readonly qname: string;
  readonly qtype: DnsQuestionType;
  readonly via: string;
  readonly transport: DnsWireTransport;
  readonly truncated: boolean;
  readonly tries: number;
  readonly outcome: DnsExchangeOutcome;
  readonly rcode: string | null;
  readonly flags: DnsFlags | null;
  readonly answers: readonly DnsRecord[];
  readonly authorities: readonly DnsRecord[];
  readonly additionals: readonly DnsRecord[];
  readonly startedAt: string;
  readonly latencyMs: number;
  readonly error: string | null;
  readonly replyHex: string | null;
}

/** The recorded exchanges of a capture (`extra/dns.json`), in the order they happened. */
export interface DnsCapture {
  readonly formatVersion: 1;
  readonly exchanges: readonly DnsExchange[];
}

/** Where the queried server came from: the kube-dns Service, a flag, or resolv.conf. */
export type DnsServerSource = 'kube-dns-service' | 'flag' | 'resolv-conf';

/** The server a check queried. */
export interface DnsServerRef {
  readonly address: string;
  readonly port: number;
  readonly source: DnsServerSource;
  /** `kube-system/kube-dns` when it is the Service's ClusterIP. */
  readonly service: string | null;
}

/**
 * How one record compares with the prediction:
 * - `match`: same type and data (TTL not compared);
 * - `mismatch`: an expected record of that owner and type has other data (paired in order);
 * - `missing`: expected, not received; `unexpected`: received, not expected;
 * - `upstream`: a record for a name outside the cluster zone, reached through a CNAME
 *   (CoreDNS's forwarder answers it; nothing to predict from the API).
 */
export type DnsRecordVerdict = 'match' | 'mismatch' | 'missing' | 'unexpected' | 'upstream';

/** One line of the expected-vs-actual comparison; `expected`/`actual` are `TYPE data` texts. */
export interface DnsRecordCheck {
  readonly verdict: DnsRecordVerdict;
  readonly name: string;
  readonly type: string;
  readonly expected: string | null;
  readonly actual: string | null;
}

/**
 * The verdict of one question: `ok` (RCODE and every answer record as predicted),
 * `mismatch`, `no-reply` (timeout, network error, bad reply, not captured, failed),
 * `unpredicted` (outside the cluster zone: nothing to compare).
 */
export type DnsCheckVerdict = 'ok' | 'mismatch' | 'no-reply' | 'unpredicted';

/**
 * One question: what was asked, what came back, what should have.
 * `expectedRcode`/`expectedReason` are null when the name is outside the cluster zone.
 * `records` compares the answer section only; the additional section is shown, not compared.
 */
export interface DnsCheck {
  readonly qname: string;
  readonly qtype: DnsQuestionType;
  readonly exchange: DnsExchange;
  readonly expectedRcode: 'NOERROR' | 'NXDOMAIN' | null;
  readonly expectedReason: string | null;
  readonly rcodeMatches: boolean | null;
  readonly records: readonly DnsRecordCheck[];
  readonly verdict: DnsCheckVerdict;
}

/** Where the resolv.conf of a search expansion came from (`kubernetes-default`: built as kubelet builds a ClusterFirst Pod's, see {@link PodResolvView}). */
export type ResolvOrigin = 'node' | 'pod' | 'kubernetes-default';

/**
 * What a `kubernetes-default` resolv.conf was built from (kubelet's ClusterFirst rules,
 * pkg/kubelet/network/dns/dns.go), each part with whether the source showed it:
 * - `namespace`: the Pod's namespace (`-n`); `namespaceGiven` false when `default` was taken;
 * - `clusterDomain` and its `clusterDomainSource` (`default`: the source does not show it);
 * - `nameserverService`: the Service whose ClusterIP is the name server (`kube-system/kube-dns`),
 *   null when `--server` gave it;
 * - `nodeSearch`: the node's own search domains kubelet appends, null when the node's
 *   resolv.conf could not be read (then the list holds only the cluster's three).
 */
export interface PodResolvView {
  readonly namespace: string;
  readonly namespaceGiven: boolean;
  readonly clusterDomain: string;
  readonly clusterDomainSource: 'flag' | 'kubelet-config' | 'resolv-conf' | 'corefile' | 'default';
  readonly nameserverService: string | null;
  readonly nodeSearch: readonly string[] | null;
}

/**
 * One step of a search expansion with the real replies: the candidate name, its
 * exchanges in send order (A then AAAA, or as the resolver orders them), the combined
 * outcome as glibc sees it, and the step's time (parallel: the slower query;
 * sequential: the sum), milliseconds.
 */
export interface DnsSearchStepRun {
  readonly qname: string;
  readonly origin: 'as-is' | 'search';
  readonly exchanges: readonly DnsExchange[];
  readonly outcome: 'answer' | 'nodata' | 'nxdomain' | 'servfail' | 'refused' | 'timeout';
  readonly elapsedMs: number;
}

/**
 * The queries a pod's resolver sends for one short name (`web`, `web.default`), sent for
 * real: `steps` up to the one that answered; `answeredBy` the answering name (with final
 * dot) or null; `queries` the number of questions sent; `elapsedMs` the sum of the steps;
 * `wastedQueries` the questions before the answering step (the price of `ndots`);
 * `stopReason` as `dnsSearchPlan` gives it; `incomplete` when a replay lacked an exchange;
 * `podView` what a Pod's resolv.conf was built from; `podViewMissing` why the node's was used instead.
 */
export interface DnsSearchRun {
  readonly name: string;
  readonly resolvOrigin: ResolvOrigin;
  readonly ndots: number;
  readonly searchList: readonly string[];
  readonly nameserver: string;
  readonly sending: 'parallel' | 'sequential' | 'sequential-reopen';
  readonly steps: readonly DnsSearchStepRun[];
  readonly answeredBy: string | null;
  readonly stopReason: string;
  readonly queries: number;
  readonly wastedQueries: number;
  readonly elapsedMs: number;
  readonly incomplete: boolean;
  /** For a `kubernetes-default` resolv.conf: what it was built from. */
  readonly podView?: PodResolvView;
  /** A Pod's view was asked for but its name server is unknown (no kube-dns Service, no `--server`): the node's resolv.conf was used. */
  readonly podViewMissing?: 'nameserver';
}

/**
 * Everything the DNS pane shows for one Service: its FQDN, the server asked and how,
 * one {@link DnsCheck} per question, the search expansions, and notes (such as "no such
 * Service in the API objects"). `zone` is the cluster domain.
 */
export interface ServiceDnsResult {
  readonly namespace: string;
  readonly name: string;
  readonly fqdn: string;
  readonly zone: string;
  readonly serviceExists: boolean;
  readonly server: DnsServerRef;
  readonly via: string;
  readonly checks: readonly DnsCheck[];
  readonly searches: readonly DnsSearchRun[];
  readonly notes: readonly string[];
}

/** `A 10.96.0.10`, `SRV 0 100 80 web.default.svc.cluster.local`: a record as one text. */
export function recordText(r: Pick<DnsRecord, 'type' | 'data'>): string {
  return `${r.type} ${r.data}`;
}

/** The RR types an exchange's answer section holds, with data, one text per record. */
export function answerTexts(e: DnsExchange): string[] {
  return e.answers.map(recordText);
}

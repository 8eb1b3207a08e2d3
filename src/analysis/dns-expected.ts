/**
 * What CoreDNS's `kubernetes` plugin should answer, computed from the API objects, so
 * the DNS pane can set the answer it got beside the answer it should have got.
 *
 * Follows the plugin's code (coredns/coredns plugin/kubernetes: `parse.go`
 * `parseRequest`, `kubernetes.go` `findServices`/`findPods`/`endpointHostname`,
 * `object/endpoint.go`, `object/service.go`; plugin/backend_lookup.go `A`/`AAAA`/`SRV`/
 * `CNAME`) and the Kubernetes DNS spec 1.1.0 (kubernetes/dns docs/specification.md):
 *
 * - `<svc>.<ns>.svc.<zone>` A/AAAA → the ClusterIPs of a normal Service (NodePort and
 *   LoadBalancer too); the ready endpoint addresses of a headless one. Ready means
 *   `conditions.ready` true or unset; IPv4 and IPv6 slices both count; FQDN slices never.
 * - `<label>.<svc>.<ns>.svc.<zone>` A/AAAA → the ready endpoint whose label it is: its
 *   `hostname`, else (with `endpoint_pod_names`) its Pod name, else its IP with `.`/`:`
 *   replaced by `-` (`10-244-1-5`, `fd00--5`). CoreDNS answers this for normal Services
 *   too, not only headless ones as the spec requires.
 * - `_<port>._<proto>.<svc>.<ns>.svc.<zone>` SRV → normal: one record per matching
 *   Service port with target `<svc>.<ns>.svc.<zone>`; headless: one per ready endpoint
 *   and matching slice port, target `<label>.<svc>.<ns>.svc.<zone>`. Priority 0, weight
 *   ⌊10000/(100·n)⌋ for n candidates as CoreDNS counts them (each ClusterIP of a
 *   dual-stack Service is one), so 100, 50, 33, …; the target's address in
 *   `additionals`. A bare `<svc>.<ns>.svc.<zone>` SRV query answers every port.
 * - ExternalName → CNAME to `spec.externalName` (an IP there gives NXDOMAIN); a CNAME to
 *   a name inside the zone is followed (and dropped when that name has no record), one
 *   outside is left to the upstream resolver (CoreDNS drops it too if that lookup fails).
 *   SRV on an ExternalName Service is empty (NODATA).
 * - NXDOMAIN: unknown namespace or Service, a headless Service without ready endpoints,
 *   an unknown endpoint label or port, a name with too many labels. NOERROR without
 *   answers (NODATA): the zone apex, `svc.<zone>`, `<ns>.svc.<zone>`, a type the name has
 *   no record of (AAAA of an IPv4-only Service).
 * - `<a-b-c-d>.<ns>.pod.<zone>` per the `pods` option: `disabled` (plugin default) →
 *   NXDOMAIN; `insecure` (kubeadm's Corefile) → the dashed IP; `verified` → only when a Pod
 *   of that namespace has that primary IP.
 *
 * Names are compared case-insensitively and returned lower-case without the final dot.
 * Answer order is not significant (CoreDNS's `loadbalance` shuffles); here records are sorted.
 * Not modelled: wildcards, multicluster, `fallthrough`, `ignore empty_service`,
 * `namespaces`/`labels` filters, autopath, PTR.
 */
import { isIP } from 'node:net';
import type { ApiObjects, EndpointSlice, Service } from '../model/k8s.js';
import { isReady } from '../model/k8s.js';
import { addressSortKey } from './service-view.js';
import { formatServiceRef } from '../model/service-ref.js';

/** The record types this module predicts. */
export type ExpectedRecordType = 'A' | 'AAAA' | 'CNAME' | 'SRV';

/** SRV RDATA (RFC 2782); `port` is the endpoint or Service port, `target` a name without final dot. */
export interface SrvData {
  readonly priority: number;
  readonly weight: number;
  readonly port: number;
  readonly target: string;
}

/**
 * One resource record, shaped like a `dns-packet` answer: `name` lower-case without the
 * final dot, `ttl` in seconds, `data` an address (A/AAAA), a name (CNAME) or {@link SrvData}.
 */
export type ExpectedRecord =
  | { readonly name: string; readonly type: 'A' | 'AAAA' | 'CNAME'; readonly ttl: number; readonly data: string }
  | { readonly name: string; readonly type: 'SRV'; readonly ttl: number; readonly data: SrvData };

/**
 * The expected reply to one question. `rcode` NOERROR with no `answers` is NODATA.
 * `additionals`: the address records CoreDNS adds for SRV targets. `reason`: why, in words.
 */
export interface ExpectedAnswer {
  readonly qname: string;
  readonly qtype: ExpectedRecordType;
  readonly rcode: 'NOERROR' | 'NXDOMAIN';
  readonly answers: readonly ExpectedRecord[];
  readonly additionals: readonly ExpectedRecord[];
  readonly reason: string;
}

/**
 * Settings of the Corefile's `kubernetes` block that change answers.
 * - `zone`: the cluster domain (default `cluster.local`).
 * - `ttl`: seconds (plugin default 5).
 * - `endpointPodNames`: the `endpoint_pod_names` option.
 * - `pods`: the `pods` option (plugin default `disabled`).
 * - `namespaces`: the namespaces that exist; default: every namespace any object is in,
 *   plus the names of Namespace objects among `others`.
 */
export interface DnsExpectOptions {
  readonly zone?: string;
  readonly ttl?: number;
  readonly endpointPodNames?: boolean;
  readonly pods?: 'disabled' | 'insecure' | 'verified';
  readonly namespaces?: readonly string[];
}

/** The names and answers expected for one Service (see {@link expectedServiceDns}). */
export interface ServiceDnsExpectation {
  readonly namespace: string;
  readonly name: string;
  readonly fqdn: string;
  readonly answers: readonly ExpectedAnswer[];
}

/** CoreDNS's internal candidate (msg.Service): an address or name, a port, the owner name. */
interface Candidate {
  readonly host: string;
  readonly port: number;
  readonly owner: string;
}

interface Index {
  readonly zone: string;
  readonly ttl: number;
  readonly opts: DnsExpectOptions;
  readonly namespaces: ReadonlySet<string>;
  readonly services: ReadonlyMap<string, Service>;
  readonly slices: ReadonlyMap<string, readonly EndpointSlice[]>;
  readonly podIPs: ReadonlyMap<string, string>;
}

const MAX_CNAME_CHAIN = 8; // backend_lookup.go stops following after 8 CNAMEs

function norm(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** `<name>.<namespace>.svc.<zone>`. */
export function serviceFqdn(namespace: string, name: string, zone = 'cluster.local'): string {
  return norm(`${name}.${namespace}.svc.${zone}`);
}

/**
 * The label CoreDNS gives an endpoint (`endpointHostname`): `hostname`, else the Pod
 * name when `endpointPodNames` (and the name fits in a label), else the IP with `.` or
 * `:` replaced by `-`.
 */
export function endpointLabel(address: string, hostname?: string, podName?: string, endpointPodNames = false): string {
  if (hostname) return hostname;
  if (endpointPodNames && podName && podName.length < 64) return podName;
  if (address.includes('.')) return address.replaceAll('.', '-');
  return address.replaceAll(':', '-');
}

/** Indexes made per API objects and options (objects are never changed in place), so asking every Service's names is one pass, not one per name. */
const indexes = new WeakMap<ApiObjects, Map<string, Index>>();

function buildIndex(objects: ApiObjects, opts: DnsExpectOptions): Index {
  const key = JSON.stringify(opts);
  let mine = indexes.get(objects);
  if (!mine) indexes.set(objects, (mine = new Map()));
  const have = mine.get(key);
  if (have) return have;
  const made = makeIndex(objects, opts);
  mine.set(key, made);
  return made;
}

function makeIndex(objects: ApiObjects, opts: DnsExpectOptions): Index {
  const namespaces = new Set<string>(opts.namespaces ?? []);
  if (!opts.namespaces) {
    for (const o of [...objects.services, ...objects.endpointSlices, ...objects.pods, ...objects.others]) {
      if (o.meta.namespace) namespaces.add(o.meta.namespace);
    }
    for (const o of objects.others) if (o.apiKind === 'Namespace') namespaces.add(o.meta.name);
  }
  const slices = new Map<string, EndpointSlice[]>();
  for (const s of objects.endpointSlices) {
    if (s.serviceName === undefined || s.addressType === 'FQDN') continue;
    const k = `${s.meta.namespace}/${s.serviceName}`;
    const list = slices.get(k);
    if (list) list.push(s);
    else slices.set(k, [s]);
  }
  const podIPs = new Map<string, string>();
  for (const p of objects.pods) if (p.podIPs[0]) podIPs.set(`${p.meta.namespace}/${p.podIPs[0]}`, p.meta.name);
  return {
    zone: norm(opts.zone ?? 'cluster.local'),
    ttl: opts.ttl ?? 5,
    opts,
    namespaces: new Set([...namespaces].map((n) => n.toLowerCase())),
    services: new Map(objects.services.map((s) => [formatServiceRef(s.meta).toLowerCase(), s])),
    slices,
    podIPs,
  };
}

/** `matchPortAndProtocol`: an empty request part matches anything; otherwise case-insensitive equality. */
function portMatches(reqPort: string, reqProto: string, name: string, protocol: string): boolean {
  return (reqPort === '' || reqPort === name.toLowerCase()) && (reqProto === '' || reqProto === protocol.toLowerCase());
}

interface Request {
  readonly namespace: string;
  readonly service: string;
  readonly endpoint: string;
  readonly port: string;
  readonly protocol: string;
}

/** Candidates for a Service query, or a reason for NXDOMAIN (`findServices`). */
function findService(ix: Index, r: Request): Candidate[] | string {
  const svc = ix.services.get(`${r.namespace}/${r.service}`);
  if (!svc) return `no Service ${r.service} in namespace ${r.namespace}`;
  const fqdn = serviceFqdn(svc.meta.namespace, svc.meta.name, ix.zone);
  if (svc.type === 'ExternalName') {
    if (r.endpoint || r.port || r.protocol) return 'an ExternalName Service has no endpoints or ports in DNS';
    const target = norm(svc.externalName ?? '');
    if (target === '' || isIP(target) !== 0) return 'ExternalName is empty or an IP address: CoreDNS makes no CNAME';
    return [{ host: target, port: -1, owner: fqdn }];
  }
  if (svc.headless || r.endpoint) {
    const out: Candidate[] = [];
    for (const slice of ix.slices.get(formatServiceRef(svc.meta)) ?? []) {
      const ports = slice.ports.length > 0 ? slice.ports : [{ name: '', protocol: '', port: -1 }];
      for (const e of slice.endpoints) {
        if (!isReady(e)) continue;
        for (const address of e.addresses) {
          const label = endpointLabel(address, e.hostname, e.targetRef?.name, ix.opts.endpointPodNames).toLowerCase();
          if (r.endpoint && r.endpoint !== label) continue;
          for (const p of ports) {
            if (!portMatches(r.port, r.protocol, p.name ?? '', p.protocol)) continue;
            out.push({ host: address, port: p.port ?? -1, owner: `${label}.${fqdn}` });
          }
        }
      }
    }
    if (out.length === 0) {
      return svc.headless && !r.endpoint && !r.port ? 'headless Service without ready endpoints' : 'no ready endpoint matches the name';
    }
    return out;
  }
  const ports = svc.ports.length > 0 ? svc.ports : [{ name: '', protocol: '', port: -1 }];
  const matching = ports.filter((p) => portMatches(r.port, r.protocol, p.name, p.protocol));
  if (matching.length === 0) return `no port ${r.port}/${r.protocol} on the Service`;
  return matching.flatMap((p) => svc.clusterIPs.map((ip) => ({ host: ip, port: p.port, owner: fqdn })));
}

/** Candidates for a pod query (`findPods`), or a reason for NXDOMAIN. */
function findPod(ix: Index, namespace: string, podLabel: string): Candidate[] | string {
  const mode = ix.opts.pods ?? 'disabled';
  if (mode === 'disabled') return 'pod records are disabled (kubernetes plugin option pods)';
  const dashes = podLabel.split('-').length - 1;
  const ip = dashes === 3 && !podLabel.includes('--') ? podLabel.replaceAll('-', '.') : podLabel.replaceAll('-', ':');
  if (isIP(ip) === 0) return `${podLabel} is not a dashed IP address`;
  const owner = `${podLabel}.${namespace}.pod.${ix.zone}`;
  if (mode === 'insecure') return [{ host: ip, port: -1, owner }];
  return ix.podIPs.has(`${namespace}/${ip}`) ? [{ host: ip, port: -1, owner }] : `no Pod with IP ${ip} in ${namespace} (pods verified)`;
}

/** Orders records by type, owner name, then data (addresses numerically, SRV by target and port). */
function sortRecords(rs: ExpectedRecord[]): ExpectedRecord[] {
  const key = (r: ExpectedRecord) =>
    `${r.type} ${r.name} ${typeof r.data === 'string' ? addressSortKey(r.data) : `${r.data.target} ${String(r.data.port).padStart(5, '0')}`}`;
  return rs.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function addressType(host: string): 'A' | 'AAAA' | undefined {
  const v = isIP(host);
  return v === 4 ? 'A' : v === 6 ? 'AAAA' : undefined;
}

/** Builds the reply from the candidates, as backend_lookup.go does for each type. */
function reply(ix: Index, qname: string, qtype: ExpectedRecordType, found: Candidate[], depth: number): { answers: ExpectedRecord[]; additionals: ExpectedRecord[]; note: string } {
  const ttl = ix.ttl;
  const isName = (c: Candidate) => addressType(c.host) === undefined;
  if (qtype === 'CNAME') {
    const first = found[0];
    return { answers: first && isName(first) ? [{ name: qname, type: 'CNAME', ttl, data: first.host }] : [], additionals: [], note: '' };
  }
  if (qtype === 'SRV') {
    const usable = found.filter((c) => !isName(c)); // SRV for ExternalName is not implemented in CoreDNS
    const weight = usable.length === 0 ? 0 : Math.floor((100 / (100 * usable.length)) * 100);
    const answers = new Map<string, ExpectedRecord>();
    const additionals = new Map<string, ExpectedRecord>();
    for (const c of usable) {
      if (c.port === -1) continue; // no declared port: no SRV record
      answers.set(`${c.owner} ${c.port}`, { name: qname, type: 'SRV', ttl, data: { priority: 0, weight, port: c.port, target: c.owner } });
      additionals.set(`${c.owner} ${c.host}`, { name: c.owner, type: addressType(c.host) ?? 'A', ttl, data: c.host });
    }
    return { answers: sortRecords([...answers.values()]), additionals: sortRecords([...additionals.values()]), note: '' };
  }
  const cnames: ExpectedRecord[] = [];
  const addrs = new Map<string, ExpectedRecord>();
  let note = '';
  for (const c of found) {
    if (isName(c)) {
      if (c.host === qname) continue; // x CNAME x is a loop
      const cname: ExpectedRecord = { name: qname, type: 'CNAME', ttl, data: c.host };
      const inZone = c.host === ix.zone || c.host.endsWith(`.${ix.zone}`);
      if (!inZone) {
        cnames.push(cname);
        note = `; ${c.host} is then resolved by the upstream resolver`;
      } else if (depth < MAX_CNAME_CHAIN) {
        // Inside the zone the CNAME is kept only when its target has records.
        const next = ask(ix, c.host, qtype, depth + 1).answers;
        if (next.length > 0) cnames.push(cname, ...next);
      }
    } else if (addressType(c.host) === qtype) {
      addrs.set(c.host, { name: qname, type: qtype, ttl, data: c.host });
    }
  }
  return { answers: [...cnames, ...sortRecords([...addrs.values()])], additionals: [], note };
}

function ask(ix: Index, qnameIn: string, qtype: ExpectedRecordType, depth: number): ExpectedAnswer {
  const qname = norm(qnameIn);
  // `found` undefined: a name with no records of its own (apex, namespace): plain NODATA.
  const answer = (rcode: ExpectedAnswer['rcode'], reason: string, found?: Candidate[]): ExpectedAnswer => {
    if (rcode === 'NXDOMAIN' || found === undefined) return { qname, qtype, rcode, answers: [], additionals: [], reason };
    const r = reply(ix, qname, qtype, found, depth);
    const why = r.answers.length > 0 ? reason : `${reason}, but no ${qtype} record (NODATA)`;
    return { qname, qtype, rcode, answers: r.answers, additionals: r.additionals, reason: `${why}${r.note}` };
  };
  const base = qname === ix.zone ? '' : qname.slice(0, -(ix.zone.length + 1));
  const segs = base === '' ? [] : base.split('.');
  const kind = segs.pop();
  if (kind === undefined) return answer('NOERROR', 'zone apex: only SOA and NS');
  if (kind !== 'svc' && kind !== 'pod') return answer('NXDOMAIN', `"${kind}" is neither svc nor pod`);
  const namespace = segs.pop();
  if (namespace === undefined) return answer('NOERROR', `${kind}.${ix.zone} has no records of its own`);
  if (!ix.namespaces.has(namespace)) return answer('NXDOMAIN', `namespace ${namespace} does not exist`);
  const service = segs.pop();
  if (service === undefined) return answer('NOERROR', `namespace ${namespace} exists but has no records of its own`);
  if (segs.length > 2) return answer('NXDOMAIN', 'too many labels for the kubernetes plugin');
  if (kind === 'pod') {
    const found = findPod(ix, namespace, service);
    return typeof found === 'string' ? answer('NXDOMAIN', found) : answer('NOERROR', `pod address ${found[0]?.host ?? ''}`, found);
  }
  const strip = (s: string | undefined) => (s ?? '').replace(/^_/, '');
  const request: Request =
    segs.length === 2
      ? { namespace, service, endpoint: '', port: strip(segs[0]), protocol: strip(segs[1]) }
      : { namespace, service, endpoint: segs[0] ?? '', port: '', protocol: '' };
  const found = findService(ix, request);
  if (typeof found === 'string') return answer('NXDOMAIN', found);
  return answer('NOERROR', `Service ${namespace}/${service}`, found);
}

/**
 * The reply CoreDNS should give to `qname`/`qtype` (see module doc), or `null` when
 * `qname` is outside the cluster zone (the plugin does not answer; `forward` does).
 */
export function expectedAnswer(
  objects: ApiObjects,
  qname: string,
  qtype: ExpectedRecordType,
  options: DnsExpectOptions = {},
): ExpectedAnswer | null {
  const ix = buildIndex(objects, options);
  const name = norm(qname);
  if (name !== ix.zone && !name.endsWith(`.${ix.zone}`)) return null;
  return ask(ix, name, qtype, 0);
}

/**
 * The names a pane shows per Service (sorted by namespace, name), each with its answer:
 * `<svc>.<ns>.svc.<zone>` A (always; a CNAME for ExternalName) and AAAA (when it has
 * records); SRV `_<port>._<proto>.…` for each named port (the Service's ports, or the
 * slices' ports when headless); for headless Services `<label>.<svc>.…` A/AAAA for each
 * ready endpoint (the types that have records).
 */
export function expectedServiceDns(objects: ApiObjects, options: DnsExpectOptions = {}): ServiceDnsExpectation[] {
  const ix = buildIndex(objects, options);
  const services = [...objects.services].sort((a, b) =>
    a.meta.namespace === b.meta.namespace ? (a.meta.name < b.meta.name ? -1 : 1) : a.meta.namespace < b.meta.namespace ? -1 : 1,
  );
  return services.map((svc) => {
    const fqdn = serviceFqdn(svc.meta.namespace, svc.meta.name, ix.zone);
    const answers: ExpectedAnswer[] = [ask(ix, fqdn, 'A', 0)];
    const withRecords = (a: ExpectedAnswer) => a.answers.length > 0;
    if (svc.type !== 'ExternalName') {
      const aaaa = ask(ix, fqdn, 'AAAA', 0);
      if (withRecords(aaaa)) answers.push(aaaa);
      const slices = ix.slices.get(formatServiceRef(svc.meta)) ?? [];
      const ports = svc.headless ? slices.flatMap((s) => s.ports.map((p) => ({ name: p.name ?? '', protocol: p.protocol }))) : svc.ports;
      const srvNames = new Set(ports.filter((p) => p.name !== '').map((p) => `_${p.name}._${p.protocol}.${fqdn}`.toLowerCase()));
      for (const n of [...srvNames].sort()) answers.push(ask(ix, n, 'SRV', 0));
      if (svc.headless) {
        const labels = new Set(
          slices.flatMap((s) => s.endpoints.filter(isReady).flatMap((e) =>
            e.addresses.map((a) => endpointLabel(a, e.hostname, e.targetRef?.name, options.endpointPodNames).toLowerCase()))),
        );
        for (const l of [...labels].sort()) {
          for (const t of ['A', 'AAAA'] as const) {
            const a = ask(ix, `${l}.${fqdn}`, t, 0);
            if (withRecords(a)) answers.push(a);
          }
        }
      }
    }
    return { namespace: svc.meta.namespace, name: svc.meta.name, fqdn, answers };
  });
}

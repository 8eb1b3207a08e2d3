/**
 * A Service's backend set, twice: what the node programmed (the endpoints its rewrite
 * table DNATs the Service's traffic to) and what the API says it should be (the Service's
 * EndpointSlices as kube-proxy reads them). The fleet compares the two per node and across
 * nodes. IPv4 only (the kube-proxy tables read are `iptables-save` and `table ip kube-proxy`).
 *
 * Programmed, iptables mode: from the Service's KUBE-SERVICES jumps (service-dataplane.ts)
 * through its KUBE-SVC-/KUBE-SVL-/KUBE-EXT-/KUBE-FW- chains to each KUBE-SEP- chain, whose
 * DNAT `--to-destination` is the endpoint (pkg/proxy/iptables/proxier.go). nftables mode:
 * the `endpoint-<hash>-<ns>/<name>/<proto>/<port>__<ip>/<port>` chains its `service-…`
 * chains jump to (pkg/proxy/nftables/proxier.go names them so). Cilium (kube-proxy
 * replacement): the Service's IPv4 ClusterIP frontends in the LB table
 * (`cilium_lb4_services_v2` master entry and slots, joined with `cilium_lb4_backends_v3`;
 * bpf/lib/lb.h): the backends of the first `count` slots — the ones new connections are spread
 * over; the slots after them (`qcount`: terminating, quarantined) are not. A slot naming a
 * backend ID the backend map lacks is named as such ({@link missingBackend}).
 *
 * Expected: every IPv4 endpoint of the Service's slices that kube-proxy would use — the
 * ready ones, or, when none is ready, the serving-and-terminating ones (KEP-1669) — once per
 * slice port; with `internalTrafficPolicy: Local`, only the endpoints on this node. On a
 * Cilium node the agent's own rule, from its expected ClusterIP frontends
 * ({@link ciliumExpectedBackends}; src/analysis/cilium-expected.ts says how they differ). Pure.
 */
import type { LbService, LbTable } from '../model/cilium.js';
import { dnatDestination, findChain, type IptablesRuleset } from '../model/iptables.js';
import type { ApiObjects, EndpointSlice, Service } from '../model/k8s.js';
import type { NftRuleset } from '../model/nftables.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import { iptablesServiceChains, nftServiceChains } from './service-dataplane.js';
import { detectProxyMode } from './proxy-mode.js';
import type { ProgrammedFrontend } from './diagnose/frontends.js';

/** What the node programmed for a Service: endpoints as `ip:port`, sorted; `via` the table read. */
export type ProgrammedBackends =
  | { readonly kind: 'read'; readonly via: 'iptables' | 'nftables' | 'cilium'; readonly endpoints: readonly string[]; readonly hasRules: boolean }
  /** The node's table could not be read or is one this module does not read (IPVS): why. */
  | { readonly kind: 'unknown'; readonly reason: string };

const SERVICE_CHAIN = /^KUBE-(SVC|SVL|EXT|FW)-/;

/** The sorted unique `ip:port` list of `items`. */
function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/**
 * The KUBE-SERVICES jump targets of every Service, by `ns/name` (from kube-proxy's rule
 * comment `ns/name[:port] …`), read once per ruleset.
 */
function servicesIndex(ruleset: IptablesRuleset): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const rule of findChain(ruleset, 'nat', 'KUBE-SERVICES')?.rules ?? []) {
    const target = rule.target?.name ?? '';
    const comment = rule.comment;
    if (!comment || !SERVICE_CHAIN.test(target)) continue;
    const key = comment.split(/[: ]/, 1)[0]!;
    const list = out.get(key);
    if (!list) out.set(key, [target]);
    else if (!list.includes(target)) list.push(target);
  }
  return out;
}

/** The DNAT endpoints reached from the Service's chains in an iptables ruleset; `hasRules`: any chain of it was found. */
export function iptablesBackends(ruleset: IptablesRuleset, namespace: string, name: string, ports: readonly { name: string; protocol: string }[] = [], index?: Map<string, string[]>): { endpoints: string[]; hasRules: boolean } {
  const indexed = index?.get(`${namespace}/${name}`);
  const start = indexed ?? iptablesServiceChains(ruleset, namespace, name, ports).map((c) => c.chain);
  const seen = new Set<string>();
  const out: string[] = [];
  const queue = [...start];
  while (queue.length) {
    const chainName = queue.shift()!;
    if (seen.has(chainName)) continue;
    seen.add(chainName);
    const chain = findChain(ruleset, 'nat', chainName);
    if (!chain) continue;
    for (const rule of chain.rules) {
      const to = rule.target?.name ?? '';
      if (to.startsWith('KUBE-SEP-') || SERVICE_CHAIN.test(to)) queue.push(to);
      const dnat = dnatDestination(rule);
      if (dnat?.address && dnat.port !== null) out.push(`${dnat.address}:${dnat.port}`);
    }
  }
  return { endpoints: sortedSet(out), hasRules: start.length > 0 };
}

const ENDPOINT_CHAIN = /endpoint-[A-Z0-9]+-[^\s,;{}]+__([0-9.]+)\/([0-9]+)/g;

/** The endpoints the Service's `service-…` chains in `table ip kube-proxy` jump to. */
export function nftBackends(ruleset: NftRuleset, namespace: string, name: string): { endpoints: string[]; hasRules: boolean } {
  const chains = nftServiceChains(ruleset, namespace, name).filter((c) => c.table === 'ip kube-proxy');
  const table = ruleset.tables.find((t) => t.family === 'ip' && t.name === 'kube-proxy');
  const out: string[] = [];
  for (const ref of chains) {
    const chain = table?.chains.find((c) => c.name === ref.chain);
    for (const rule of chain?.rules ?? []) for (const m of rule.raw.matchAll(ENDPOINT_CHAIN)) out.push(`${m[1]}:${m[2]}`);
  }
  return { endpoints: sortedSet(out), hasRules: chains.length > 0 };
}

/** How a slot whose backend ID the backend map lacks is named in a backend set (`backend 17 (not in the backend map)`). */
export function missingBackend(id: number | null): string {
  return `backend ${id ?? '?'} (not in the backend map)`;
}

/** The live backends of one LB entry: its first `count` slots (all when the source gives no count), `ip:port`. */
function liveSlots(s: LbService): string[] {
  const count = s.count ?? s.slots.length;
  return s.slots.slice(0, count).map((slot) => (slot.backend ? `${slot.backend.ip}:${slot.backend.port}` : missingBackend(slot.backendId)));
}

/**
 * The backends a Cilium LB table gives new connections to each IPv4 ClusterIP (external
 * scope, the scope ClusterIP entries have), by ClusterIP, read once per table.
 */
function ciliumIndex(table: LbTable): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const s of table.services) {
    if (s.frontend.scope !== 'external' || s.frontend.ip.includes(':') || (s.type !== null && s.type !== 'ClusterIP')) continue;
    const list = out.get(s.frontend.ip);
    if (list) list.push(...liveSlots(s));
    else out.set(s.frontend.ip, liveSlots(s));
  }
  return out;
}

/** The backends of the Service's IPv4 ClusterIP frontends in a Cilium LB table (see the module comment); `hasRules`: some frontend of it is there. */
export function ciliumBackends(table: LbTable, service: Service, index: Map<string, string[]> = ciliumIndex(table)): { endpoints: string[]; hasRules: boolean } {
  const found = service.clusterIP ? index.get(service.clusterIP) : undefined;
  return { endpoints: sortedSet(found ?? []), hasRules: found !== undefined };
}

/**
 * What Cilium's agent should give new connections to the Service's IPv4 ClusterIP, from the
 * Service's expected frontends (src/analysis/diagnose/expect.ts, Cilium's rules: a Local
 * policy counts an endpoint without nodeName as local, terminating backends serve only when
 * none is active): the endpoints with a share of new connections, `ip:port`, sorted.
 */
export function ciliumExpectedBackends(frontends: readonly ProgrammedFrontend[]): string[] {
  const out: string[] = [];
  for (const f of frontends) {
    if (f.kind !== 'clusterIP' || f.scope === 'internal' || f.ip.includes(':')) continue;
    for (const e of f.endpoints) if ((e.weight ?? 0) > 0) out.push(`${e.ip}:${e.port}`);
  }
  return sortedSet(out);
}

/**
 * A reader of what `snapshot`'s node programmed for each Service, from the table of its
 * proxy mode (detected once; the iptables KUBE-SERVICES jumps indexed once). `unknown`
 * names what is missing: the table not read, or a mode not read here.
 */
export function programmedBackendsOf(snapshot: NodeSnapshot): (service: Service) => ProgrammedBackends {
  const mode = detectProxyMode(snapshot).mode;
  if (mode === 'nftables') {
    const nft = snapshot.nft?.value;
    if (!nft) return () => ({ kind: 'unknown', reason: 'the nftables ruleset was not read (nft-json/nft-text)' });
    return (svc) => ({ kind: 'read', via: 'nftables', ...nftBackends(nft, svc.meta.namespace, svc.meta.name) });
  }
  if (mode === 'iptables' || mode === 'iptables-legacy' || mode === 'unknown' || mode === 'none') {
    const ipt = mode === 'iptables-legacy' ? snapshot.iptablesLegacy?.value : snapshot.iptables?.value;
    if (!ipt) return () => ({ kind: 'unknown', reason: 'the iptables rules were not read (iptables-save)' });
    const index = servicesIndex(ipt);
    return (svc) => ({ kind: 'read', via: 'iptables', ...iptablesBackends(ipt, svc.meta.namespace, svc.meta.name, svc.ports, index) });
  }
  if (mode === 'cilium') {
    const lb = snapshot.lb?.value;
    if (!lb) return () => ({ kind: 'unknown', reason: "Cilium's LB table was not read (the cilium_lb4_* maps or cilium-dbg bpf lb list)" });
    const index = ciliumIndex(lb);
    return (svc) => ({ kind: 'read', via: 'cilium', ...ciliumBackends(lb, svc, index) });
  }
  return () => ({ kind: 'unknown', reason: `proxy mode ${mode}: the fleet reads kube-proxy's iptables and nftables tables and Cilium's LB maps only` });
}

/** What `snapshot`'s node programmed for one Service (see {@link programmedBackendsOf}, which to use for many). */
export function programmedBackends(snapshot: NodeSnapshot, service: Service): ProgrammedBackends {
  return programmedBackendsOf(snapshot)(service);
}

const slicesIndex = new WeakMap<ApiObjects, Map<string, EndpointSlice[]>>();

/** The Service's IPv4 EndpointSlices (label `kubernetes.io/service-name`), indexed once per object set. */
function slicesOf(objects: ApiObjects, service: Service): EndpointSlice[] {
  let index = slicesIndex.get(objects);
  if (!index) {
    index = new Map();
    for (const s of objects.endpointSlices) {
      if (s.addressType !== 'IPv4' || s.serviceName === undefined) continue;
      const key = `${s.meta.namespace}/${s.serviceName}`;
      const list = index.get(key);
      if (list) list.push(s);
      else index.set(key, [s]);
    }
    slicesIndex.set(objects, index);
  }
  return index.get(`${service.meta.namespace}/${service.meta.name}`) ?? [];
}

/**
 * The endpoints kube-proxy on `node` would program for `service` (`ip:port`, sorted):
 * ready ones, else serving-and-terminating ones; on this node only for
 * `internalTrafficPolicy: Local`.
 */
export function expectedBackends(objects: ApiObjects, service: Service, node: string): string[] {
  const slices = slicesOf(objects, service);
  const local = service.internalTrafficPolicy === 'Local';
  const eps = slices.flatMap((s) => s.endpoints.map((e) => ({ e, ports: s.ports }))).filter(({ e }) => !local || e.nodeName === node);
  const ready = eps.filter(({ e }) => e.ready !== false);
  const used = ready.length ? ready : eps.filter(({ e }) => e.serving === true && e.terminating === true);
  const out: string[] = [];
  for (const { e, ports } of used) for (const p of ports) if (p.port !== null) for (const a of e.addresses) out.push(`${a}:${p.port}`);
  return sortedSet(out);
}

/** Whether kube-proxy programs `service` at all (a ClusterIP; not headless, not ExternalName). */
export function isProgrammed(service: Service): boolean {
  return service.type !== 'ExternalName' && !service.headless && service.clusterIP !== undefined && service.clusterIP !== '' && service.clusterIP !== 'None';
}

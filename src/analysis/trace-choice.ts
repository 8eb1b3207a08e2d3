/**
 * The packet of a `:trace` command line in the TUI (issue 22 item 1): who sends it (a Pod by
 * name, a Pod IP, the node itself, an outside address), to which Service and port, through
 * which of its frontends (ClusterIP, NodePort, external IP, load-balancer IP), first packet or
 * one of an established flow — turned into the words `nodescope trace` takes (`--from`,
 * `--to IP:PORT/PROTO`, `--entry`, `--flags`). Also what Tab may complete each word to. Pure.
 *
 * Grammar: `[from] SOURCE [to] TARGET [clusterip|nodeport|externalip|lb] [first|established]
 * [pod|host|external]`; SOURCE is `NS/POD`, `POD`, an IP, `node` or `outside`; TARGET is
 * `[NS/]SERVICE[:PORT]` (a port number or name; the first port when absent) or `IP:PORT[/PROTO]`.
 */
import { isIP } from 'node:net';
import type { ApiObjects, Service } from '../model/k8s.js';
import type { NodeSnapshot } from '../model/snapshot.js';

/** The frontend words: which address of the Service the packet is sent to. */
export const FRONTEND_WORDS = ['clusterip', 'nodeport', 'externalip', 'lb'] as const;
/** First packet (a TCP SYN, a new flow) or a packet of an established flow (ACK). */
export const PACKET_WORDS = ['first', 'established'] as const;
/** Sources that are not a Pod: the node itself, or a client outside the cluster. */
export const SOURCE_WORDS = ['node', 'outside'] as const;
/** `nodescope trace --entry` words, accepted as they were before (where the packet enters). */
const ENTRY_WORDS = ['pod', 'host', 'external'] as const;

/**
 * The address `outside` sends from: 203.0.113.10, in TEST-NET-3 (RFC 5737, documentation
 * only), so it is never a Pod, node or Service address of a real cluster.
 */
export const OUTSIDE_ADDRESS = '203.0.113.10';

/** A packet as `nodescope trace` takes it (`from` '' with entry `host`: the node picks its own address). */
export interface TracePacketWords {
  readonly from: string;
  readonly to: string;
  readonly entry?: string;
  readonly flags?: string;
}

/**
 * The packet the TUI opens on (`nodescope --replay DIR --from web-abc --to-service default/web:80`,
 * src/cli/tui-trace.ts): `words` in this grammar, `flags` as `trace --flags` takes them when
 * neither SYN nor ACK.
 */
export interface StartTrace {
  readonly words: string;
  readonly flags?: string;
}

/** The packet, or why the words make none (English: the command line shows it as typed). */
export type TraceChoice = { readonly kind: 'packet'; readonly packet: TracePacketWords } | { readonly kind: 'error'; readonly message: string };

type Frontend = (typeof FRONTEND_WORDS)[number];

const bracket = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);

/** An address with an optional port (`10.0.0.1`, `10.0.0.1:80`, `[fd00::1]:80`, `10.0.0.1:80/udp`): the CLI's own forms. */
function isAddressWord(w: string): boolean {
  const bare = w.replace(/\/[a-z]+$/i, '');
  if (isIP(bare)) return true;
  const m = /^\[([^\]]+)\](?::\d+)?$/.exec(bare) ?? /^([^:]+):\d+$/.exec(bare);
  return m !== null && isIP(m[1]!) !== 0;
}

/** The Pod named `ns/name`, or `name` when one namespace has it. */
function findPod(api: ApiObjects, word: string): { ip: string } | { error: string } {
  const [ns, name] = word.includes('/') ? word.split('/', 2) : [null, word];
  const pods = api.pods.filter((p) => p.meta.name === name && (ns === null || p.meta.namespace === ns));
  if (pods.length === 0) return { error: `no Pod ${word} in the API objects (Tab lists them; or give an IP, node, outside)` };
  if (pods.length > 1) return { error: `Pod ${word} is in ${pods.length} namespaces: give NAMESPACE/${name}` };
  const ip = pods[0]!.podIPs.find((a) => !a.includes(':')) ?? pods[0]!.podIPs[0];
  return ip ? { ip } : { error: `Pod ${word} has no IP yet (status.podIPs is empty)` };
}

/** The Service named `ns/name`, or `name` when one namespace has it. */
function findService(api: ApiObjects, word: string): Service | { error: string } {
  const [ns, name] = word.includes('/') ? word.split('/', 2) : [null, word];
  const found = api.services.filter((s) => s.meta.name === name && (ns === null || s.meta.namespace === ns));
  if (found.length === 0) return { error: `no Service ${word} in the API objects` };
  if (found.length > 1) return { error: `Service ${word} is in ${found.length} namespaces: give NAMESPACE/${name}` };
  return found[0]!;
}

/** This node's address for NodePorts: its Node object's InternalIP (IPv4 first), else a global address of its interfaces. */
export function nodeAddress(snapshot: NodeSnapshot): string | null {
  const node = snapshot.api?.value?.nodes.find((n) => n.meta.name === snapshot.meta.node);
  const internal = (node?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
  const fromApi = internal.find((a) => !a.includes(':')) ?? internal[0];
  if (fromApi) return fromApi;
  const own = (snapshot.addrs?.value ?? []).flatMap((i) => i.addresses.filter((a) => a.scope === 'global').map((a) => a.local));
  return own.find((a) => !a.includes(':')) ?? own[0] ?? null;
}

/** `IP:PORT/proto` of Service `svc`'s port `portWord` (number or name; the first when absent) at `frontend`. */
function serviceTarget(snapshot: NodeSnapshot, svc: Service, portWord: string | null, frontend: Frontend): { to: string } | { error: string } {
  const ref = `${svc.meta.namespace}/${svc.meta.name}`;
  const port = portWord === null ? svc.ports[0] : svc.ports.find((p) => String(p.port) === portWord || p.name === portWord);
  if (!port) return { error: portWord === null ? `Service ${ref} has no port` : `Service ${ref} has no port ${portWord} (ports: ${svc.ports.map((p) => p.name || p.port).join(', ')})` };
  const proto = port.protocol.toLowerCase();
  let ip: string | undefined;
  let number = port.port;
  if (frontend === 'clusterip') ip = svc.clusterIPs.find((a) => !a.includes(':')) ?? svc.clusterIPs[0];
  else if (frontend === 'externalip') ip = svc.externalIPs[0];
  else if (frontend === 'lb') ip = svc.loadBalancerIngress.find((i) => i.ip)?.ip;
  else {
    if (port.nodePort === undefined) return { error: `Service ${ref} port ${port.port} has no NodePort (type ${svc.type})` };
    ip = nodeAddress(snapshot) ?? undefined;
    number = port.nodePort;
    if (!ip) return { error: `no address of node ${snapshot.meta.node} is known (no Node object, no ip addr capture) for its NodePort` };
  }
  if (!ip) return { error: `Service ${ref} has no ${frontend === 'clusterip' ? 'ClusterIP' : frontend === 'lb' ? 'load-balancer IP (status.loadBalancer.ingress)' : 'external IP (spec.externalIPs)'}` };
  return { to: `${bracket(ip)}:${number}/${proto}` };
}

/** The packet of a `:trace` command line's words (after `trace`). */
export function chooseTracePacket(snapshot: NodeSnapshot | null, words: readonly string[]): TraceChoice {
  const error = (message: string): TraceChoice => ({ kind: 'error', message });
  const positional: string[] = [];
  let frontend: Frontend | null = null;
  let established = false;
  let entry: string | null = null;
  for (const raw of words) {
    const w = raw.toLowerCase();
    if (w === 'from' || w === 'to') continue;
    if ((FRONTEND_WORDS as readonly string[]).includes(w)) frontend = w as Frontend;
    else if (w === 'established' || w === 'ack') established = true;
    else if (w === 'first' || w === 'syn') established = false;
    else if ((ENTRY_WORDS as readonly string[]).includes(w) && positional.length >= 2) entry = w;
    else positional.push(raw);
  }
  const [source, target, extra] = positional;
  if (!source || !target) return error('trace needs a source and a target, e.g. :trace from client to web:80 nodeport established');
  if (extra) return error(`${extra}: not a word :trace knows (frontend: ${FRONTEND_WORDS.join('|')}; packet: ${PACKET_WORDS.join('|')})`);
  const api = snapshot?.api?.value ?? null;
  let from: string;
  let sourceEntry: string | null = null;
  if (source === 'node') [from, sourceEntry] = ['', 'host'];
  else if (source === 'outside') [from, sourceEntry] = [OUTSIDE_ADDRESS, 'external'];
  else if (isAddressWord(source)) from = source;
  else {
    if (!api) return error(`${source}: no API objects to find a Pod in: give its IP`);
    const pod = findPod(api, source);
    if ('error' in pod) return error(pod.error);
    from = pod.ip;
  }
  let to: string;
  if (isAddressWord(target)) {
    if (frontend) return error(`${frontend} names a frontend of a Service: give the Service's name instead of ${target}`);
    to = target;
  } else {
    if (!snapshot || !api) return error(`${target}: no API objects to find a Service in: give IP:PORT`);
    const colon = target.lastIndexOf(':');
    const svc = findService(api, colon > 0 ? target.slice(0, colon) : target);
    if ('error' in svc) return error(svc.error);
    const chosen = serviceTarget(snapshot, svc, colon > 0 ? target.slice(colon + 1) : null, frontend ?? 'clusterip');
    if ('error' in chosen) return error(chosen.error);
    to = chosen.to;
  }
  const e = entry ?? sourceEntry;
  return { kind: 'packet', packet: { from, to, ...(e ? { entry: e } : {}), ...(established ? { flags: 'ack' } : {}) } };
}

/**
 * What Tab may complete the last of the `:trace` words to (`words`: those before it): Pods
 * and the source words first, then Services (`ns/name`, `name`, and `name:port` once a Service
 * is typed), then the frontend and packet words.
 */
export function traceWordChoices(snapshot: NodeSnapshot | null, words: readonly string[], last: string): string[] {
  const api = snapshot?.api?.value;
  const slot = words.filter((w) => w !== 'from' && w !== 'to').length;
  const starts = (c: string) => c.startsWith(last);
  if (slot === 0) {
    const pods = api ? api.pods.filter((p) => p.podIPs.length > 0).flatMap((p) => [p.meta.name, `${p.meta.namespace}/${p.meta.name}`]) : [];
    return [...new Set([...SOURCE_WORDS, ...pods, ...(last === '' ? ['from'] : [])])].filter(starts);
  }
  if (slot === 1) {
    const services = api ? api.services.filter((s) => s.ports.length > 0) : [];
    const colon = last.lastIndexOf(':');
    if (colon > 0) {
      const svc = api ? findService(api, last.slice(0, colon)) : null;
      if (!svc || 'error' in svc) return [];
      return svc.ports.map((p) => `${last.slice(0, colon)}:${p.port}`).filter(starts);
    }
    const names = services.flatMap((s) => [s.meta.name, `${s.meta.namespace}/${s.meta.name}`]);
    return [...new Set([...(last === '' && words[words.length - 1] !== 'to' ? ['to'] : []), ...names])].filter(starts);
  }
  return [...FRONTEND_WORDS, ...PACKET_WORDS].filter((w) => !words.includes(w)).filter(starts);
}

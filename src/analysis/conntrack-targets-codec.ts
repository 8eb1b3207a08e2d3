/**
 * The conntrack pane's classification targets as typed arrays, for a message to the parse
 * worker (src/collect/parse-worker.ts). A structured clone of the targets as objects (a huge
 * replay: ~25,000 Services, ~275,000 frontends and endpoints) cost the sending thread about as
 * much as making them and the worker as much again to read; this form is a few transferred
 * buffers, and {@link TargetColumnsWriter} fills it straight from the API objects' reading
 * (src/analysis/conntrack-targets.ts `readClassificationTargets`) without the objects.
 *
 * What is carried is what the classifier (src/analysis/conntrack-classify.ts) reads: per
 * Service, in order, its VIPs (ip, port, protocol), NodePorts (port, protocol) and endpoints (ip,
 * port, protocol); the node addresses. Not the Services' names (the pane's index, on the main
 * thread, has them) nor any other field (a view endpoint's `ready`). Texts are kept as UTF-16
 * code units, so any string comes back exactly.
 */
import type { ServiceEndpoint, ServiceFrontends, ServiceNodePort, ServiceProtocol, ServiceVip } from './conntrack-nat.js';

/** What the classifier reads of one Service: {@link ServiceFrontends} without its names. */
export type ClassifierService = Pick<ServiceFrontends, 'vips' | 'nodePorts' | 'endpoints'>;

/** What the classifier reads of the targets (src/analysis/conntrack-index.ts `ConntrackTargets`): the Services' items, the node addresses. */
export interface ClassifierTargets {
  readonly services: readonly ClassifierService[];
  readonly nodeAddresses: readonly string[];
}

/**
 * Classification targets as columns. `chars` holds every text (addresses) as UTF-16 code
 * units, `textEnds[i]` where text i ends. Per Service s: `counts[3s..3s+2]` = its VIPs,
 * NodePorts, endpoints. Per item in Service order (VIPs, NodePorts, endpoints of Service 0, then
 * Service 1, …): `ports[k]`, `protocols[k]` (an index into `protocolNames`), `ipOf[k]` (a text
 * index; -1 for a NodePort). The node addresses are the last `nodeAddressCount` texts.
 */
export interface EncodedConntrackTargets {
  readonly chars: Uint16Array;
  readonly textEnds: Int32Array;
  readonly counts: Int32Array;
  readonly ports: Float64Array;
  readonly protocols: Uint8Array;
  readonly ipOf: Int32Array;
  readonly protocolNames: readonly string[];
  readonly nodeAddressCount: number;
}

/** An encoding and the buffers to transfer with it. */
export interface EncodedTargetsMessage {
  readonly encoded: EncodedConntrackTargets;
  readonly transfer: ArrayBuffer[];
}

function grown<T extends Uint16Array | Int32Array | Float64Array | Uint8Array>(a: T, need: number, make: (n: number) => T): T {
  if (need <= a.length) return a;
  const b = make(Math.max(need, a.length * 2));
  b.set(a as never);
  return b;
}

/**
 * Fills {@link EncodedConntrackTargets} item by item: `service(namespace, name)` opens a Service
 * (its names are kept in `names`, for the sender, not encoded), then its `vip`s, `nodePort`s and
 * `endpoint`s in that order; `node` adds a node address after the last Service. A method returns
 * false, and the writer is then unusable, when an item is not of the shape the columns hold (a
 * port that is not a number, an address or protocol that is not a string, a 256th protocol
 * spelling). {@link finish} gives the encoding. Never throws.
 */
export class TargetColumnsWriter {
  /** The Services' names in order, as given to {@link service}. */
  readonly names: { readonly namespace: string; readonly name: string }[] = [];
  private chars = new Uint16Array(1 << 16);
  private charCount = 0;
  private textEnds = new Int32Array(1 << 12);
  private textCount = 0;
  private counts = new Int32Array(3 << 10);
  private ports = new Float64Array(1 << 12);
  private protocols = new Uint8Array(1 << 12);
  private ipOf = new Int32Array(1 << 12);
  private items = 0;
  private readonly protocolNames: string[] = [];
  private lastProtocol: string | undefined;
  private lastProtocolCode = -1;
  // A Service's VIPs and endpoints repeat an address per port: one equal to the one before is not written again.
  private lastIp: string | undefined;
  private lastIpAt = -1;
  private nodeAddressCount = 0;

  /** Opens the next Service. */
  service(namespace: string, name: string): boolean {
    const s = this.names.length;
    this.names.push({ namespace, name });
    this.counts = grown(this.counts, 3 * s + 3, (n) => new Int32Array(n));
    this.lastIp = undefined;
    this.lastIpAt = -1;
    return true;
  }

  /** A VIP of the open Service. */
  vip(ip: string, port: number, protocol: ServiceProtocol): boolean {
    return this.item(0, this.ipText(ip), port, protocol);
  }

  /** A NodePort of the open Service. */
  nodePort(port: number, protocol: ServiceProtocol): boolean {
    return this.item(1, -1, port, protocol);
  }

  /** An endpoint of the open Service. */
  endpoint(ip: string, port: number, protocol: ServiceProtocol): boolean {
    return this.item(2, this.ipText(ip), port, protocol);
  }

  /** A node address (after the last Service). */
  node(address: string): boolean {
    if (typeof address !== 'string') return false;
    this.text(address);
    this.nodeAddressCount++;
    return true;
  }

  /** The encoding of what was written, and its buffers to transfer (the writer is spent). */
  finish(): EncodedTargetsMessage {
    const encoded: EncodedConntrackTargets = {
      chars: this.chars.slice(0, this.charCount),
      textEnds: this.textEnds.slice(0, this.textCount),
      counts: this.counts.slice(0, 3 * this.names.length),
      ports: this.ports.slice(0, this.items),
      protocols: this.protocols.slice(0, this.items),
      ipOf: this.ipOf.slice(0, this.items),
      protocolNames: [...this.protocolNames],
      nodeAddressCount: this.nodeAddressCount,
    };
    const { chars, textEnds, counts, ports, protocols, ipOf } = encoded;
    return { encoded, transfer: [chars.buffer, textEnds.buffer, counts.buffer, ports.buffer, protocols.buffer, ipOf.buffer] as ArrayBuffer[] };
  }

  private item(kind: number, ip: number, port: number, protocol: ServiceProtocol): boolean {
    const s = this.names.length - 1;
    const code = this.protocolCode(protocol);
    if (s < 0 || typeof port !== 'number' || code < 0 || (kind !== 1 && ip < 0)) return false;
    const k = this.items++;
    if (k === this.ports.length) {
      this.ports = grown(this.ports, k + 1, (n) => new Float64Array(n));
      this.protocols = grown(this.protocols, k + 1, (n) => new Uint8Array(n));
      this.ipOf = grown(this.ipOf, k + 1, (n) => new Int32Array(n));
    }
    this.ports[k] = port;
    this.protocols[k] = code;
    this.ipOf[k] = ip;
    this.counts[3 * s + kind]!++;
    return true;
  }

  private protocolCode(p: unknown): number {
    if (typeof p !== 'string') return -1;
    if (p === this.lastProtocol) return this.lastProtocolCode;
    let code = this.protocolNames.indexOf(p);
    if (code < 0) {
      if (this.protocolNames.length === 255) return -1;
      code = this.protocolNames.push(p) - 1;
    }
    this.lastProtocol = p;
    this.lastProtocolCode = code;
    return code;
  }

  private ipText(ip: unknown): number {
    if (typeof ip !== 'string') return -1;
    if (ip === this.lastIp) return this.lastIpAt;
    this.lastIp = ip;
    this.lastIpAt = this.text(ip);
    return this.lastIpAt;
  }

  private text(t: string): number {
    const at = this.charCount;
    const end = at + t.length;
    this.chars = grown(this.chars, end, (n) => new Uint16Array(n));
    const chars = this.chars;
    for (let i = 0; i < t.length; i++) chars[at + i] = t.charCodeAt(i);
    this.charCount = end;
    this.textEnds = grown(this.textEnds, this.textCount + 1, (n) => new Int32Array(n));
    this.textEnds[this.textCount] = end;
    return this.textCount++;
  }
}

/**
 * `targets` (src/analysis/conntrack-index.ts `ConntrackTargets`) encoded through a {@link TargetColumnsWriter} (the objects' items in order); undefined
 * when an item is not of a shape the columns hold (the caller then sends the objects). Never throws.
 */
export function encodeConntrackTargets(targets: { readonly services: readonly ServiceFrontends[]; readonly nodeAddresses: readonly string[] }): EncodedTargetsMessage | undefined {
  const w = new TargetColumnsWriter();
  for (const svc of targets.services) {
    if (!w.service(svc.namespace, svc.name)) return undefined;
    for (const v of svc.vips) if (!w.vip(v.ip, v.port, v.protocol)) return undefined;
    for (const n of svc.nodePorts) if (!w.nodePort(n.port, n.protocol)) return undefined;
    for (const e of svc.endpoints) if (!w.endpoint(e.ip, e.port, e.protocol)) return undefined;
  }
  for (const a of targets.nodeAddresses) if (!w.node(a)) return undefined;
  return w.finish();
}

/**
 * What `encoded` holds: per Service its items (`{ ip, port, protocol }` / `{ port, protocol }`),
 * in order, and the node addresses. Undefined when `encoded` is not consistent (lengths that do
 * not add up, an index out of range). Never throws.
 */
export function decodeConntrackTargets(encoded: EncodedConntrackTargets): ClassifierTargets | undefined {
  const { chars, textEnds, counts, ports, protocols, ipOf, protocolNames, nodeAddressCount } = encoded;
  const serviceCount = counts.length / 3;
  const texts = textEnds.length;
  if (!Number.isInteger(serviceCount) || ports.length !== protocols.length || ports.length !== ipOf.length || nodeAddressCount > texts) return undefined;
  const textAt = (i: number): string | undefined => {
    if (i < 0 || i >= texts) return undefined;
    const start = i > 0 ? textEnds[i - 1]! : 0;
    const end = textEnds[i]!;
    return start <= end && end <= chars.length ? unitsText(chars, start, end) : undefined;
  };
  // An address is decoded once however many items name it in a row.
  let cachedAt = -1;
  let cached: string | undefined;
  const ipText = (i: number): string | undefined => {
    if (i !== cachedAt) {
      cachedAt = i;
      cached = textAt(i);
    }
    return cached;
  };
  const services: ClassifierService[] = [];
  let k = 0;
  for (let s = 0; s < serviceCount; s++) {
    const vips: ServiceVip[] = [];
    const nodePorts: ServiceNodePort[] = [];
    const endpoints: ServiceEndpoint[] = [];
    const nVips = counts[3 * s]!;
    const nNodePorts = counts[3 * s + 1]!;
    const nEndpoints = counts[3 * s + 2]!;
    if (nVips < 0 || nNodePorts < 0 || nEndpoints < 0 || k + nVips + nNodePorts + nEndpoints > ports.length) return undefined;
    for (let end = k + nVips; k < end; k++) {
      const ip = ipText(ipOf[k]!);
      const protocol = protocolNames[protocols[k]!];
      if (ip === undefined || protocol === undefined) return undefined;
      vips.push({ ip, port: ports[k]!, protocol: protocol as ServiceProtocol });
    }
    for (let end = k + nNodePorts; k < end; k++) {
      const protocol = protocolNames[protocols[k]!];
      if (protocol === undefined) return undefined;
      nodePorts.push({ port: ports[k]!, protocol: protocol as ServiceProtocol });
    }
    for (let end = k + nEndpoints; k < end; k++) {
      const ip = ipText(ipOf[k]!);
      const protocol = protocolNames[protocols[k]!];
      if (ip === undefined || protocol === undefined) return undefined;
      endpoints.push({ ip, port: ports[k]!, protocol: protocol as ServiceProtocol });
    }
    services.push({ vips, nodePorts, endpoints });
  }
  if (k !== ports.length) return undefined;
  const nodeAddresses: string[] = [];
  for (let i = texts - nodeAddressCount; i < texts; i++) nodeAddresses.push(textAt(i)!);
  return { services, nodeAddresses };
}

/** The string of UTF-16 code units `units[start..end)`, exactly (a lone surrogate stays one; no decoder's replacement). */
function unitsText(units: Uint16Array, start: number, end: number): string {
  let out = '';
  // In slices: an argument list of any length could exceed the call stack.
  for (let at = start; at < end; at += 4096) out += String.fromCharCode.apply(null, units.subarray(at, Math.min(end, at + 4096)) as unknown as number[]);
  return out;
}

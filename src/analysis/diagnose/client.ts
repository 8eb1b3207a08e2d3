/**
 * `nodescope diagnose --from WHO` (issue 17, item 6): who the client is. A Pod by name
 * (`ns/name`, or a bare name when one namespace has it) or by IP is looked up in the API
 * objects; `node` is the node itself (a process or a hostNetwork Pod on it); any other
 * address is a client the walk places by the node's routes (a Pod of this node, or outside).
 * A Pod on another node is kept as such: its packets to a Service are rewritten on its own
 * node, so this node's walk says nothing about them. Pure.
 */
import { said, UserError } from '../../errors.js';
import { closeNames } from '../../model/close-names.js';
import type { ApiObjects, Pod } from '../../model/k8s.js';
import { parseAddress } from '../../net/address.js';

/**
 * The client of a walk. `label`: how findings name it (`default/client`, `node`,
 * `192.168.49.1`); `ip`: the source address (null for `node`: the kernel picks it per
 * route, and for a Pod without an IP yet); `pod`: `ns/name` when the address is a Pod's;
 * `podNode`: that Pod's node (undefined when not scheduled); `hostNetwork`: the Pod uses
 * the node's own addresses.
 */
export interface DiagnoseClient {
  readonly kind: 'pod' | 'node' | 'address';
  readonly label: string;
  readonly ip: string | null;
  readonly pod?: string;
  readonly podNode?: string;
  readonly hostNetwork?: boolean;
}

const ref = (p: Pod) => `${p.meta.namespace}/${p.meta.name}`;

function podClient(p: Pod): DiagnoseClient {
  return {
    kind: 'pod',
    label: ref(p),
    ip: p.podIPs.find((ip) => parseAddress(ip)?.family === 'ipv4') ?? p.podIPs[0] ?? null,
    pod: ref(p),
    ...(p.nodeName !== undefined ? { podNode: p.nodeName } : {}),
    ...(p.hostNetwork ? { hostNetwork: true } : {}),
  };
}

/**
 * The client `text` names (see the module comment). Throws `UserError` for a name no Pod of
 * `api` has (with the closest Pod names), a bare name several namespaces have, and a Pod
 * name without API objects to look it up in.
 */
export function resolveDiagnoseClient(text: string, api: ApiObjects | null): DiagnoseClient {
  const word = text.trim();
  if (word === '') throw new UserError(said('ue.from.empty'), said('ue.from.emptyHint'));
  if (word === 'node') return { kind: 'node', label: 'node', ip: null };
  const address = parseAddress(word);
  if (address) {
    const ip = address.text;
    const pod = api?.pods.find((p) => !p.hostNetwork && p.podIPs.includes(ip));
    return pod ? podClient(pod) : { kind: 'address', label: ip, ip };
  }
  if (!api) throw new UserError(said('ue.from.podNeedsApiObjects', { word }), said('ue.from.podNeedsApiHint'));
  const names = api.pods.map(ref);
  const exact = word.includes('/') ? api.pods.filter((p) => ref(p) === word) : api.pods.filter((p) => p.meta.name === word);
  if (exact.length === 1) return podClient(exact[0]!);
  if (exact.length > 1) throw new UserError(said('ue.from.podsInN', { word, n: exact.length }), said('ue.from.giveNsName', { list: exact.map(ref).join(', ') }));
  const close = closeNames(word, names);
  throw new UserError(said('ue.from.noPodNamed', { word }), close.length ? said('err.oneOf', { list: close.join(', ') }) : said('ue.from.givePod'));
}

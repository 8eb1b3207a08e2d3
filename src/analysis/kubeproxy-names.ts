/**
 * kube-proxy's chain, set and map names, derived exactly as kube-proxy derives them.
 *
 * iptables (k8s.io/kubernetes pkg/proxy/iptables/proxier.go, `portProtoHash`,
 * `servicePortPolicyClusterChain`, `servicePortEndpointChainName`): prefix +
 * first 16 characters of base32(sha256(servicePortName + protocol [+ endpoint])), where
 * servicePortName is `ns/name:port` (`ns/name` for an unnamed port), protocol is lower
 * case (`tcp`) and endpoint is `ip:port`. The result always fits iptables' 28-char limit.
 *
 * nftables (pkg/proxy/nftables/proxier.go, `servicePortChainNameBase`,
 * `servicePortEndpointChainNameBase`, `hashAndTruncate`): prefix + first 8 characters of
 * base32(sha256(name)) + `-` + name, where name is `ns/name/proto/port` or
 * `ns/name/proto/port__ip/port` (IPv6 `:` become `.`), truncated to 240 characters.
 */
import { createHash } from 'node:crypto';
import type { L4Protocol } from './lab-scenario-types.js';

/** The well-known iptables chains of kube-proxy's iptables mode. */
export const IPTABLES_CHAINS = {
  services: 'KUBE-SERVICES',
  externalServices: 'KUBE-EXTERNAL-SERVICES',
  nodePorts: 'KUBE-NODEPORTS',
  postrouting: 'KUBE-POSTROUTING',
  markMasq: 'KUBE-MARK-MASQ',
  forward: 'KUBE-FORWARD',
  proxyFirewall: 'KUBE-PROXY-FIREWALL',
  kubeletFirewall: 'KUBE-FIREWALL',
} as const;

/** Per-service iptables chain prefixes (KUBE-SVC/SVL/EXT/FW and per-endpoint KUBE-SEP). */
export type IptablesServiceChainKind = 'KUBE-SVC-' | 'KUBE-SVL-' | 'KUBE-EXT-' | 'KUBE-FW-';

/** The well-known names inside `table ip kube-proxy` (nftables mode). */
export const NFT_NAMES = {
  table: 'kube-proxy',
  services: 'services',
  serviceIPs: 'service-ips',
  serviceNodePorts: 'service-nodeports',
  nodePortIPs: 'nodeport-ips',
  clusterIPs: 'cluster-ips',
  serviceEndpointsCheck: 'service-endpoints-check',
  nodePortEndpointsCheck: 'nodeport-endpoints-check',
  noEndpointServices: 'no-endpoint-services',
  noEndpointNodePorts: 'no-endpoint-nodeports',
  rejectChain: 'reject-chain',
  clusterIPsCheck: 'cluster-ips-check',
  firewallIPs: 'firewall-ips',
  firewallCheck: 'firewall-check',
  markMasq: 'mark-for-masquerade',
  masquerading: 'masquerading',
} as const;

/** Per-service nftables chain prefixes, plus `affinity-` for the per-endpoint affinity set. */
export type NftServiceChainKind = 'service-' | 'local-' | 'external-' | 'firewall-' | 'endpoint-' | 'affinity-';

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 (Go's `base32.StdEncoding`, with `=` padding) of `bytes`. */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

function sha256Base32(text: string): string {
  return base32Encode(createHash('sha256').update(text, 'utf8').digest());
}

/**
 * The `ServicePortName.String()` of kube-proxy: `ns/name:port`, or `ns/name` when the
 * port is unnamed (pkg/proxy/types.go). This is also the text of kube-proxy's comments.
 */
export function servicePortName(namespace: string, name: string, portName: string): string {
  return portName === '' ? `${namespace}/${name}` : `${namespace}/${name}:${portName}`;
}

/** Lower-case protocol as kube-proxy uses it in names and matches (`tcp`). */
export function protoLower(protocol: L4Protocol): string {
  return protocol.toLowerCase();
}

/** `portProtoHash`: first 16 chars of base32(sha256(servicePortName + protocol)). */
export function portProtoHash(svcPortName: string, protocol: string): string {
  return sha256Base32(svcPortName + protocol).slice(0, 16);
}

/**
 * The iptables per-service chain name, e.g. `KUBE-SVC-NPX46M4PTMTKRN6Y` for
 * (`default/kubernetes:https`, `tcp`). `protocol` is lower case.
 */
export function iptablesServiceChain(kind: IptablesServiceChainKind, svcPortName: string, protocol: string): string {
  return kind + portProtoHash(svcPortName, protocol);
}

/**
 * The iptables per-endpoint chain name `KUBE-SEP-…`; `endpoint` is `ip:port`
 * (kube-proxy's `BaseEndpointInfo.String()`).
 */
export function iptablesEndpointChain(svcPortName: string, protocol: string, endpoint: string): string {
  return 'KUBE-SEP-' + sha256Base32(svcPortName + protocol + endpoint).slice(0, 16);
}

/** kube-proxy's nftables name length limit (knftables.NameLengthMax 256 minus 16 for the prefix). */
const NFT_CHAIN_NAME_BASE_MAX = 256 - 16;

/** `hashAndTruncate`: `HASH8-name`, cut to 240 characters with a trailing `...`. */
export function nftHashAndTruncate(name: string): string {
  const full = `${sha256Base32(name).slice(0, 8)}-${name}`;
  return full.length > NFT_CHAIN_NAME_BASE_MAX ? `${full.slice(0, NFT_CHAIN_NAME_BASE_MAX - 3)}...` : full;
}

/** `servicePortChainNameBase`: `HASH8-ns/name/proto/port`, e.g. `ULMVA6XW-ns1/svc1/tcp/p80`. */
export function nftServiceChainBase(namespace: string, name: string, protocol: string, portName: string): string {
  return nftHashAndTruncate(`${namespace}/${name}/${protocol}/${portName}`);
}

/**
 * `servicePortEndpointChainNameBase`: `HASH8-ns/name/proto/port__ip/port`; an IPv6
 * address has its `:` replaced by `.`. `endpoint` is `ip:port` (IPv6 bracketed).
 */
export function nftEndpointChainBase(
  namespace: string,
  name: string,
  protocol: string,
  portName: string,
  endpoint: string,
): string {
  const { ip, port } = splitHostPort(endpoint);
  const safeIP = ip.includes(':') ? ip.replaceAll(':', '.') : ip;
  return nftHashAndTruncate(`${namespace}/${name}/${protocol}/${portName}__${safeIP}/${port}`);
}

/** A full nftables per-service (or per-endpoint) name: `kind` + base. */
export function nftChain(kind: NftServiceChainKind, base: string): string {
  return kind + base;
}

function splitHostPort(endpoint: string): { ip: string; port: string } {
  if (endpoint.startsWith('[')) {
    const close = endpoint.indexOf(']');
    return { ip: endpoint.slice(1, close), port: endpoint.slice(close + 2) };
  }
  const colon = endpoint.lastIndexOf(':');
  return { ip: endpoint.slice(0, colon), port: endpoint.slice(colon + 1) };
}

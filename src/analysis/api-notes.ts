/**
 * What the API reader could not read, said where an SRE looks (issue 21): the optional kinds
 * ServiceCIDR and IPAddress (networking.k8s.io/v1, KEP-1880) that a cluster may not serve
 * (404) or RBAC may refuse (403). Without them, the Service CIDRs nodescope uses (nftables'
 * `cluster-ips-check`, the Modes pane) come from the node's rules or the ClusterIPs, and no
 * ClusterIP's allocation can be checked. Pure.
 */
import type { ApiObjects } from '../model/k8s.js';

/** The optional kinds nodescope asks for, by their collection name, with their kind. */
const KINDS: Readonly<Record<string, string>> = { servicecidrs: 'ServiceCIDR', ipaddresses: 'IPAddress' };

/**
 * The note for `api`'s unread kinds, or null when every kind was read. `kinds`: `ServiceCIDR,
 * IPAddress` (only known kind names: safe to print as is); `text`: the sentence with each
 * kind's reason as the reader gave it (from the objects text: not terminal-safe).
 */
export function apiUnreadNote(api: ApiObjects | null | undefined): { readonly kinds: string; readonly text: string } | null {
  const unread = api?.unread ?? [];
  if (unread.length === 0) return null;
  const kinds = unread.map((u) => KINDS[u.split(':')[0] ?? ''] ?? 'other kinds').filter((k, i, all) => all.indexOf(k) === i);
  return {
    kinds: kinds.join(', '),
    text: `API objects not read: ${unread.join('; ')} — the Service CIDRs come from the node's rules or the ClusterIPs, and ClusterIP allocations are not checked`,
  };
}

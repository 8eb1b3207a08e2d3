/**
 * Standard chain priority names (nft(8) "STANDARD PRIORITY NAMES", tables 6 and 7) and the
 * rule nft uses to print a priority (`prio2str()` in nftables src/rule.c).
 */
import type { NftFamily, NftHook } from '../model/nftables.js';

/** Priority names of the ip, ip6 and inet families (arp and netdev know only `filter`). */
export const NFT_PRIORITIES: Readonly<Record<string, number>> = {
  raw: -300,
  mangle: -150,
  dstnat: -100,
  filter: 0,
  security: 50,
  srcnat: 100,
};

/** Priority names of the bridge family, which uses other values. */
export const NFT_BRIDGE_PRIORITIES: Readonly<Record<string, number>> = {
  dstnat: -300,
  filter: -200,
  out: 100,
  srcnat: 300,
};

function table(family: NftFamily): Readonly<Record<string, number>> {
  return family === 'bridge' ? NFT_BRIDGE_PRIORITIES : NFT_PRIORITIES;
}

/**
 * Whether nft accepts/prints priority `name` for this family and hook (`std_prio_family_hook_compat()`).
 * `natInOut`: nft ≥ 1.0.9 also allows `dstnat` in output and `srcnat` in input.
 */
function compatible(name: string, family: NftFamily, hook: NftHook, natInOut: boolean): boolean {
  if (family === 'bridge') {
    if (name === 'dstnat') return hook === 'prerouting';
    if (name === 'out') return hook === 'output';
    if (name === 'srcnat') return hook === 'postrouting';
    return name === 'filter';
  }
  const inetLike = family === 'ip' || family === 'ip6' || family === 'inet';
  switch (name) {
    case 'filter':
      return true;
    case 'raw':
    case 'mangle':
    case 'security':
      return inetLike;
    case 'dstnat':
      return inetLike && (hook === 'prerouting' || (natInOut && hook === 'output'));
    case 'srcnat':
      return inetLike && (hook === 'postrouting' || (natInOut && hook === 'input'));
    default:
      return false;
  }
}

/**
 * Value of a priority text: `-110`, `dstnat`, `dstnat - 10`, `filter + 5`. Names resolve by
 * family (bridge differs); undefined when the text is not a priority. Names are accepted for
 * any hook, as the values are well defined even where nft would refuse the name.
 */
export function resolvePriority(text: string, family: NftFamily): number | undefined {
  const m = /^\s*([a-z]+|[-+]?\d+)\s*(?:([-+])\s*(\d+))?\s*$/.exec(text);
  if (!m) return undefined;
  const [, head = '', sign, offset] = m;
  const base = /^[-+]?\d+$/.test(head) ? Number(head) : table(family)[head];
  if (base === undefined) return undefined;
  if (!sign || offset === undefined) return base;
  return sign === '+' ? base + Number(offset) : base - Number(offset);
}

/**
 * The priority text `nft list` prints for `value`: the first standard name within ±10 that
 * fits family and hook (`dstnat - 10`), else the number. `nftVersion` (e.g. `1.0.6`) selects
 * the pre-1.0.9 rule where `dstnat`/`srcnat` are only shown for prerouting/postrouting.
 */
export function priorityText(value: number, family: NftFamily, hook: NftHook, nftVersion?: string): string {
  const natInOut = versionAtLeast(nftVersion, [1, 0, 9]);
  for (const [name, std] of Object.entries(table(family))) {
    const offset = value - std;
    if (Math.abs(offset) > 10) continue;
    // nft stops at the first name in reach, even when that name does not fit the hook.
    if (!compatible(name, family, hook, natInOut)) break;
    return offset === 0 ? name : `${name} ${offset > 0 ? '+' : '-'} ${Math.abs(offset)}`;
  }
  return String(value);
}

/** `version` ≥ `min`; an absent or unreadable version counts as current (true). */
function versionAtLeast(version: string | undefined, min: readonly number[]): boolean {
  if (!version) return true;
  const parts = version.split('.').map((p) => Number.parseInt(p, 10));
  for (let i = 0; i < min.length; i++) {
    const have = parts[i] ?? 0;
    const want = min[i] ?? 0;
    if (Number.isNaN(have)) return true;
    if (have !== want) return have > want;
  }
  return true;
}

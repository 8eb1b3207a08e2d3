/**
 * Which Service dataplane a node runs, with the evidence a reader can check:
 * kube-proxy iptables (nf_tables or legacy backend, or both holding rules),
 * kube-proxy nftables, IPVS, Cilium kube-proxy replacement, or none. Pure.
 */
import { CILIUM_LB_MAPS, type LbTable } from '../model/cilium.js';
import type { IptablesRuleset } from '../model/iptables.js';
import { chainMayHold, chainRuleCount } from '../model/iptables-facts.js';
import type { NodeSnapshot, Parsed } from '../model/snapshot.js';
import { lbCountOf, type LbServicesCount } from '../parsers/bpftool-lb-count.js';
import type { ChainSummary } from '../model/chain-summary.js';

/** The detected mode. `iptables-mixed`: KUBE- chains in both iptables backends. */
export type ProxyMode = 'iptables' | 'iptables-legacy' | 'iptables-mixed' | 'nftables' | 'ipvs' | 'cilium' | 'none' | 'unknown';

/**
 * What Cilium's services maps (`cilium_lb{4,6}_services_v2`) hold: one master entry
 * (backend slot 0) per frontend plus one entry per backend slot, so `frontends +
 * backendSlots` is the maps' entry count. `maps`: the map names holding them, by family.
 */
export interface CiliumServicesCount {
  readonly maps: readonly string[];
  readonly frontends: number;
  readonly backendSlots: number;
}

/**
 * One fact behind the detected mode, as data, so each reader words it: {@link modeFactText}
 * in English (reports, `evidence`), src/text/i18n.ts `mode.fact.*` per UI language.
 * - `kubeProxyTable`: nftables table `kube-proxy` exists, in `family` (`ip`, `ip6`, `inet`);
 * - `kubeChains`: KUBE- chains in one iptables backend, counted by {@link isCountedKubeChain}
 *   (the fact holds only when some are kube-proxy's own, not {@link NON_PROXY_KUBE_CHAINS}); `leftovers`: how
 *   many of them are per-Service chains (KUBE-SVC-, KUBE-SEP-, KUBE-SVL-, KUBE-EXT-, KUBE-FW-)
 *   declared with no rule — kube-proxy's iptables mode never leaves one empty, so they are what
 *   an earlier mode left (e.g. after a switch to IPVS);
 * - `ipsetMatches`: nat rules matching kube-proxy's ipsets (`-m set --match-set KUBE-…`),
 *   which only its IPVS mode writes (pkg/proxy/ipvs/proxier.go);
 * - `ipvs`: IPVS virtual servers (`null`: not read, `probe` names what would read them), and
 *   whether the `kube-ipvs0` dummy interface exists;
 * - `ciliumKpr`: Cilium replaces kube-proxy (no KUBE- chains);
 * - `ciliumServices`: the services maps' content ({@link CiliumServicesCount});
 * - `ciliumChains`: CILIUM_ chains in iptables;
 * - `noProxy`: rules were read but no dataplane was found; `noRules`: no rules were read.
 */
export type ModeFact =
  | { readonly kind: 'kubeProxyTable'; readonly family: string }
  | { readonly kind: 'kubeChains'; readonly ruleset: 'iptables' | 'iptables-legacy'; readonly backend: string | null; readonly chains: number; readonly leftovers: number }
  | { readonly kind: 'ipsetMatches'; readonly rules: number; readonly sets: readonly string[] }
  | { readonly kind: 'ipvs'; readonly virtualServers: number | null; readonly probe: string | null; readonly kubeIpvs0: boolean }
  | { readonly kind: 'ciliumKpr' }
  | ({ readonly kind: 'ciliumServices' } & CiliumServicesCount)
  | { readonly kind: 'ciliumChains'; readonly chains: number }
  | { readonly kind: 'noProxy' }
  | { readonly kind: 'noRules' };

/**
 * Why a mode is a reading of indirect evidence only: the probe that would confirm it was not
 * read (`notRead`, e.g. `ipvsadm`), it was read and shows nothing (`noVirtualServers`), or
 * only chains an earlier mode left were found (`leftoversOnly`).
 */
export type ModeUnconfirmed =
  | { readonly reason: 'notRead'; readonly probe: string }
  | { readonly reason: 'noVirtualServers'; readonly probe: string }
  | { readonly reason: 'leftoversOnly' };

/** {@link ModeUnconfirmed} in English: `ipvsadm not read`. */
export function unconfirmedText(u: ModeUnconfirmed): string {
  switch (u.reason) {
    case 'notRead':
      return `${u.probe} not read`;
    case 'noVirtualServers':
      return `${u.probe} shows no virtual servers`;
    case 'leftoversOnly':
      return 'only per-Service KUBE- chains left empty by an earlier mode';
  }
}

/**
 * A mode and why: each fact is read from the snapshot; `evidence` is their English text, in order.
 * `unconfirmed`: why the mode is a reading of indirect evidence only, null when the dataplane
 * itself was read; {@link modeLabel} joins it to the mode's name.
 */
export interface ProxyModeResult {
  readonly mode: ProxyMode;
  readonly unconfirmed: ModeUnconfirmed | null;
  readonly facts: readonly ModeFact[];
  readonly evidence: readonly string[];
}

/** `iptables (nf_tables)`, `iptables-legacy`: the ruleset a `kubeChains` fact is about. */
export function kubeChainsRuleset(f: Extract<ModeFact, { kind: 'kubeChains' }>): string {
  return `${f.ruleset}${f.backend ? ` (${f.backend})` : ''}`;
}

/** `ipvs (unconfirmed: ipvsadm not read)`, or the mode's name alone when confirmed. */
export function modeLabel(r: Pick<ProxyModeResult, 'mode' | 'unconfirmed'>): string {
  return r.unconfirmed ? `${r.mode} (unconfirmed: ${unconfirmedText(r.unconfirmed)})` : r.mode;
}

/** `3 KUBE- ipsets (KUBE-CLUSTER-IP, KUBE-LOOP-BACK, …)`: at most three set names, then an ellipsis. */
export function ipsetNames(sets: readonly string[]): string {
  return sets.length <= 3 ? sets.join(', ') : `${sets.slice(0, 3).join(', ')}, …`;
}

/** One fact in English, e.g. `cilium_lb4_services_v2: 7 frontends + 14 backend slots = 21 entries`. */
export function modeFactText(f: ModeFact): string {
  switch (f.kind) {
    case 'kubeProxyTable':
      return `nftables: table ${f.family} kube-proxy present`;
    case 'kubeChains':
      return `${kubeChainsRuleset(f)}: ${f.chains} KUBE- chains${f.leftovers > 0 ? `, ${f.leftovers} of them per-Service chains declared empty (leftovers of an earlier mode)` : ''}`;
    case 'ipsetMatches':
      return `nat: ${f.rules} rules match kube-proxy ipsets (${ipsetNames(f.sets)}), as IPVS mode writes`;
    case 'ipvs':
      return `IPVS: ${f.virtualServers ?? `unknown virtual servers (${f.probe ?? 'ipvsadm'} not read)`}${f.virtualServers === null ? '' : ' virtual servers'}${f.kubeIpvs0 ? ', kube-ipvs0 present' : ''}`;
    case 'ciliumKpr':
      return 'Cilium KPR: 0 KUBE- chains';
    case 'ciliumServices':
      return `${f.maps.join(' + ')}: ${f.frontends} frontends + ${f.backendSlots} backend slots = ${f.frontends + f.backendSlots} entries`;
    case 'ciliumChains':
      return `iptables: ${f.chains} CILIUM_ chains`;
    case 'noProxy':
      return 'no KUBE- chains, no kube-proxy table, no Cilium LB maps';
    case 'noRules':
      return 'no netfilter rules were read';
  }
}

/**
 * KUBE- chains that exist whatever the Service proxy is: kubelet's canary and
 * firewall chains, and the hint chain iptables-wrapper reads. They say nothing about
 * kube-proxy's mode (a Cilium node has them too).
 */
export const NON_PROXY_KUBE_CHAINS: ReadonlySet<string> = new Set(['KUBE-KUBELET-CANARY', 'KUBE-FIREWALL', 'KUBE-IPTABLES-HINT', 'KUBE-MARK-DROP', 'KUBE-PROXY-CANARY']);

/**
 * Counts chains whose name starts with `prefix` across all tables of a ruleset,
 * leaving out {@link NON_PROXY_KUBE_CHAINS}.
 */
export function countChains(ruleset: IptablesRuleset | null | undefined, prefix: string): number {
  if (!ruleset) return 0;
  let n = 0;
  for (const t of ruleset.tables) for (const c of t.chains) if (c.name.startsWith(prefix) && !NON_PROXY_KUBE_CHAINS.has(c.name)) n++;
  return n;
}

/** The tables whose KUBE- chains {@link isCountedKubeChain} counts: where kube-proxy's iptables mode writes its chains. */
const KUBE_CHAIN_TABLES: ReadonlySet<string> = new Set(['filter', 'nat']);

/**
 * Empty chains kubelet and kube-proxy create in every mode to notice that a table was flushed
 * (kubelet's kubelet_network_linux.go, kube-proxy's proxier.go): not part of any Service path.
 */
const CANARY_CHAINS: ReadonlySet<string> = new Set(['KUBE-KUBELET-CANARY', 'KUBE-PROXY-CANARY']);

/**
 * The one rule for "N KUBE- chains" (the header's mode fact, the Modes pane and `show compare`):
 * every `KUBE-` chain of the nat and filter tables except the canaries ({@link CANARY_CHAINS}).
 * kubelet's KUBE-FIREWALL is counted: kube-proxy's iptables mode writes it too
 * (`iptablesKubeletJumpChains` in kube-proxy's proxier.go), so it is part of what that mode programs.
 */
export function isCountedKubeChain(table: string, chain: string): boolean {
  return chain.startsWith('KUBE-') && KUBE_CHAIN_TABLES.has(table) && !CANARY_CHAINS.has(chain);
}

/** How many chains of `ruleset` {@link isCountedKubeChain} counts; 0 without a ruleset. */
export function countKubeChains(ruleset: IptablesRuleset | null | undefined): number {
  let n = 0;
  for (const t of ruleset?.tables ?? []) for (const c of t.chains) if (isCountedKubeChain(t.name, c.name)) n++;
  return n;
}

/** Chain-name prefixes kube-proxy's iptables mode writes one per Service or endpoint, never empty. */
export const PER_SERVICE_CHAIN_PREFIXES: readonly string[] = ['KUBE-SVC-', 'KUBE-SEP-', 'KUBE-SVL-', 'KUBE-EXT-', 'KUBE-FW-'];

/**
 * Per-Service KUBE- chains (see {@link PER_SERVICE_CHAIN_PREFIXES}) declared with no rule,
 * across all tables: what an earlier mode left (iptables-save declares every chain, even one
 * kube-proxy stopped using).
 */
export function countLeftoverChains(ruleset: IptablesRuleset | null | undefined): number {
  if (!ruleset) return 0;
  let n = 0;
  // The rule count from the chain's lines when its rules are not built yet (src/model/iptables-facts.ts).
  for (const t of ruleset.tables) for (const c of t.chains) if (PER_SERVICE_CHAIN_PREFIXES.some((p) => c.name.startsWith(p)) && chainRuleCount(c) === 0) n++;
  return n;
}

/** Rules of the nat table matching a `KUBE-` ipset (`-m set --match-set KUBE-CLUSTER-IP dst,dst`), and the sets' names. */
export function ipsetMatchesIn(ruleset: IptablesRuleset | null | undefined): { rules: number; sets: string[] } {
  const sets = new Set<string>();
  let rules = 0;
  for (const t of ruleset?.tables ?? []) {
    if (t.name !== 'nat') continue;
    for (const c of t.chains) {
      // A chain whose lines hold no `--match-set` is not parsed for it (src/model/iptables-facts.ts).
      if (!chainMayHold(c, 'match-set')) continue;
      for (const r of c.rules) {
        let hit = false;
        for (const m of r.matches) {
          if (m.module !== 'set') continue;
          for (const o of m.options) {
            const name = o.values[0];
            if (o.name === 'match-set' && name?.startsWith('KUBE-')) {
              sets.add(name);
              hit = true;
            }
          }
        }
        if (hit) rules++;
      }
    }
  }
  return { rules, sets: [...sets].sort() };
}

/** What {@link rulesetEvidence} counts in one ruleset. */
interface RulesetEvidence {
  /** KUBE- chains as shown ({@link countKubeChains}). */
  readonly kube: number;
  /** KUBE- chains that say kube-proxy wrote them (not {@link NON_PROXY_KUBE_CHAINS}): what detection reads. */
  readonly proxy: number;
  readonly cilium: number;
  readonly left: number | null;
  readonly backend: string | null;
  readonly sets: { readonly rules: number; readonly sets: readonly string[] };
}

const evidenceMemo = new WeakMap<IptablesRuleset, RulesetEvidence>();

function parsedEvidence(ruleset: IptablesRuleset | null | undefined): RulesetEvidence {
  return { kube: countKubeChains(ruleset), proxy: countChains(ruleset, 'KUBE-'), cilium: countChains(ruleset, 'CILIUM_'), left: countLeftoverChains(ruleset), backend: ruleset?.generator?.backend ?? null, sets: ipsetMatchesIn(ruleset) };
}

/**
 * The counts mode detection reads from one iptables ruleset: from the parsed rules when
 * there are any, else from its {@link ChainSummary} (`left`: null when the summary has no
 * rule counts, `nft list chains`). All zero when neither was read.
 */
function rulesetEvidence(ruleset: IptablesRuleset | null | undefined, summary: ChainSummary | undefined): RulesetEvidence {
  if (ruleset) {
    // A ruleset never changes (a refresh makes a new one); each staged snapshot of a load carries
    // the same one, and the header and the panes ask again: one sweep of its chains per ruleset.
    let memo = evidenceMemo.get(ruleset);
    if (!memo) evidenceMemo.set(ruleset, (memo = parsedEvidence(ruleset)));
    return memo;
  }
  if (!summary) return parsedEvidence(null);
  const named = (prefix: string) => summary.chains.filter((c) => c.name.startsWith(prefix) && !NON_PROXY_KUBE_CHAINS.has(c.name));
  const rulesKnown = summary.chains.every((c) => c.rules !== null);
  const left = rulesKnown ? summary.chains.filter((c) => c.rules === 0 && PER_SERVICE_CHAIN_PREFIXES.some((p) => c.name.startsWith(p))).length : null;
  return { kube: summary.chains.filter((c) => isCountedKubeChain(c.table, c.name)).length, proxy: named('KUBE-').length, cilium: named('CILIUM_').length, left, backend: summary.backend, sets: { rules: summary.ipsetRules ?? 0, sets: [...summary.ipsetSets] } };
}

/**
 * nftables could not be read: its probe timed out or failed (not merely absent: a node
 * without nft has no nftables rules to miss) and the table listing (`nft-tables`) named no table either.
 */
function nftUnread(snapshot: NodeSnapshot): boolean {
  const status = snapshot.nft?.probe?.status;
  return !snapshot.nft?.value && !snapshot.nftTableNames && (status === 'timeout' || status === 'failed');
}

/** Extra facts from parts other modules parse (nftables tables, Cilium maps, interfaces). */
export interface ModeHints {
  /** Names of nftables tables as `family name`, e.g. `ip kube-proxy`. */
  readonly nftTables?: readonly string[];
  /** What Cilium's lb4+lb6 services maps hold, when read. */
  readonly ciliumServices?: CiliumServicesCount | null;
  /** Interface names on the node (kube-ipvs0, cilium_host, …). */
  readonly interfaces?: readonly string[];
}

/** Remembered per LB table: it never changes, and the header and the panes ask again on every staged snapshot. */
const servicesCountMemo = new WeakMap<LbTable, CiliumServicesCount>();

/** Frontends and backend slots of an LB table, and the services maps (by family) that hold them. Remembered per table. */
export function ciliumServicesCount(lb: LbTable): CiliumServicesCount {
  let memo = servicesCountMemo.get(lb);
  if (memo === undefined) servicesCountMemo.set(lb, (memo = countCiliumServices(lb)));
  return memo;
}

function countCiliumServices(lb: LbTable): CiliumServicesCount {
  const families = new Set(lb.services.map((svc) => (svc.frontend.ip.includes(':') ? 6 : 4)));
  return servicesCountOf({ frontends: lb.services.length, backendSlots: lb.services.reduce((n, svc) => n + svc.slots.length, 0), ipv4: families.has(4), ipv6: families.has(6) });
}

/** The same counts from the decoded maps' {@link LbServicesCount} (src/parsers/bpftool-lb-count.ts), equal to the table's. */
export function servicesCountOf(count: LbServicesCount): CiliumServicesCount {
  const maps = [...(count.ipv4 ? [CILIUM_LB_MAPS.services4] : []), ...(count.ipv6 ? [CILIUM_LB_MAPS.services6] : [])];
  return { maps, frontends: count.frontends, backendSlots: count.backendSlots };
}

/** The services count of a snapshot's LB part: the counts it was built with (no join), else its table's; null when none. */
function lbServicesCount(part: Parsed<LbTable> | null | undefined): CiliumServicesCount | null {
  if (!part) return null;
  const counted = lbCountOf(part);
  if (counted !== undefined) return servicesCountOf(counted);
  return part.value ? ciliumServicesCount(part.value) : null;
}

/** The hints a snapshot itself carries: its nftables tables and interface names. */
export function snapshotHints(snapshot: NodeSnapshot): ModeHints {
  const nft = snapshot.nft?.value;
  const addrs = snapshot.addrs?.value;
  const lb = lbServicesCount(snapshot.lb);
  return {
    ...(lb ? { ciliumServices: lb } : {}),
    // The tables the `nft-tables` probe named (cheap, always read live) when no ruleset was dumped.
    ...(nft ? { nftTables: nft.tables.map((t) => `${t.family} ${t.name}`) } : snapshot.nftTableNames ? { nftTables: snapshot.nftTableNames } : {}),
    ...(addrs ? { interfaces: addrs.map((i) => i.ifname) } : {}),
  };
}

/**
 * Detects the mode from the snapshot (plus `extra` hints, e.g. Cilium map entry
 * counts). Order matters: a node mid-migration can show several; the evidence lists them all.
 */
export function detectProxyMode(snapshot: NodeSnapshot, extra: ModeHints = {}): ProxyModeResult {
  const hints: ModeHints = { ...snapshotHints(snapshot), ...extra };
  const nftEv = rulesetEvidence(snapshot.iptables?.value, snapshot.chainSummaries?.iptables);
  const legacyEv = rulesetEvidence(snapshot.iptablesLegacy?.value, snapshot.chainSummaries?.iptablesLegacy);
  const nftKube = nftEv.proxy;
  const legacyKube = legacyEv.proxy;
  const ciliumChains = nftEv.cilium;
  const backend = nftEv.backend;
  const kubeProxyFamilies = (hints.nftTables ?? []).flatMap((t) => /^(ip|ip6|inet) kube-proxy$/.exec(t)?.[1] ?? []);
  const kubeProxyTable = kubeProxyFamilies.length > 0;
  const ipvsRead = snapshot.ipvs?.value ?? null;
  const ipvsServers = ipvsRead?.virtualServers.length ?? 0;
  const hasIpvsIface = hints.interfaces?.includes('kube-ipvs0') ?? false;
  const nftLeft = nftEv.left ?? 0;
  const legacyLeft = legacyEv.left ?? 0;
  const nftSets = nftEv.sets;
  const legacySets = legacyEv.sets;
  const ipsetRules = nftSets.rules + legacySets.rules;
  const cilium = hints.ciliumServices && hints.ciliumServices.frontends > 0 ? hints.ciliumServices : null;
  const facts: ModeFact[] = [];

  for (const family of kubeProxyFamilies) facts.push({ kind: 'kubeProxyTable', family });
  // Shown only when kube-proxy's own chains are there; the number is the one count (kubelet's KUBE-FIREWALL included).
  if (nftKube > 0) facts.push({ kind: 'kubeChains', ruleset: 'iptables', backend, chains: nftEv.kube, leftovers: nftLeft });
  if (legacyKube > 0) facts.push({ kind: 'kubeChains', ruleset: 'iptables-legacy', backend: null, chains: legacyEv.kube, leftovers: legacyLeft });
  if (ipsetRules > 0) facts.push({ kind: 'ipsetMatches', rules: ipsetRules, sets: [...new Set([...nftSets.sets, ...legacySets.sets])].sort() });
  const ipvsHinted = hasIpvsIface || ipsetRules > 0;
  if (ipvsHinted || ipvsServers > 0)
    facts.push({ kind: 'ipvs', virtualServers: ipvsRead ? ipvsServers : null, probe: ipvsRead ? null : (snapshot.ipvs?.probe?.id ?? 'ipvsadm'), kubeIpvs0: hasIpvsIface });
  if (cilium) facts.push({ kind: 'ciliumServices', ...cilium });
  if (ciliumChains > 0) facts.push({ kind: 'ciliumChains', chains: ciliumChains });

  // Chains that only an earlier mode left do not make this node an iptables-mode node.
  const nftLive = nftKube - nftLeft;
  const legacyLive = legacyKube - legacyLeft;
  let mode: ProxyMode;
  let unconfirmed: ModeUnconfirmed | null = null;
  const ipvsProbe = snapshot.ipvs?.probe?.id ?? 'ipvsadm';
  if (ipvsServers > 0 && ipvsHinted) mode = 'ipvs';
  else if (kubeProxyTable) mode = 'nftables';
  else if (ipsetRules > 0 || (hasIpvsIface && ipvsServers > 0)) {
    // kube-proxy's IPVS mode is the only writer of nat rules matching KUBE- ipsets.
    mode = 'ipvs';
    unconfirmed = ipvsRead ? { reason: 'noVirtualServers', probe: ipvsProbe } : { reason: 'notRead', probe: ipvsProbe };
  } else if (hasIpvsIface && !ipvsRead && nftLive === 0 && legacyLive === 0 && (nftKube > 0 || legacyKube > 0)) {
    mode = 'ipvs';
    unconfirmed = { reason: 'notRead', probe: ipvsProbe };
  } else if (nftLive > 0 || legacyLive > 0) {
    mode = nftLive > 0 && legacyLive > 0 ? 'iptables-mixed' : nftLive > 0 ? (backend === 'legacy' ? 'iptables-legacy' : 'iptables') : 'iptables-legacy';
    // Chain names alone (`nft list chains`): which per-Service chains are empty leftovers is unknown.
    if ((nftLive > 0 && nftEv.left === null) || (legacyLive > 0 && legacyEv.left === null)) unconfirmed = { reason: 'notRead', probe: nftEv.left === null ? 'iptables-save' : 'iptables-legacy-save' };
  }
  else if (nftKube > 0 || legacyKube > 0) {
    mode = 'unknown';
    unconfirmed = { reason: 'leftoversOnly' };
  }
  else if (cilium || ciliumChains > 0) {
    mode = 'cilium';
    facts.unshift({ kind: 'ciliumKpr' });
  } else if (nftUnread(snapshot)) {
    // No KUBE- chain in iptables, but nftables was not read (nft timed out on a big node): not "none".
    mode = 'unknown';
    unconfirmed = { reason: 'notRead', probe: snapshot.nft?.probe?.id ?? 'nft-tables' };
  } else if (snapshot.iptables?.value || snapshot.chainSummaries?.iptables || hints.nftTables) {
    mode = 'none';
    facts.push({ kind: 'noProxy' });
  } else {
    mode = 'unknown';
    facts.push({ kind: 'noRules' });
  }
  return { mode, unconfirmed, facts, evidence: facts.map(modeFactText) };
}

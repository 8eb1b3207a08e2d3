/**
 * Notes about a node's iptables dumps that change how far their rules can be trusted,
 * for the header of the TUI and of every `show`/`trace` document:
 *
 * - iptables-nft's "iptables-legacy tables present" warning (iptables/nft-shared.c
 *   `nft_check_xt_legacy`): rules in the other backend run too (kubernetes#109811);
 * - version skew (kubernetes#112477): a kube-proxy/kubelet rule whose comment names a mark
 *   match the rule lacks. An older iptables-nft reading rules a newer one wrote can print
 *   them without the matches it cannot decode; such a dump reads as a different ruleset.
 *
 * - IPVS mode's deprecation (KEP-5495, Kubernetes 1.35) on a node detected in IPVS mode.
 *
 * Pure: snapshot in, sentences out.
 */
import { findTable, type IptablesChain, type IptablesRule, type IptablesRuleset, type IptablesTableKey } from '../model/iptables.js';
import { chainMayHold } from '../model/iptables-facts.js';
import type { NodeSnapshot } from '../model/snapshot.js';
import type { MessageKey } from '../text/i18n.js';
import { detectProxyMode } from './proxy-mode.js';

/**
 * kube-proxy's and kubelet's rules whose comment says they act on marked packets, and the
 * mark they test (pkg/proxy/iptables/proxier.go `writeIptablesRules`, pkg/kubelet/kubelet_network_linux.go).
 * `returnBefore`: kube-proxy ≥ 1.20 tests the mark in an earlier `! --mark … -j RETURN` of
 * the same chain instead of on the rule itself.
 */
export const MARKED_RULE_COMMENTS: readonly { readonly comment: string; readonly target: string; readonly mark: string; readonly returnBefore: boolean }[] = [
  { comment: 'kubernetes service traffic requiring SNAT', target: 'MASQUERADE', mark: '0x4000/0x4000', returnBefore: true },
  // The FORWARD → KUBE-FORWARD jump carries the same comment without a mark: only the ACCEPT tests it.
  { comment: 'kubernetes forwarding rules', target: 'ACCEPT', mark: '0x4000/0x4000', returnBefore: false },
  { comment: 'kubernetes firewall for dropping marked packets', target: 'DROP', mark: '0x8000/0x8000', returnBefore: false },
];

function hasMarkMatch(rule: IptablesRule, negated: boolean | null): boolean {
  return rule.matches.some((m) => m.module === 'mark' && m.options.some((o) => o.name === 'mark' && (negated === null || o.negated === negated)));
}

/** A rule as a reader would find it: `table CHAIN #n`. */
function where(table: string, rule: IptablesRule): string {
  return `${table} ${rule.chain} #${rule.index}`;
}

/** The words every comment of {@link MARKED_RULE_COMMENTS} begins with ('' when none is common). */
const MARKED_COMMENTS_PREFIX = MARKED_RULE_COMMENTS.map((k) => k.comment).reduce((a, b) => {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return a.slice(0, n);
});

/** Remembered per ruleset: a ruleset never changes (a refresh splices into a new one), and every staged snapshot of a load shares it. */
const missingMarkMemo = new WeakMap<IptablesRuleset, readonly string[]>();

/**
 * The rules of `ruleset` whose kube-proxy comment names a mark match they lack (see
 * {@link MARKED_RULE_COMMENTS}), as `table CHAIN #n ("comment")`. Remembered per ruleset.
 */
export function rulesMissingTheirMark(ruleset: IptablesRuleset): readonly string[] {
  let memo = missingMarkMemo.get(ruleset);
  if (memo === undefined) {
    memo = computeRulesMissingTheirMark(ruleset);
    missingMarkMemo.set(ruleset, memo);
  }
  return memo;
}

function computeRulesMissingTheirMark(ruleset: IptablesRuleset): string[] {
  const out: string[] = [];
  for (const table of ruleset.tables) {
    for (const chain of table.chains) {
      // A chain not yet parsed whose lines hold none of the comments is not parsed for them
      // (src/model/iptables-facts.ts); the comments' common words first: one search of most chains' lines, not three.
      if (MARKED_COMMENTS_PREFIX !== '' && !chainMayHold(chain, MARKED_COMMENTS_PREFIX)) continue;
      if (!MARKED_RULE_COMMENTS.some((k) => chainMayHold(chain, k.comment))) continue;
      chain.rules.forEach((rule, i) => {
        if (rule.comment === null) return;
        const known = MARKED_RULE_COMMENTS.find((k) => rule.comment === k.comment && rule.target?.name === k.target);
        if (!known || hasMarkMatch(rule, null)) return;
        if (known.returnBefore) {
          const before = chain.rules.slice(0, i);
          // kube-proxy ≥ 1.20: `-m mark ! --mark 0x4000/0x4000 -j RETURN` first. A bare `-j RETURN` there is the same rule with its match lost.
          if (before.some((r) => r.target?.name === 'RETURN' && hasMarkMatch(r, true))) return;
        }
        out.push(`${where(table.name, rule)} ("${rule.comment}") has no -m mark --mark ${known.mark}`);
      });
    }
  }
  return out;
}

/**
 * `findChain`'s answer (src/model/iptables.ts) (the last chain of that name) without building the table's name
 * index: the header asks for two or three chains once per snapshot, and the index of a
 * kube-proxy nat table of 270,000 chains costs far more than one scan.
 */
function chainNamed(ruleset: IptablesRuleset, table: IptablesTableKey, name: string): IptablesChain | undefined {
  const chains = findTable(ruleset, table)?.chains ?? [];
  for (let i = chains.length - 1; i >= 0; i--) if (chains[i]!.name === name) return chains[i];
  return undefined;
}

/** The node runs kube-proxy's IPVS mode: its KUBE-CLUSTER-IP set exists, or nat KUBE-SERVICES matches it. */
function ipvsMode(snapshot: NodeSnapshot): boolean {
  if (snapshot.ipset?.value?.some((s) => s.name === 'KUBE-CLUSTER-IP')) return true;
  const services = snapshot.iptables?.value ? chainNamed(snapshot.iptables.value, 'nat', 'KUBE-SERVICES') : null;
  if (services && !chainMayHold(services, 'KUBE-CLUSTER-IP')) return false;
  return services?.rules.some((r) => r.matches.some((m) => m.module === 'set' && m.options.some((o) => o.values[0] === 'KUBE-CLUSTER-IP'))) ?? false;
}

/**
 * iptables mode's "has no endpoints" REJECT rules (filter KUBE-SERVICES, KUBE-EXTERNAL-SERVICES)
 * on a node in IPVS mode, as `filter CHAIN #n ("comment")`: left from before a switch of
 * modes (kubernetes#102314), they reject the Service's traffic whatever IPVS says.
 */
export function staleRejectsOnIpvs(snapshot: NodeSnapshot): string[] {
  const ipt = snapshot.iptables?.value;
  if (!ipt || !ipvsMode(snapshot)) return [];
  const out: string[] = [];
  for (const name of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES']) {
    for (const rule of chainNamed(ipt, 'filter', name)?.rules ?? []) {
      if (rule.target?.name === 'REJECT' && rule.comment?.endsWith(' has no endpoints')) out.push(`${where('filter', rule)} ("${rule.comment}")`);
    }
  }
  return out;
}

/** kube-proxy's default `sessionAffinityConfig.clientIP.timeoutSeconds` (3 hours; core/v1 DefaultClientIPServiceAffinitySeconds). */
export const DEFAULT_AFFINITY_SECONDS = 10800;

/**
 * Services with `sessionAffinity: ClientIP` whose `-m recent --rcheck --seconds N` rules (the
 * KUBE-SVC rules kube-proxy comments `ns/name:port -> endpoint`) say another time than the
 * Service's `timeoutSeconds`, as `ns/name: rules say N s, the Service M s (filter … #n)`.
 */
export function affinityTimeoutMismatches(snapshot: NodeSnapshot): string[] {
  const ipt = snapshot.iptables?.value;
  const services = snapshot.api?.value?.services ?? [];
  if (!ipt) return [];
  const want = new Map<string, number>();
  for (const svc of services) if (svc.sessionAffinity === 'ClientIP') want.set(`${svc.meta.namespace}/${svc.meta.name}`, svc.sessionAffinityTimeoutSeconds ?? DEFAULT_AFFINITY_SECONDS);
  if (want.size === 0) return [];
  const out = new Map<string, string>();
  for (const chain of ipt.tables.find((t) => t.name === 'nat')?.chains ?? []) {
    if (!chain.name.startsWith('KUBE-SVC-') && !chain.name.startsWith('KUBE-SVL-')) continue;
    if (!chainMayHold(chain, 'recent')) continue;
    for (const rule of chain.rules) {
      const key = /^([^/\s]+\/[^:\s]+)/.exec(rule.comment ?? '')?.[1];
      const expected = key === undefined ? undefined : want.get(key);
      if (expected === undefined || out.has(key!)) continue;
      const recent = rule.matches.find((m) => m.module === 'recent' && m.options.some((o) => o.name === 'rcheck' || o.name === 'update'));
      const seconds = recent?.options.find((o) => o.name === 'seconds')?.values[0];
      if (seconds === undefined || Number(seconds) === expected) continue;
      out.set(key!, `${key}: the rules say --seconds ${seconds}, the Service's timeoutSeconds is ${expected} (${where('nat', rule)})`);
    }
  }
  return [...out.values()];
}

/** `v1.8.4` from `iptables v1.8.4 (nf_tables)` or a generator's version; null when none. */
function versionOf(text: string | null | undefined): string | null {
  const m = /v?(\d+\.\d+(?:\.\d+)?)/.exec(text ?? '');
  return m ? `v${m[1]}` : null;
}

/** One note: `text` for documents, `short` for the TUI header's mode line (`key`: its translated form, when it has one). */
export interface DumpNote {
  readonly short: string;
  readonly text: string;
  readonly key?: MessageKey;
}

const notesMemo = new WeakMap<NodeSnapshot, readonly DumpNote[]>();

/**
 * The notes for `snapshot` (see the module comment), in a stable order; empty when there
 * is nothing to say. Remembered per snapshot (snapshots never change). Never throws.
 */
export function iptablesDumpNotes(snapshot: NodeSnapshot): readonly DumpNote[] {
  let memo = notesMemo.get(snapshot);
  if (!memo) {
    memo = computeNotes(snapshot);
    notesMemo.set(snapshot, memo);
  }
  return memo;
}

function computeNotes(snapshot: NodeSnapshot): DumpNote[] {
  const notes: DumpNote[] = [];
  const dumps: [string, IptablesRuleset | null | undefined][] = [
    ['iptables-save', snapshot.iptables?.value],
    ['ip6tables-save', snapshot.ip6tables?.value],
  ];
  // The warning is on stdout only when stderr was merged into it; a probe keeps it in its stderr.
  const inStderr = (id: string) => snapshot.probes.some((p) => p.id === id && p.stderrTail.includes('tables-legacy tables present'));
  const warned = dumps.filter(([id, r]) => r?.legacyTablesPresent || inStderr(id)).map(([id]) => id);
  if (warned.length > 0) {
    notes.push({ short: 'iptables-legacy tables present', text: `${warned.join(' and ')} warned "iptables-legacy tables present": rules of the legacy backend run too, and the walk reads both (iptables-legacy-save)` });
  }
  const stale = staleRejectsOnIpvs(snapshot);
  if (stale.length > 0) {
    notes.push({
      short: `${stale.length} stale iptables-mode REJECT rule${stale.length > 1 ? 's' : ''} on an IPVS node`,
      text: `IPVS mode (ipset KUBE-CLUSTER-IP), yet the filter table keeps iptables mode's REJECT rules: ${stale.slice(0, 3).join('; ')}${stale.length > 3 ? ` (and ${stale.length - 3} more)` : ''}: kube-proxy in IPVS mode neither writes nor removes them, and they still reject (kubernetes#102314)`,
    });
  }
  if (detectProxyMode(snapshot).mode === 'ipvs') {
    // KEP-5495: kube-proxy 1.35 warns at start in IPVS mode; nftables mode is the way on.
    notes.push({ short: 'IPVS deprecated (KEP-5495)', key: 'header.ipvsDeprecated', text: 'IPVS mode is deprecated since Kubernetes 1.35 (KEP-5495: kube-proxy warns when it starts in it); nftables mode is its successor' });
  }
  const affinity = affinityTimeoutMismatches(snapshot);
  if (affinity.length > 0) {
    notes.push({
      short: `${affinity.length} Service${affinity.length > 1 ? 's' : ''}: affinity --seconds ≠ timeoutSeconds`,
      text: `${affinity.slice(0, 3).join('; ')}${affinity.length > 3 ? ` (and ${affinity.length - 3} more)` : ''}: clients stick for the rules' time, not the Service's (kubernetes#35677)`,
    });
  }
  const probeVersion = versionOf(snapshot.meta.toolVersions['iptables']);
  for (const [id, ruleset] of [...dumps, ['iptables-legacy-save', snapshot.iptablesLegacy?.value] as [string, IptablesRuleset | null | undefined]]) {
    if (!ruleset) continue;
    const missing = rulesMissingTheirMark(ruleset);
    if (missing.length === 0) continue;
    const dumper = ruleset.generator ? `${ruleset.generator.tool} ${versionOf(ruleset.generator.version) ?? ruleset.generator.version}` : null;
    const versions = [dumper ? `the dump was read by ${dumper}` : null, probeVersion ? `\`iptables -V\` on the node: ${probeVersion}` : null].filter((v) => v !== null);
    notes.push({
      short: `${id}: rules lack their mark match (iptables version skew?)`,
      text: `${id}: ${missing[0]}${missing.length > 1 ? ` (and ${missing.length - 1} more)` : ''}: the dump may come from an older iptables than the one that wrote the rules (kubernetes#112477)` +
        `${versions.length ? `; ${versions.join(', ')}` : ''}; the writer's version (kube-proxy's own iptables) is not in the capture`,
    });
  }
  return notes;
}

/**
 * Rules another proxy mode left on the node (kubernetes#102314, #88698): KUBE-* chains on an
 * nftables or Cilium node, `table ip kube-proxy` on an iptables or Cilium node, and on an
 * iptables node, iptables-legacy and iptables-nft rules for the same frontend that disagree.
 * Attributed to a Service by kube-proxy's comments and chain names. Pure.
 */
import { iptablesRuleRef, serviceOfComment } from './read-iptables.js';
import { endpointKey, frontendKey, type FrontendIndex, type ProgrammedFrontend } from './frontends.js';
import type { NodeDataplane } from './dataplane.js';
import type { NodeSnapshot } from '../../model/snapshot.js';
import { said, saying } from './say.js';
import type { Evidence, Finding } from './types.js';

/** Per Service (`ns/name`), the evidence of another mode's rules for it; `''` holds what names no Service. */
export function leftoverEvidence(snapshot: NodeSnapshot, dp: NodeDataplane): Map<string, { mode: string; evidence: Evidence[] }> {
  const out = new Map<string, { mode: string; evidence: Evidence[] }>();
  const add = (service: string | null, mode: string, ev: Evidence) => {
    const k = service ?? '';
    const have = out.get(k) ?? { mode, evidence: [] };
    if (have.evidence.length < 8) have.evidence.push(ev);
    out.set(k, have);
  };
  for (const { mode, frontend } of dp.leftovers) add(frontend.service, mode, frontend.evidence[0] ?? { pane: 'rules', ref: frontendKey(frontend) });
  if (dp.dataplane !== 'iptables') {
    for (const ruleset of [snapshot.iptables?.value, snapshot.iptablesLegacy?.value]) {
      const nat = ruleset?.tables.find((t) => t.name === 'nat');
      for (const chain of nat?.chains ?? []) {
        if (!/^KUBE-(SVC|SVL|EXT|SEP)-/.test(chain.name)) continue;
        const rule = chain.rules.find((r) => r.comment);
        if (rule) add(serviceOfComment(rule.comment).service, 'iptables', iptablesRuleRef('nat', rule));
        else add(null, 'iptables', { pane: 'rules', ref: `nat ${chain.name}` });
      }
    }
  }
  return out;
}

function endpointsText(f: ProgrammedFrontend): string {
  return f.outcome === 'endpoints' ? f.endpoints.map(endpointKey).sort().join(', ') || 'no endpoint' : f.outcome;
}

/** iptables-legacy against iptables-nft for one frontend key: a finding when both hold it and they differ, or only one does. */
export function legacyDisagreement(key: string, nft: ProgrammedFrontend | undefined, legacy: FrontendIndex, port: string): Finding | null {
  const l = legacy.byKey.get(key);
  if (!l) return null;
  const a = nft ? endpointsText(nft) : said('dg.nothing');
  const b = endpointsText(l);
  if (typeof a === 'string' && a === b) return null;
  return {
    layer: 'dataplane',
    code: 'legacy-nft-disagree',
    severity: 'degraded',
    ...saying('dg.legacy', { frontend: key, nft: a, legacy: b }),
    port,
    frontend: key,
    evidence: [...(nft?.evidence.slice(0, 1) ?? []), ...l.evidence.slice(0, 1)],
  };
}

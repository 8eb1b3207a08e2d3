/**
 * Loading kube-proxy's rules into the lab's node namespace: iptables mode with
 * `iptables-restore` (the nf_tables backend), nftables mode with `nft -f`; Cilium mode
 * loads Cilium's chains and LB maps instead (cilium-mode.ts). Only one mode
 * is loaded at a time: loading first clears the node's whole netfilter ruleset
 * (`nft flush ruleset`, which also removes iptables-nft's tables), its conntrack table and
 * the instance's Cilium maps.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { ciliumRulesText, loadCiliumDataplane, removeCiliumMaps } from './cilium-mode.js';
import { nsExec, nsExecOk } from './exec.js';
import type { LabNames } from './names.js';
import { updateState, type LabMode } from './state.js';

/**
 * The exact rules text the lab loads for `mode`: iptables-restore input with the
 * built-in chain jumps kube-proxy installs separately, `--random-fully`, no nfacct (the
 * kernel here has no `xt_nfacct`, and kube-proxy then omits those rules); or the nft
 * transaction with the node's IPs as NodePort addresses; or Cilium's chains (iptables-restore input).
 */
export function labRulesText(mode: LabMode, scenario: LabScenario): string {
  if (mode === 'cilium') return ciliumRulesText(scenario);
  return mode === 'iptables'
    ? generateIptablesRestore(scenario, { includeJumpRules: true, nfacct: false, randomFully: true })
    : generateNftablesRules(scenario);
}

/** Clears the node's netfilter rules, conntrack entries and Cilium maps (no proxy mode loaded after). */
export async function clearProxyRules(names: LabNames): Promise<void> {
  await nsExecOk(names.node, ['nft', 'flush', 'ruleset']);
  await nsExec(names.node, ['conntrack', '-F']);
  removeCiliumMaps(names);
  updateState(names.stateDir, names.prefix, (s) => ({ ...s, mode: null, rulesFile: null, bpfRoot: null }));
}

/**
 * Loads `mode`'s rules into the node namespace, replacing whatever was loaded. Writes
 * the text to `<stateDir>/rules.iptables` or `rules.nft` (Cilium: `rules.cilium.iptables`,
 * plus the maps; `bpfRoot` goes to the state) and returns that path.
 * Throws {@link TransportError} when the kernel or tool rejects the rules.
 */
export async function loadProxyRules(names: LabNames, scenario: LabScenario, mode: LabMode): Promise<string> {
  await clearProxyRules(names);
  if (mode === 'cilium') {
    const cilium = await loadCiliumDataplane(names, scenario);
    updateState(names.stateDir, names.prefix, (s) => ({ ...s, mode, rulesFile: cilium.rulesFile, bpfRoot: cilium.bpfRoot }));
    return cilium.rulesFile;
  }
  const file = path.join(names.stateDir, mode === 'iptables' ? 'rules.iptables' : 'rules.nft');
  writeFileSync(file, labRulesText(mode, scenario));
  if (mode === 'iptables') await nsExecOk(names.node, ['iptables-restore', file]);
  else await nsExecOk(names.node, ['nft', '-f', file]);
  updateState(names.stateDir, names.prefix, (s) => ({ ...s, mode, rulesFile: file }));
  return file;
}

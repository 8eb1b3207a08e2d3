/**
 * Loading kube-proxy's rules into the lab's node namespace: iptables mode with
 * `iptables-restore` (the nf_tables backend), nftables mode with `nft -f`. Only one mode
 * is loaded at a time: loading first clears the node's whole netfilter ruleset
 * (`nft flush ruleset`, which also removes iptables-nft's tables) and its conntrack table.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { nsExec, nsExecOk } from './exec.js';
import type { LabNames } from './names.js';
import { updateState, type ProxyMode } from './state.js';

/**
 * The exact rules text the lab loads for `mode`: iptables-restore input with the
 * built-in chain jumps kube-proxy installs separately, `--random-fully`, no nfacct (the
 * kernel here has no `xt_nfacct`, and kube-proxy then omits those rules); or the nft
 * transaction with the node's IPs as NodePort addresses.
 */
export function labRulesText(mode: ProxyMode, scenario: LabScenario): string {
  return mode === 'iptables'
    ? generateIptablesRestore(scenario, { includeJumpRules: true, nfacct: false, randomFully: true })
    : generateNftablesRules(scenario);
}

/** Clears the node's netfilter rules and conntrack entries (no proxy mode loaded after). */
export async function clearProxyRules(names: LabNames): Promise<void> {
  await nsExecOk(names.node, ['nft', 'flush', 'ruleset']);
  await nsExec(names.node, ['conntrack', '-F']);
  updateState(names.stateDir, names.prefix, (s) => ({ ...s, mode: null, rulesFile: null }));
}

/**
 * Loads `mode`'s rules into the node namespace, replacing whatever was loaded. Writes
 * the text to `<stateDir>/rules.iptables` or `rules.nft` and returns that path.
 * Throws {@link TransportError} when the kernel or tool rejects the rules.
 */
export async function loadProxyRules(names: LabNames, scenario: LabScenario, mode: ProxyMode): Promise<string> {
  await clearProxyRules(names);
  const file = path.join(names.stateDir, mode === 'iptables' ? 'rules.iptables' : 'rules.nft');
  writeFileSync(file, labRulesText(mode, scenario));
  if (mode === 'iptables') await nsExecOk(names.node, ['iptables-restore', file]);
  else await nsExecOk(names.node, ['nft', '-f', file]);
  updateState(names.stateDir, names.prefix, (s) => ({ ...s, mode, rulesFile: file }));
  return file;
}

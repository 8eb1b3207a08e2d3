/**
 * The iptables walk reads a chain rule by rule (src/trace/iptables-eval.ts through
 * src/model/iptables-facts.ts `chainRuleAt`): on `trace`'s lazily parsed ruleset
 * (src/cli/trace-load.ts) a walk that leaves kube-proxy's KUBE-SERVICES at its first rules
 * parses only those. The documents (text and JSON) are those of the whole load (the
 * reference: `loadOnce`, every chain parsed in one pass) for every Service port of
 * lab-iptables and of a generated capture, NodePorts, an address no Service has, ICMP, and
 * every position of KUBE-SERVICES' rules (first, middle, last); and the work is counted:
 * after a walk to the first rule's Service, KUBE-SERVICES is still not parsed whole.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { loadOnce } from '../../src/cli/load.js';
import type { GlobalOptions } from '../../src/cli/options.js';
import { loadForTrace } from '../../src/cli/trace-load.js';
import { chainLineFacts } from '../../src/model/iptables-facts.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { fixtureDir, tempDirs } from '../helpers/fixtures.js';
import { traceDestinations } from '../helpers/trace-destinations.js';

const tmpDir = tempDirs('rule-by-rule');

const optionsOf = (dir: string, to?: string) => ({ replay: dir, interval: 2, ...(to !== undefined ? { to } : {}) }) as unknown as GlobalOptions & { to?: string };

/** The `ADDR:PORT/proto` of KUBE-SERVICES' `-d ADDR/32 -p P … --dport N` rules, in rule order. */
function servicesRuleDestinations(dir: string): string[] {
  const text = readFileSync(path.join(dir, 'probes', 'iptables-save.stdout'), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(?:\[[0-9]+:[0-9]+\] )?-A KUBE-SERVICES -d ([0-9.]+)\/32 -p (tcp|udp|sctp) .*--dport ([0-9]+) /gm)) out.push(`${m[1]}:${m[3]}/${m[2]}`);
  return out;
}

function servicesChain(snapshot: NodeSnapshot) {
  return snapshot.iptables!.value!.tables.find((t) => t.name === 'nat')!.chains.find((c) => c.name === 'KUBE-SERVICES')!;
}

describe('the iptables walk reads chains rule by rule', () => {
  const generated = () => {
    const dir = tmpDir();
    writeGeneratedBundles(dir, { services: 90, endpoints: 2, seed: 'rule-by-rule', modes: ['iptables'], conntrack: 200 });
    return path.join(dir, 'iptables');
  };

  it.each([
    ['lab-iptables', () => fixtureDir('lab-iptables'), 1000],
    ['a generated iptables capture', generated, 12],
  ])('%s: the documents of the whole load', async (_name, dirOf, services) => {
    const dir = dirOf();
    const { snapshot: whole } = await loadOnce(optionsOf(dir));
    const inRules = servicesRuleDestinations(dir);
    expect(inRules.length).toBeGreaterThanOrEqual(3);
    const picks = [inRules[0]!, inRules[Math.floor(inRules.length / 2)]!, inRules[inRules.length - 1]!];
    const destinations = [...new Set([...traceDestinations(dir, services), ...picks])];
    for (const to of destinations) {
      for (const output of ['json', 'text'] as const) {
        const from = '10.244.1.7';
        const { snapshot: lean, args } = await loadForTrace(optionsOf(dir, to), () => ({ from, to, output }));
        expect(runTraceCommand(lean, args), `${to} ${output}`).toBe(runTraceCommand(whole, { from, to, output }));
      }
    }
  });

  it('a walk to the Service of KUBE-SERVICES’ first rule leaves the rest of the chain unparsed', async () => {
    const dir = generated();
    const to = servicesRuleDestinations(dir)[0]!;
    const { snapshot: whole } = await loadOnce(optionsOf(dir));
    const { snapshot: lean, args } = await loadForTrace(optionsOf(dir, to), () => ({ from: '10.244.1.7', to, output: 'json' }));
    const doc = runTraceCommand(lean, args);
    expect(doc).toContain('"chain": "KUBE-SERVICES"');
    const facts = chainLineFacts(servicesChain(lean));
    expect(facts?.ruleCount).toBe(servicesChain(whole).rules.length);
    // Reading it whole now gives the whole load's chain, and the same document.
    expect(servicesChain(lean).rules).toEqual(servicesChain(whole).rules);
    expect(chainLineFacts(servicesChain(lean))).toBeUndefined();
    expect(doc).toBe(runTraceCommand(whole, { from: '10.244.1.7', to, output: 'json' }));
  });
});

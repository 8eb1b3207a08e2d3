/**
 * `npm run lab -- <command>`: the node lab from the command line (compiled to
 * dist/test/lab/cli.js).
 *
 *   up [iptables|nftables|cilium]     build the lab (tears down an older one of the same prefix)
 *   mode <iptables|nftables>          switch the loaded proxy mode of a running lab (not cilium)
 *   down                              remove namespaces, processes, maps and state (and bin/ with the last instance)
 *   status                            what exists of the lab
 *   rules <iptables|nftables|cilium>  print the rules text the lab loads (no root needed)
 *   traffic http URL [-n N] [--from POD]      HTTP from a pod namespace (default: client)
 *   traffic dns NAME [--server IP] [--type T] [--tcp] [--from POD]
 *
 * Every command takes `--prefix` (default `ns-`). Root is required except for `rules`.
 */
import { Command, Option } from 'commander';
import { LabError } from './lab-error.js';
import {
  DEFAULT_PREFIX,
  LAB_CILIUM_SCENARIO,
  LAB_SCENARIO,
  dnsQuery,
  httpProbe,
  labDown,
  labNames,
  labRulesText,
  labStatus,
  labSwitchMode,
  labUp,
  requireRoot,
  sendHttp,
  type LabMode,
} from './lab.js';

const MODES: readonly LabMode[] = ['iptables', 'nftables', 'cilium'];

function parseMode(text: string | undefined): LabMode {
  const mode = (text ?? 'iptables') as LabMode;
  if (!MODES.includes(mode)) throw new LabError(`unknown mode ${JSON.stringify(text)}`, `use one of: ${MODES.join(', ')}`);
  return mode;
}

function nsOf(prefix: string, from: string): string {
  const names = labNames(prefix);
  if (from === 'outside') return names.outside;
  if (from === 'node') return names.node;
  const ns = names.pods[from] ?? Object.values(names.nodes).find((n) => n === from);
  if (ns === undefined) {
    throw new LabError(`unknown source ${JSON.stringify(from)}`, `use outside, node or a pod: ${Object.keys(names.pods).join(', ')}`);
  }
  return ns;
}

const program = new Command('lab').description('nodescope node lab (network namespaces, real kernel)');
const prefixOption = new Option('--prefix <prefix>', 'namespace name prefix').default(DEFAULT_PREFIX);

program
  .command('up')
  .argument('[mode]', 'iptables, nftables or cilium', 'iptables')
  .addOption(prefixOption)
  .action(async (modeText: string, opts: { prefix: string }) => {
    const lab = await labUp(parseMode(modeText), { prefix: opts.prefix });
    console.log(`lab up (${lab.mode}), prefix ${lab.names.prefix}`);
    console.log(`  node namespace:  ${lab.names.node}   outside: ${lab.names.outside}`);
    console.log(`  pods:            ${Object.entries(lab.names.pods).map(([k, ns]) => `${k}=${ns}`).join(' ')}`);
    console.log(`  rules loaded:    ${lab.rulesFile}`);
    if (lab.bpfRoot) console.log(`  LB maps pinned:  ${lab.bpfRoot}   (nodescope --netns ${lab.names.node} --bpf-root ${lab.bpfRoot})`);
    console.log(`  API objects:     ${lab.apiObjectsPath}`);
    if (lab.mode !== 'cilium') console.log(`  try: npm run lab -- traffic http http://10.96.12.34/ -n 10`);
  });

program
  .command('mode')
  .argument('<mode>', 'iptables or nftables')
  .addOption(prefixOption)
  .action(async (modeText: string, opts: { prefix: string }) => {
    const lab = await labSwitchMode(parseMode(modeText), { prefix: opts.prefix });
    console.log(`loaded ${lab.mode} rules: ${lab.rulesFile}`);
  });

program
  .command('down')
  .addOption(prefixOption)
  .action(async (opts: { prefix: string }) => {
    const r = await labDown({ prefix: opts.prefix });
    console.log(r.namespaces.length === 0 ? 'nothing was up' : `removed ${r.namespaces.length} namespaces: ${r.namespaces.join(' ')}`);
  });

program
  .command('status')
  .addOption(prefixOption)
  .action(async (opts: { prefix: string }) => {
    requireRoot();
    const s = await labStatus({ prefix: opts.prefix });
    console.log(`prefix ${s.prefix}  state ${s.stateDir}  mode ${s.mode ?? '-'}`);
    console.log(`namespaces up: ${s.namespaces.join(' ') || '-'}`);
    if (s.missingNamespaces.length > 0 && s.namespaces.length > 0) console.log(`namespaces missing: ${s.missingNamespaces.join(' ')}`);
    for (const p of s.processes) console.log(`  ${p.alive ? 'running' : 'dead   '} ${p.key} pid ${p.pid} in ${p.ns}`);
    if (s.apiObjects) console.log(`API objects: ${s.apiObjects}`);
    if (s.rulesFile) console.log(`rules: ${s.rulesFile}`);
  });

program
  .command('rules')
  .argument('<mode>', 'iptables, nftables or cilium')
  .action((modeText: string) => {
    const mode = parseMode(modeText);
    process.stdout.write(labRulesText(mode, mode === 'cilium' ? LAB_CILIUM_SCENARIO : LAB_SCENARIO));
  });

const traffic = program.command('traffic').description('send real traffic inside the lab');
traffic
  .command('http')
  .argument('<url>')
  .option('-n, --count <n>', 'number of requests (each on a new connection)', '1')
  .option('--from <source>', 'pod key, node or outside', 'client')
  .addOption(prefixOption)
  .action(async (url: string, opts: { count: string; from: string; prefix: string }) => {
    requireRoot();
    const ns = nsOf(opts.prefix, opts.from);
    const n = Number(opts.count);
    if (n <= 1) {
      const p = await httpProbe(ns, url);
      if (p.exitCode === 0) process.stdout.write(p.body);
      else console.log(`curl exit ${p.exitCode} after ${p.durationMs} ms: ${p.stderr.trim()}`);
      return;
    }
    const tally = await sendHttp(ns, url, n);
    for (const [body, count] of Object.entries(tally.byBody).sort()) console.log(`${String(count).padStart(5)}  ${body}`);
    if (tally.failures > 0) console.log(`${String(tally.failures).padStart(5)}  (failed)`);
  });
traffic
  .command('dns')
  .argument('<name>')
  .option('--server <ip>', 'DNS server', '10.96.0.10')
  .option('--type <type>', 'record type', 'A')
  .option('--tcp', 'use TCP', false)
  .option('--from <source>', 'pod key, node or outside', 'client')
  .addOption(prefixOption)
  .action(async (name: string, opts: { server: string; type: string; tcp: boolean; from: string; prefix: string }) => {
    requireRoot();
    const reply = await dnsQuery(nsOf(opts.prefix, opts.from), name, opts.server, {
      type: opts.type as 'A',
      tcp: opts.tcp,
    });
    console.log(`${reply.rcode} from ${reply.from} in ${reply.durationMs} ms`);
    for (const a of reply.answers) console.log(`${a.name}\t${a.ttl}\tIN\t${a.type}\t${a.data}`);
  });

program.parseAsync(process.argv).catch((e: unknown) => {
  if (e instanceof LabError) {
    console.error(`lab: ${e.message}${e.hint ? `\n  hint: ${e.hint}` : ''}`);
    process.exit(2);
  }
  console.error(`lab: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});

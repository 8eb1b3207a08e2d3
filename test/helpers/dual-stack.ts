/**
 * A dual-stack capture: the iptables lab bundle with `default/web` and `kube-system/kube-dns`
 * made dual-stack (PreferDualStack, IPv4 first) — the API objects, the IPv4 rules and the IPv6
 * proxier's ip6tables rules written by nodescope's generators as kube-proxy would, and the
 * conntrack table with IPv6 flows beside the IPv4 ones — rewritten into a copy of the bundle
 * (manifest checksums updated) and read through the real replay pipeline. The Cilium variant
 * holds lb4 and lb6 maps encoded from what the agent would write.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expectCiliumTable, type CiliumAgentOptions } from '../../src/analysis/cilium-expected.js';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import type { KubeProxyInput, LabScenario, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import type { LbTable } from '../../src/model/cilium.js';
import { encodeLbTable } from '../../src/parsers/bpftool-lb-encode.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { bpftoolJson } from '../unit/cilium-builders.js';
import { copyFixture } from './fixtures.js';

const WEB = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const DNS = LAB_SCENARIO.services.find((s) => s.name === 'kube-dns')!;

/** The IPv6 twin of an IPv4 address of the lab (`10.244.0.23` → `fd00:10:244::23`, `10.244.1.15` → `fd00:10:244:1::15`). */
export function v6Of(ip: string): string {
  const [, , third, fourth] = ip.split('.');
  return third === '0' ? `fd00:10:244::${fourth}` : `fd00:10:244:${third}::${fourth}`;
}

function twin(svc: ScenarioService, clusterIP: string): ScenarioService {
  return { ...svc, clusterIP, endpoints: svc.endpoints.map((e) => ({ ...e, ip: v6Of(e.ip) })) };
}

/** The IPv6 proxier's view: web and kube-dns with IPv6 ClusterIPs and the twins of their endpoints. */
export const DUAL_STACK_V6: KubeProxyInput = {
  nodeName: LAB_SCENARIO.nodeName,
  family: 'IPv6',
  nodeIPs: ['fd00:192:168:49::2'],
  clusterCIDR: 'fd00:10:244::/56',
  serviceCIDRs: ['fd00:10:96::/112'],
  services: [twin(WEB, 'fd00:10:96::1234'), twin(DNS, 'fd00:10:96::a')],
};

/** IPv6 flows: a client's HTTP connection to web's IPv6 ClusterIP and a DNS question to kube-dns's. */
export const DUAL_STACK_FLOWS = [
  'ipv6     10 tcp      6 86397 ESTABLISHED src=fd00:10:244::9 dst=fd00:10:96::1234 sport=41000 dport=80 packets=3 bytes=200 src=fd00:10:244::23 dst=fd00:10:244::9 sport=8080 dport=41000 packets=2 bytes=160 [ASSURED] mark=0 use=1',
  'ipv6     10 udp      17 28 src=fd00:10:244::9 dst=fd00:10:96::a sport=53000 dport=53 packets=1 bytes=80 src=fd00:10:244::2 dst=fd00:10:244::9 sport=53 dport=53000 packets=1 bytes=120 mark=0 use=1',
];

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

interface RouteJson {
  readonly dst?: string;
  readonly dev?: string;
  readonly gateway?: string;
  readonly scope?: string;
  readonly table?: string;
}

/**
 * The node's IPv6 routes as `ip -6 -j route show table all` prints them: one per local pod
 * (the twins of the IPv4 `/32` cali routes), node2's pods through node2, a default route.
 */
function v6Routes(v4Json: string): string {
  const v4 = JSON.parse(v4Json) as RouteJson[];
  const pods = v4.filter((r) => r.dst?.startsWith('10.244.0.') && r.dev?.startsWith('cali') && r.table === undefined);
  const routes = [
    ...pods.map((r) => ({ dst: v6Of(r.dst!), dev: r.dev, protocol: 'boot', metric: 1024, flags: [], pref: 'medium' })),
    { dst: 'fd00:10:244:1::/64', gateway: 'fd00:192:168:49::3', dev: 'eth0', protocol: 'boot', metric: 1024, flags: [], pref: 'medium' },
    { dst: 'fd00:192:168:49::/64', dev: 'eth0', protocol: 'kernel', metric: 256, flags: [], pref: 'medium' },
    { dst: 'default', gateway: 'fd00:192:168:49::1', dev: 'eth0', protocol: 'boot', metric: 1024, flags: [], pref: 'medium' },
    { type: 'local', dst: 'fd00:192:168:49::2', table: 'local', dev: 'eth0', protocol: 'kernel', metric: 0, flags: [], pref: 'medium' },
  ];
  return JSON.stringify(routes);
}

/** Adds probe `id` (a copy of `like`'s manifest entry with `argv`) whose stdout is `text`. */
function addProbe(dir: string, like: string, id: string, argv: readonly string[], text: string): void {
  const manifestFile = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { probes: { id: string; argv: string[]; executedArgv?: string[]; stdoutFile?: string; stderrFile?: string; sha256?: { stdout: string; stderr: string } }[] };
  const model = manifest.probes.find((p) => p.id === like)!;
  const stdoutFile = `probes/${id}.stdout`;
  writeFileSync(path.join(dir, stdoutFile), text);
  manifest.probes.push({ ...model, id, argv: [...argv], executedArgv: [...(model.executedArgv ?? []).slice(0, 4), ...argv], stdoutFile, sha256: { stdout: sha256(text), stderr: model.sha256?.stderr ?? sha256('') } });
  writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Rewrites files of a bundle copy and their checksums in its manifest. */
function rewrite(dir: string, files: Readonly<Record<string, string>>): void {
  const manifestFile = path.join(dir, 'manifest.json');
  let manifest = readFileSync(manifestFile, 'utf8');
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(dir, rel);
    const old = sha256(readFileSync(file, 'utf8'));
    writeFileSync(file, text);
    manifest = manifest.split(old).join(sha256(text));
  }
  writeFileSync(manifestFile, manifest);
}

/** A copy of the iptables lab bundle made dual-stack (see the module comment); returns its directory. */
export function dualStackIptablesCapture(scenario: LabScenario = LAB_SCENARIO): string {
  const dir = copyFixture('lab-iptables');
  const conntrack = readFileSync(path.join(dir, 'probes', 'conntrack.stdout'), 'utf8');
  rewrite(dir, {
    'api.json': apiObjectsText(scenario, DUAL_STACK_V6),
    'probes/iptables-save.stdout': generateIptablesRestore(scenario, { nfacct: false, randomFully: true, includeJumpRules: true }),
    'probes/ip6tables-save.stdout': generateIptablesRestore(DUAL_STACK_V6, { nfacct: false, randomFully: true, includeJumpRules: true }),
    'probes/conntrack.stdout': `${conntrack.trimEnd()}\n${DUAL_STACK_FLOWS.join('\n')}\n`,
  });
  addProbe(dir, 'ip-route', 'ip6-route', ['ip', '-6', '-j', 'route', 'show', 'table', 'all'], v6Routes(readFileSync(path.join(dir, 'probes', 'ip-route.stdout'), 'utf8')));
  return dir;
}

/** Each family's table side by side as the agent keeps lb4 and lb6, ids renumbered so they do not clash; `options`: the agent's options (src/analysis/cilium-expected.ts). */
export function dualStackLbTable(inputs: readonly KubeProxyInput[], options: CiliumAgentOptions = {}): LbTable {
  let idBase = 0;
  const services: LbTable['services'][number][] = [];
  const backends: LbTable['backends'][number][] = [];
  inputs.forEach((input, i) => {
    const t = expectCiliumTable(input, options).table;
    const beId = (id: number | null) => (id ?? 0) + i * 1000;
    const own = new Map(t.backends.map((b) => [b.id, { ...b, id: beId(b.id) }]));
    backends.push(...own.values());
    services.push(...t.services.map((x) => ({ ...x, id: (x.id ?? 0) + idBase, slots: x.slots.map((sl) => ({ ...sl, backendId: beId(sl.backendId), backend: own.get(sl.backendId ?? -1) ?? null })) })));
    idBase += t.revNats.length;
  });
  return { source: 'bpf-maps', services, backends, revNats: services.map((x) => ({ id: x.id!, ip: x.frontend.ip, port: x.frontend.port })) };
}

/** A copy of the Cilium lab bundle with dual-stack API objects and lb4 + lb6 maps as the agent would write them. */
export function dualStackCiliumCapture(v4: KubeProxyInput, scenario: LabScenario): string {
  const dir = copyFixture('lab-cilium');
  const maps = encodeLbTable(dualStackLbTable([v4, DUAL_STACK_V6]));
  const file = (name: string) => `probes/bpf-${name.replace('cilium_', '').replace('_services_v2', '-services').replace('_backends_v3', '-backends').replace('_reverse_nat', '-reverse-nat')}.stdout`;
  rewrite(dir, {
    'api.json': apiObjectsText(scenario, DUAL_STACK_V6),
    ...Object.fromEntries(maps.map((m) => [file(m.name), bpftoolJson(m.entries)])),
  });
  return dir;
}

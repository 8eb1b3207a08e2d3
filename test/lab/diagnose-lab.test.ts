/**
 * `diagnoseSnapshot` on the real kernel (issue 17, "What must show"): kube-proxy's rules as the
 * project's generators write them, loaded into a network namespace of its own with
 * iptables-nft-restore / iptables-legacy-restore / nft -f, read back through nodescope's own
 * probes (LocalTransport in the namespace, as `nodescope --netns` reads a node). A healthy node
 * gives `ok` for every Service with endpoints; each break, made with iptables, nft or conntrack
 * on the kernel, gives a finding naming the right Service, frontend and endpoint, and no other
 * Service changes verdict.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnoseSnapshot, type Diagnosis } from '../../src/analysis/diagnose/index.js';
import { generateIptablesRestore } from '../../src/analysis/kubeproxy-iptables.js';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { loadSnapshot } from '../../src/collect/session.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { LocalTransport } from '../../src/sources/local.js';
import { RICH_SCENARIO, withService } from '../helpers/diagnose-scenario.js';
import { labAvailable } from '../helpers/lab.js';
import { apiObjectsText } from './api-objects.js';
import { nsExec, nsExecOk, run, runOk } from './exec.js';
import { createLabCiliumMaps, dumpLabCiliumMap, removeLabCiliumMaps } from './cilium-maps.js';
import { labCiliumTable } from './cilium-scenario.js';
import { decodeCiliumLbMaps } from '../../src/parsers/bpftool-lb-decode.js';
import type { LbTable } from '../../src/model/cilium.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { diagnoseOptionsOf } from '../../src/report/diagnose.js';
import { httpProbe } from './traffic.js';

const PREFIX = 'nsdg-';
const NS = `${PREFIX}node`;
const canRun = labAvailable(['ip', 'iptables-nft-restore', 'iptables-legacy-restore', 'iptables-nft', 'nft', 'conntrack']);

const rulesText = (s: LabScenario) => generateIptablesRestore(s, { includeJumpRules: true, nfacct: false, randomFully: true });

/** The namespace read as a node (named lab-node, the scenario's node) with `api`'s objects; `from`: walk every frontend from this client too. */
async function diagnose(api: LabScenario = RICH_SCENARIO, from?: string): Promise<Diagnosis> {
  const read: NodeSnapshot = (await loadSnapshot({ transport: new LocalTransport({ netns: NS }), live: true })).snapshot;
  const objects = parseK8sObjects(apiObjectsText(api), 'api').value;
  const snap: NodeSnapshot = { ...read, meta: { ...read.meta, node: 'lab-node' }, api: { value: objects, diagnostics: [], probe: null, error: null } };
  return diagnoseSnapshot(snap, undefined, from === undefined ? {} : diagnoseOptionsOf(snap, { from }).options);
}

const verdicts = (d: Diagnosis) => Object.fromEntries(d.services.map((s) => [`${s.namespace}/${s.name}`, s.verdict]));
const findings = (d: Diagnosis, ref: string) => d.services.find((s) => `${s.namespace}/${s.name}` === ref)?.findings ?? [];
const changed = (d: Diagnosis, healthy: Diagnosis) => Object.entries(verdicts(d)).filter(([k, v]) => verdicts(healthy)[k] !== v).map(([k]) => k);

async function reset(): Promise<void> {
  await run(['ip', 'netns', 'del', NS]);
  await run(['ip', 'netns', 'add', NS]).then((r) => expect(r.exitCode).toBe(0));
  await nsExecOk(NS, ['ip', 'link', 'set', 'lo', 'up']);
}

async function natRuleNumber(chain: string, match: RegExp): Promise<number> {
  const out = (await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-S', chain])).stdout.split('\n').filter((l) => l.startsWith('-A '));
  const i = out.findIndex((l) => match.test(l));
  expect(i, out.join('\n')).toBeGreaterThanOrEqual(0);
  return i + 1;
}

async function chainOf(match: RegExp): Promise<string> {
  const save = (await nsExecOk(NS, ['iptables-nft-save', '-t', 'nat'])).stdout;
  const m = match.exec(save);
  expect(m, save).not.toBeNull();
  return m![1]!;
}

describe.skipIf(!canRun)('diagnose on the real kernel: iptables mode', () => {
  let healthy: Diagnosis;
  beforeAll(async () => {
    await reset();
    await nsExecOk(NS, ['iptables-nft-restore'], { input: rulesText(RICH_SCENARIO) });
    healthy = await diagnose();
  }, 60_000);
  afterAll(async () => {
    if (canRun) await run(['ip', 'netns', 'del', NS]);
  });

  it('healthy: ok for every Service with endpoints; default/empty broken by its endpoints', () => {
    expect(healthy.header.dataplane).toBe('iptables');
    const v = verdicts(healthy);
    for (const ref of ['default/web', 'default/web-local', 'default/remote-local', 'default/sticky', 'default/ext', 'kube-system/kube-dns']) expect([ref, v[ref]]).toEqual([ref, 'ok']);
    expect(v['default/empty']).toBe('broken');
  });

  it('a slice endpoint the node lacks (API changed, node not synced): endpoint-missing on web, nothing else changes', async () => {
    const api = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: [...s.endpoints, { ip: '10.244.0.40', nodeName: 'lab-node', ready: true, serving: true, terminating: false }] }));
    const d = await diagnose(api);
    expect(findings(d, 'default/web').filter((f) => f.code === 'endpoint-missing').map((f) => [f.frontend, f.endpoint])).toEqual([['10.96.12.34:80/TCP', '10.244.0.40:8080'], ['*:30080/TCP', '10.244.0.40:8080']]);
    expect(changed(d, healthy)).toEqual(['default/web']);
  }, 60_000);

  it('a wrong DNAT port (iptables -R on the kernel): wrong-target-port on kube-dns UDP, its rule quoted', async () => {
    const sep = await chainOf(/-A (KUBE-SEP-\S+) .*-p udp .*--to-destination 10\.244\.0\.2:53/);
    const n = await natRuleNumber(sep, /DNAT/);
    await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-R', sep, String(n), '-p', 'udp', '-m', 'comment', '--comment', 'kube-system/kube-dns:dns', '-m', 'udp', '-j', 'DNAT', '--to-destination', '10.244.0.2:5353']);
    const d = await diagnose();
    const f = findings(d, 'kube-system/kube-dns').filter((x) => x.code === 'wrong-target-port');
    expect(f.map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.0.10:53/UDP', '10.244.0.2:53']]);
    expect(f[0]!.evidence[0]!.text).toContain('10.244.0.2:5353');
    expect(changed(d, healthy)).toEqual(['kube-system/kube-dns']);
    await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-R', sep, String(n), '-p', 'udp', '-m', 'comment', '--comment', 'kube-system/kube-dns:dns', '-m', 'udp', '-j', 'DNAT', '--to-destination', '10.244.0.2:53']);
  }, 60_000);

  it('an extra endpoint rule for an address in no slice: endpoint-extra on sticky naming "unknown address"', async () => {
    const svc = await chainOf(/-A KUBE-SERVICES .*default\/sticky:http cluster IP.* -j (KUBE-SVC-\S+)/);
    await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-N', 'KUBE-SEP-DIAGEXTRA00000']);
    await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-A', 'KUBE-SEP-DIAGEXTRA00000', '-p', 'tcp', '-m', 'tcp', '-j', 'DNAT', '--to-destination', '10.244.0.99:8080']);
    const first = await natRuleNumber(svc, /-m statistic/);
    await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-I', svc, String(first), '-m', 'statistic', '--mode', 'random', '--probability', '0.25', '-j', 'KUBE-SEP-DIAGEXTRA00000']);
    const d = await diagnose();
    const f = findings(d, 'default/sticky').filter((x) => x.code === 'endpoint-extra');
    expect(f.map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.12.42:80/TCP', '10.244.0.99:8080']]);
    expect(f[0]!.message).toContain('unknown address');
    expect(changed(d, healthy)).toEqual(['default/sticky']);
    await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-D', svc, String(first)]);
  }, 60_000);

  it('a deleted endpoint rule (iptables -D): endpoint-missing and the uneven cascade on web', async () => {
    const svc = await chainOf(/-A KUBE-SERVICES .*default\/web:http cluster IP.* -j (KUBE-SVC-\S+)/);
    const n = await natRuleNumber(svc, /10\.244\.0\.31:8080/);
    await nsExecOk(NS, ['iptables-nft', '-t', 'nat', '-D', svc, String(n)]);
    const d = await diagnose();
    const f = findings(d, 'default/web');
    expect(f.filter((x) => x.code === 'endpoint-missing').map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.12.34:80/TCP', '10.244.0.31:8080'], ['*:30080/TCP', '10.244.0.31:8080']]);
    expect(f.some((x) => x.code === 'wrong-weights')).toBe(true);
    expect(changed(d, healthy)).toEqual(['default/web']);
  }, 60_000);

  it('legacy and nft rules that disagree (iptables-legacy-restore of an older web): legacy-nft-disagree on web only', async () => {
    const old = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.slice(0, 1) }));
    await nsExecOk(NS, ['iptables-legacy-restore'], { input: rulesText({ ...old, services: old.services.filter((s) => s.name === 'web') }) });
    const d = await diagnose();
    const f = findings(d, 'default/web').filter((x) => x.code === 'legacy-nft-disagree');
    expect(f.map((x) => x.frontend)).toEqual(['10.96.12.34:80/TCP', '*:30080/TCP']);
    expect(changed(d, healthy)).toEqual(['default/web']);
    await nsExec(NS, ['iptables-legacy', '-t', 'nat', '-F']);
    await nsExec(NS, ['iptables-legacy', '-t', 'nat', '-X']);
    await nsExec(NS, ['iptables-legacy', '-t', 'filter', '-F']);
    await nsExec(NS, ['iptables-legacy', '-t', 'filter', '-X']);
  }, 60_000);

  it('a stale conntrack entry after a Pod swap (conntrack -I on the kernel): kube-dns, its UDP frontend and the old endpoint, with the conntrack -D command', async () => {
    const swap = withService(RICH_SCENARIO, 'kube-dns', (s) => ({ ...s, endpoints: s.endpoints.map((e) => (e.ip === '10.244.0.2' ? { ...e, ip: '10.244.0.4' } : e)) }));
    await reset();
    await nsExecOk(NS, ['iptables-nft-restore'], { input: rulesText(swap) });
    await nsExecOk(NS, ['conntrack', '-I', '-p', 'udp', '-s', '10.244.0.9', '-d', '10.96.0.10', '--sport', '40000', '--dport', '53', '-r', '10.244.0.2', '-q', '10.244.0.9', '--reply-port-src', '53', '--reply-port-dst', '40000', '-t', '120', '-u', 'SEEN_REPLY']);
    const d = await diagnose(swap);
    const f = findings(d, 'kube-system/kube-dns').filter((x) => x.layer === 'conntrack');
    expect(f.map((x) => [x.code, x.frontend, x.endpoint])).toEqual([['conntrack-stale-endpoint', '10.96.0.10:53/UDP', '10.244.0.2:53']]);
    expect(f[0]!.message).toContain('conntrack -D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53 --dst-nat 10.244.0.2');
    expect(d.services.filter((s) => s.name !== 'kube-dns' && s.verdict !== verdicts(healthy)[`${s.namespace}/${s.name}`])).toEqual([]);
  }, 60_000);
});

const CLIENT_NS = `${PREFIX}client`;
const OUTSIDE_NS = `${PREFIX}outside`;
const WEB = RICH_SCENARIO.services.find((s) => s.name === 'web')!;
/** RICH_SCENARIO plus an iTP=Local Service whose only endpoint is on lab-node2. */
const WITH_ITP: LabScenario = {
  ...RICH_SCENARIO,
  services: [...RICH_SCENARIO.services, { ...WEB, name: 'remote-internal', type: 'ClusterIP', clusterIP: '10.96.12.44', internalTrafficPolicy: 'Local', ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }], endpoints: WEB.endpoints.filter((e) => e.nodeName !== 'lab-node') }],
};

/** The node's uplink (192.168.49.2/24 on a veth to the outside host .1, the default route) and the client Pod 10.244.0.9 on a veth, Calico style (test/lab/topology.ts). */
async function nodeWithClient(): Promise<void> {
  await reset();
  for (const ns of [CLIENT_NS, OUTSIDE_NS]) {
    await run(['ip', 'netns', 'del', ns]);
    await runOk(['ip', 'netns', 'add', ns]);
  }
  await nsExecOk(NS, ['ip', 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', OUTSIDE_NS]);
  await nsExecOk(OUTSIDE_NS, ['ip', 'addr', 'add', '192.168.49.1/24', 'dev', 'eth0']);
  await nsExecOk(OUTSIDE_NS, ['ip', 'link', 'set', 'eth0', 'up']);
  await nsExecOk(NS, ['ip', 'addr', 'add', '192.168.49.2/24', 'dev', 'eth0']);
  await nsExecOk(NS, ['ip', 'link', 'set', 'eth0', 'up']);
  await nsExecOk(NS, ['ip', 'route', 'add', 'default', 'via', '192.168.49.1', 'dev', 'eth0']);
  await nsExecOk(NS, ['ip', 'link', 'add', 'calidiagclient', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', CLIENT_NS]);
  await nsExecOk(NS, ['ip', 'link', 'set', 'calidiagclient', 'up']);
  await nsExecOk(NS, ['sysctl', '-q', '-w', 'net.ipv4.ip_forward=1', 'net.ipv4.conf.calidiagclient.proxy_arp=1']);
  await nsExecOk(NS, ['ip', 'route', 'add', '10.244.0.9/32', 'dev', 'calidiagclient', 'scope', 'link']);
  await nsExecOk(CLIENT_NS, ['ip', 'link', 'set', 'lo', 'up']);
  await nsExecOk(CLIENT_NS, ['ip', 'addr', 'add', '10.244.0.9/32', 'dev', 'eth0']);
  await nsExecOk(CLIENT_NS, ['ip', 'link', 'set', 'eth0', 'up']);
  await nsExecOk(CLIENT_NS, ['ip', 'route', 'add', '169.254.1.1', 'dev', 'eth0', 'scope', 'link']);
  await nsExecOk(CLIENT_NS, ['ip', 'route', 'add', 'default', 'via', '169.254.1.1', 'dev', 'eth0']);
}

/** Packets counted by the rule of filter/`chain` whose text has `comment`. */
async function filterRuleCount(chain: string, comment: string): Promise<number> {
  const out = (await nsExecOk(NS, ['iptables-nft', '-t', 'filter', '-L', chain, '-v', '-n', '-x'])).stdout.split('\n');
  const line = out.find((l) => l.includes(comment));
  expect(line, out.join('\n')).toBeDefined();
  return Number(line!.trim().split(/\s+/)[0]);
}

describe.skipIf(!canRun)('diagnose --from on the real kernel: a client Pod on an iptables node', () => {
  beforeAll(async () => {
    await nodeWithClient();
    await nsExecOk(NS, ['iptables-nft-restore'], { input: rulesText(WITH_ITP) });
  }, 60_000);
  afterAll(async () => {
    if (canRun) for (const ns of [CLIENT_NS, OUTSIDE_NS, NS]) await run(['ip', 'netns', 'del', ns]);
  });

  it('iTP=Local with no local endpoint: from default/client the ClusterIP is dropped by the rule the kernel counts; kube-dns reaches its endpoints; nothing else changes verdict', async () => {
    const healthy = await diagnose(WITH_ITP);
    const d = await diagnose(WITH_ITP, 'default/client');
    const f = findings(d, 'default/remote-internal').filter((x) => x.code.startsWith('from-'));
    expect(f.map((x) => [x.code, x.severity, x.frontend])).toEqual([['from-blocked', 'broken', '10.96.12.44:80/TCP']]);
    expect(f[0]!.message).toBe('from default/client: ClusterIP 10.96.12.44:80/TCP → dropped by filter KUBE-SERVICES #2');
    expect(f[0]!.evidence[0]!.text).toContain('default/remote-internal:http has no local endpoints');
    const dns = findings(d, 'kube-system/kube-dns').filter((x) => x.code.startsWith('from-'));
    expect(dns.map((x) => [x.code, x.frontend])).toEqual([['from-reaches', '10.96.0.10:53/UDP'], ['from-reaches', '10.96.0.10:53/TCP']]);
    // A live source reads the xt_recent lists (empty here), so sticky's affinity rules are decided too.
    expect(findings(d, 'default/sticky').filter((x) => x.code.startsWith('from-')).map((x) => x.code)).toEqual(['from-reaches']);
    expect(changed(d, healthy)).toEqual([]);
    // The kernel agrees: a real connection from the client Pod is counted by that DROP rule and times out.
    const before = await filterRuleCount('KUBE-SERVICES', 'default/remote-internal:http has no local endpoints');
    const probe = await httpProbe(CLIENT_NS, 'http://10.96.12.44/', { timeoutMs: 1500 });
    expect(probe.exitCode).toBe(28);
    expect(await filterRuleCount('KUBE-SERVICES', 'default/remote-internal:http has no local endpoints')).toBeGreaterThan(before);
  }, 60_000);
});

describe.skipIf(!canRun)('diagnose on the real kernel: nftables mode', () => {
  let healthy: Diagnosis;
  beforeAll(async () => {
    await reset();
    await nsExecOk(NS, ['nft', '-f', '-'], { input: generateNftablesRules(RICH_SCENARIO) });
    healthy = await diagnose();
  }, 60_000);
  afterAll(async () => {
    if (canRun) await run(['ip', 'netns', 'del', NS]);
  });

  it('healthy: ok for every Service with endpoints', () => {
    expect(healthy.header.dataplane).toBe('nftables');
    const v = verdicts(healthy);
    for (const ref of ['default/web', 'default/web-local', 'default/remote-local', 'default/sticky', 'default/ext', 'kube-system/kube-dns']) expect([ref, v[ref]]).toEqual([ref, 'ok']);
  });

  /** The handle of the rule of chain `chain` (ip kube-proxy) whose text matches `match`. */
  async function nftHandle(chain: string, match: RegExp): Promise<string> {
    const out = (await nsExecOk(NS, ['nft', '-a', 'list', 'chain', 'ip', 'kube-proxy', chain])).stdout.split('\n');
    const line = out.find((l) => match.test(l));
    expect(line, out.join('\n')).toBeDefined();
    return /# handle (\d+)/.exec(line!)![1]!;
  }

  it('a wrong DNAT port (nft replace rule on the kernel): wrong-target-port on kube-dns UDP, its rule quoted, nothing else changes', async () => {
    const chain = 'endpoint-2GKX576Q-kube-system/kube-dns/udp/dns__10.244.0.2/53';
    const handle = await nftHandle(chain, /dnat to 10\.244\.0\.2:53/);
    await nsExecOk(NS, ['nft', 'replace', 'rule', 'ip', 'kube-proxy', chain, 'handle', handle, 'meta', 'l4proto', 'udp', 'dnat', 'to', '10.244.0.2:5353']);
    const d = await diagnose();
    const f = findings(d, 'kube-system/kube-dns').filter((x) => x.code === 'wrong-target-port');
    expect(f.map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.0.10:53/UDP', '10.244.0.2:53']]);
    expect(f[0]!.evidence[0]!.text).toContain('dnat to 10.244.0.2:5353');
    expect(changed(d, healthy)).toEqual(['kube-system/kube-dns']);
    await nsExecOk(NS, ['nft', 'replace', 'rule', 'ip', 'kube-proxy', chain, 'handle', handle, 'meta', 'l4proto', 'udp', 'dnat', 'to', '10.244.0.2:53']);
    expect(verdicts(await diagnose())).toEqual(verdicts(healthy));
  }, 60_000);

  it('an extra endpoint for an address in no slice (a new endpoint chain in the numgen map): endpoint-extra on kube-dns UDP naming "unknown address", nothing else changes', async () => {
    const svc = 'service-FY5PMXPG-kube-system/kube-dns/udp/dns';
    const extra = 'endpoint-DIAGXTRA-kube-system/kube-dns/udp/dns__10.244.0.99/53';
    const eps = ['endpoint-2GKX576Q-kube-system/kube-dns/udp/dns__10.244.0.2/53', 'endpoint-SHKW4FT7-kube-system/kube-dns/udp/dns__10.244.0.3/53'];
    await nsExecOk(NS, ['nft', 'add', 'chain', 'ip', 'kube-proxy', extra]);
    await nsExecOk(NS, ['nft', 'add', 'rule', 'ip', 'kube-proxy', extra, 'meta', 'l4proto', 'udp', 'dnat', 'to', '10.244.0.99:53']);
    const handle = await nftHandle(svc, /numgen random mod 2/);
    const vmap = (targets: readonly string[]) => ['numgen', 'random', 'mod', String(targets.length), 'vmap', `{ ${targets.map((t, i) => `${i} : goto ${t}`).join(' , ')} }`];
    await nsExecOk(NS, ['nft', 'replace', 'rule', 'ip', 'kube-proxy', svc, 'handle', handle, ...vmap([...eps, extra])]);
    const d = await diagnose();
    const f = findings(d, 'kube-system/kube-dns').filter((x) => x.code === 'endpoint-extra');
    expect(f.map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.0.10:53/UDP', '10.244.0.99:53']]);
    expect(f[0]!.message).toContain('unknown address');
    expect(changed(d, healthy)).toEqual(['kube-system/kube-dns']);
    await nsExecOk(NS, ['nft', 'replace', 'rule', 'ip', 'kube-proxy', svc, 'handle', handle, ...vmap(eps)]);
    await nsExecOk(NS, ['nft', 'delete', 'chain', 'ip', 'kube-proxy', extra]);
    expect(verdicts(await diagnose())).toEqual(verdicts(healthy));
  }, 60_000);

  it('a deleted service-ips element (nft delete element): frontend-missing on sticky, broken, nothing else changes', async () => {
    await nsExecOk(NS, ['nft', 'delete', 'element', 'ip', 'kube-proxy', 'service-ips', '{ 10.96.12.42 . tcp . 80 }']);
    const d = await diagnose();
    expect(findings(d, 'default/sticky').filter((x) => x.code === 'frontend-missing').map((x) => x.frontend)).toEqual(['10.96.12.42:80/TCP']);
    expect(verdicts(d)['default/sticky']).toBe('broken');
    expect(changed(d, healthy)).toEqual(['default/sticky']);
  }, 60_000);

  it('leftover KUBE-* chains of iptables mode on the nftables node: leftover-rules on the Services they name', async () => {
    const only = { ...RICH_SCENARIO, services: RICH_SCENARIO.services.filter((s) => s.name === 'web') };
    await nsExecOk(NS, ['iptables-nft-restore', '--noflush'], { input: rulesText(only) });
    const d = await diagnose();
    expect(d.header.dataplane).toBe('nftables');
    expect(findings(d, 'default/web').filter((x) => x.code === 'leftover-rules')).toHaveLength(1);
    expect(changed(d, healthy).filter((k) => k !== 'default/sticky')).toEqual(['default/web']);
  }, 60_000);
});

const BPF_ROOT = '/sys/fs/bpf/nsdg-diagnose/tc/globals';
const canBpf = labAvailable(['bpftool']);

describe.skipIf(!canBpf)('diagnose on real BPF maps: Cilium mode', () => {
  /** The lab-cilium node with its LB table read back from real maps written from `table`. */
  async function ciliumDiagnosis(table: LbTable): Promise<Diagnosis> {
    const lab = createLabCiliumMaps({ root: BPF_ROOT, table });
    const dumps = lab.maps.map((m) => ({ name: m.name, text: dumpLabCiliumMap(m.path), origin: `bpftool -j map dump pinned ${m.path}` }));
    const read = decodeCiliumLbMaps(dumps).value.table;
    const base = await snapshotOf('lab-cilium');
    return diagnoseSnapshot({ ...base, lb: { ...base.lb!, value: read } });
  }
  afterAll(() => {
    if (canBpf) removeLabCiliumMaps({ root: BPF_ROOT });
  });

  it('healthy maps: ok for every Service with endpoints; an extra backend in the backends map with a slot of web: endpoint-extra on web only', async () => {
    const healthy = await ciliumDiagnosis(labCiliumTable());
    const v = verdicts(healthy);
    for (const ref of ['default/web', 'default/api', 'kube-system/kube-dns']) expect([ref, v[ref]]).toEqual([ref, 'ok']);
    const table = labCiliumTable();
    const ids = table.backends.map((b) => b.id ?? 0);
    const backend = { id: Math.max(...ids) + 1, ip: '10.244.0.99', port: 8080, protocol: 'TCP' as const, state: 'active' as const, weight: null, clusterId: 0, zone: 0, nodeName: null };
    const broken = {
      ...table,
      backends: [...table.backends, backend],
      services: table.services.map((s) => (s.frontend.ip === '10.96.12.34' && s.frontend.port === 80 ? { ...s, count: (s.count ?? 0) + 1, slots: [...s.slots, { slot: s.slots.length + 1, backendId: backend.id, backend, flags: s.flags }] } : s)),
    };
    const d = await ciliumDiagnosis(broken);
    const f = findings(d, 'default/web').filter((x) => x.code === 'endpoint-extra');
    expect(f.map((x) => [x.frontend, x.endpoint])).toEqual([['10.96.12.34:80/TCP', '10.244.0.99:8080']]);
    expect(changed(d, healthy)).toEqual(['default/web']);
  }, 60_000);
});

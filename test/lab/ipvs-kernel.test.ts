/**
 * Lab: the real ipset and ipvsadm binaries against the real kernel, inside a network
 * namespace of their own (ipsets and the IPVS table are per network namespace).
 *
 * The parsers must model exactly what was programmed, and the formatters must reproduce
 * the binaries' output byte for byte (the strongest check of the printf widths).
 * IPVS needs a kernel with CONFIG_IP_VS; without it the IPVS block reports why.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { formatIpsetList, parseIpsetList } from '../../src/parsers/ipset.js';
import { formatIpvsAddress, formatIpvsServiceKey } from '../../src/model/ipvs.js';
import { formatIpvsListing, parseEtcServices, parseIpvsadm } from '../../src/parsers/ipvsadm.js';
import { allDiagnostics, buildSnapshot } from '../../src/collect/build-snapshot.js';
import { detectProxyMode } from '../../src/analysis/proxy-mode.js';
import { LocalTransport } from '../../src/sources/local.js';
import { runProbes } from '../../src/sources/probe-runner.js';

const NS = `nodescope-ipvs-${process.pid}`;

function run(argv: readonly string[], allowFail = false): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 20_000 });
  if (!allowFail && r.status !== 0) throw new Error(`${argv.join(' ')} → ${r.status}: ${r.stderr}`);
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}
const inNs = (...argv: string[]): string => run(['ip', 'netns', 'exec', NS, ...argv]).stdout;

const labOk = labAvailable(['ip', 'ipset', 'ipvsadm']);

beforeAll(() => {
  if (!labOk) return;
  run(['ip', 'netns', 'del', NS], true);
  run(['ip', 'netns', 'add', NS]);
  run(['ip', '-n', NS, 'link', 'set', 'lo', 'up']);
});
afterAll(() => {
  if (labOk) run(['ip', 'netns', 'del', NS], true);
});

describe.runIf(labOk)('ipset list from the kernel', () => {
  // What kube-proxy's IPVS proxier creates (pkg/proxy/ipvs/proxier.go ipsetInfo), with comments.
  const sets = [
    { name: 'KUBE-CLUSTER-IP', type: 'hash:ip,port', create: [], members: [['10.96.0.10,udp:53', 'kube-system/kube-dns:dns'], ['10.96.0.10,tcp:53', 'kube-system/kube-dns:dns-tcp'], ['10.96.12.34,tcp:80', 'default/web:http']] },
    { name: 'KUBE-LOOP-BACK', type: 'hash:ip,port,ip', create: [], members: [['10.244.0.23,tcp:8080,10.244.0.23', null]] },
    { name: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port', create: ['range', '0-65535'], members: [['30080', null]] },
    { name: 'KUBE-LOAD-BALANCER-SOURCE-CIDR', type: 'hash:ip,port,net', create: [], members: [['192.168.49.100,tcp:80,10.0.0.0/8', null]] },
    { name: 'KUBE-6-CLUSTER-IP', type: 'hash:ip,port', create: ['family', 'inet6'], members: [['fd00:10:96::a,tcp:443', null]] },
  ] as const;

  beforeAll(() => {
    for (const s of sets) {
      inNs('ipset', 'create', s.name, s.type, ...s.create, 'comment');
      for (const [m, c] of s.members) inNs('ipset', 'add', s.name, m, ...(c ? ['comment', c] : []));
    }
  });

  it('models every set and member that was added, and formats the output back byte for byte', () => {
    const out = inNs('ipset', 'list');
    const { value, diagnostics } = parseIpsetList(out, 'ipset list');
    expect(diagnostics).toEqual([]);
    expect(value.map((s) => [s.name, s.type])).toEqual(sets.map((s) => [s.name, s.type]));
    for (const s of sets) {
      const got = value.find((v) => v.name === s.name)!;
      expect(got.numberOfEntries).toBe(s.members.length);
      expect(got.header.some(([k, v]) => k === 'comment' && v === null), s.name).toBe(true);
      const members = got.members!.map((m) => [m.element, m.options.find(([k]) => k === 'comment')?.[1] ?? null]);
      expect(members.sort()).toEqual(s.members.map(([m, c]) => [m, c]).sort());
      for (const m of got.members!) expect(m.parts, m.element).not.toBeNull();
    }
    expect(value.find((v) => v.name === 'KUBE-6-CLUSTER-IP')!.family).toBe('inet6');
    expect(value.find((v) => v.name === 'KUBE-NODE-PORT-TCP')!.family).toBeNull();
    expect(formatIpsetList(value)).toBe(out);
  });

  it('terse listing (-t) has no members but the same counts', () => {
    const out = inNs('ipset', 'list', '-t');
    const { value, diagnostics } = parseIpsetList(out, 'ipset list -t');
    expect(diagnostics).toEqual([]);
    expect(value.map((s) => [s.members, s.numberOfEntries])).toEqual(sets.map((s) => [null, s.members.length]));
    expect(formatIpsetList(value)).toBe(out);
  });
});

/** Why the kernel cannot run IPVS here (null when it can). Listing is read-only. */
function ipvsKernelSkipReason(): string | null {
  const probe = run(['ipvsadm', '-Ln'], true);
  return probe.status === 0 ? null : `the kernel has no IPVS (CONFIG_IP_VS): ipvsadm -Ln says "${probe.stderr.trim().split('\n')[0]}"`;
}
const ipvsReason = labOk ? ipvsKernelSkipReason() : null;
if (ipvsReason !== null) console.warn(`skipping IPVS lab tests: ${ipvsReason}`);

// A kernel built without IPVS (CONFIG_IP_VS) is a node nodescope must read correctly too:
// there the real ipvsadm fails, and the probe must come out as an optional, explained
// absence (not an error, not an IPVS mode). The full ipvsadm checks below need the module.
if (labOk && ipvsReason !== null) {
  describe('ipvsadm on a kernel without IPVS', () => {
    it('is reported as an optional probe that failed with the kernel\'s reason, and no IPVS mode', async () => {
      const transport = new LocalTransport({ netns: NS });
      const runs = await runProbes(transport, { ids: ['ipvsadm', 'ipvsadm-stats', 'uname'] });
      const snapshot = buildSnapshot({ runs, source: { kind: 'netns', label: NS, live: true }, capturedAt: new Date(0).toISOString() });
      expect(snapshot.ipvs?.value).toBeNull();
      expect(snapshot.ipvs?.probe?.optional).toBe(true);
      expect(snapshot.ipvs?.error).toMatch(/exit code \d+: .*(Protocol not available|IP Virtual Server)/);
      const failure = allDiagnostics(snapshot).find((d) => d.code === 'probe-failed' && d.origin.startsWith('ipvsadm'));
      expect(failure?.severity).toBe('info');
      expect(detectProxyMode(snapshot).mode).not.toBe('ipvs');
    });
  });
}

if (labOk && ipvsReason === null) describe('ipvsadm from the kernel', () => {
  beforeAll(() => {
    const add = (...a: string[]): string => inNs('ipvsadm', ...a);
    add('-A', '-t', '10.96.0.10:53', '-s', 'rr');
    add('-a', '-t', '10.96.0.10:53', '-r', '10.244.0.2:53', '-m', '-w', '1');
    add('-a', '-t', '10.96.0.10:53', '-r', '10.244.0.3:53', '-m', '-w', '1');
    add('-A', '-u', '10.96.0.10:53', '-s', 'rr');
    add('-a', '-u', '10.96.0.10:53', '-r', '10.244.0.2:53', '-m', '-w', '1');
    add('-A', '-t', '10.96.50.5:80', '-s', 'rr'); // a Service without endpoints
    add('-A', '-t', '[fd00:10:96::1]:443', '-s', 'wlc', '-p', '10800');
    add('-a', '-t', '[fd00:10:96::1]:443', '-r', '[fd00:10:244::5]:6443', '-m', '-w', '2');
    add('-A', '-f', '7', '-s', 'sh', '-b', 'sh-port');
    add('-a', '-f', '7', '-r', '192.168.49.3:0', '-g', '-w', '3');
    add('-a', '-f', '7', '-r', '192.168.49.4:0', '-i', '-w', '0');
  });

  it.each([
    ['-Ln'],
    ['-Ln', '--stats'],
    ['-Ln', '--stats', '--exact'],
    ['-Ln', '--rate'],
    ['-Ln', '--thresholds'],
    ['-Ln', '--persistent-conn'],
    ['-Ln', '--tun-info'],
    ['-Ln', '-t', '10.96.0.10:53'],
  ])('ipvsadm %s parses without diagnostics and formats back byte for byte', (...args) => {
    const out = inNs('ipvsadm', ...args);
    const { value, diagnostics } = parseIpvsadm(out, `ipvsadm ${args.join(' ')}`);
    expect(diagnostics).toEqual([]);
    expect(value.virtualServers.length).toBeGreaterThan(0);
    expect(formatIpvsListing(value)).toBe(out);
  });

  it('models the programmed virtual and real servers', () => {
    const { value } = parseIpvsadm(inNs('ipvsadm', '-Ln'), 'ipvsadm -Ln');
    const table = value.virtualServers.map((v) => ({
      key: formatIpvsServiceKey(v.key),
      sched: v.values.kind === 'scheduled' ? [v.values.scheduler, v.values.schedFlags, v.values.persistence?.timeout ?? null] : null,
      rs: v.realServers.map((r) => [formatIpvsAddress(r.address), r.values.kind === 'list' ? [r.values.forward, r.values.weight] : null]),
    }));
    const byKey = new Map(table.map((t) => [t.key, t]));
    expect(byKey.get('TCP  10.96.0.10:53')).toEqual({ key: 'TCP  10.96.0.10:53', sched: ['rr', [], null], rs: [['10.244.0.2:53', ['Masq', 1]], ['10.244.0.3:53', ['Masq', 1]]] });
    expect(byKey.get('UDP  10.96.0.10:53')!.rs).toEqual([['10.244.0.2:53', ['Masq', 1]]]);
    expect(byKey.get('TCP  10.96.50.5:80')!.rs).toEqual([]);
    expect(byKey.get('TCP  [fd00:10:96::1]:443')!.sched).toEqual(['wlc', [], 10800]);
    expect(byKey.get('FWM  7')).toEqual({ key: 'FWM  7', sched: ['sh', ['sh-port'], null], rs: [['192.168.49.3:0', ['Route', 3]], ['192.168.49.4:0', ['Tunnel', 0]]] });
  });

  it('without -n, port names resolve through /etc/services', () => {
    const out = inNs('ipvsadm', '-L', '-t', '10.96.0.10:53');
    const services = parseEtcServices(readFileSync('/etc/services', 'utf8'), '/etc/services').value;
    const { value, diagnostics } = parseIpvsadm(out, 'ipvsadm -L', { services });
    expect(diagnostics).toEqual([]);
    const vs = value.virtualServers[0]!;
    expect(vs.key.kind === 'address' ? [vs.key.address.port, vs.key.address.portName] : null).toEqual([53, 'domain']);
    expect(formatIpvsListing(value)).toBe(out);
  });
});

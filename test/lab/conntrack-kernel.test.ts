/**
 * The conntrack parser against the real kernel: two network namespaces joined
 * by a veth; the client namespace DNATs Service-like VIPs to a server in the
 * other (nft, as kube-proxy's nftables mode would), real TCP, UDP and ICMP
 * traffic flows, and what `conntrack -L -o extended`, `conntrack -E` and
 * `/proc/net/nf_conntrack` print in the client namespace is parsed and checked
 * against the traffic that was sent: tuples, the NAT view, per-direction counters
 * (`net.netfilter.nf_conntrack_acct=1` in the namespace).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { parseConntrack, formatConntrackEntry } from '../../src/parsers/conntrack.js';
import { classifyConntrack, conntrackNatView, type ServiceFrontends } from '../../src/analysis/conntrack-nat.js';
import { plainConntrackTuple, type ConntrackEntry, type ConntrackTable } from '../../src/model/conntrack.js';
import type { ParseResult } from '../../src/model/diagnostics.js';

const TOOLS = ['ip', 'nft', 'conntrack', 'ping'];
const canRun = labAvailable(TOOLS);

const tag = `${process.pid % 100000}`;
const NS_CLIENT = `nsct${tag}c`;
const NS_SERVER = `nsct${tag}s`;
const VETH_C = `ct${tag}c`;
const VETH_S = `ct${tag}s`;

// Addresses exist only inside the two namespaces.
const CLIENT = '10.123.0.1';
const CLIENT_SNAT = '10.123.0.3';
const SERVER = '10.123.0.2';
const VIP = '10.96.0.50';
const VIP_MASQ = '10.96.0.51';
const CLIENT6 = 'fd00:123::1';
const SERVER6 = 'fd00:123::2';
const VIP6 = 'fd00:96::50';
const UDP_PAYLOAD = 'hello';
const UDP_DATAGRAMS = 2;
const TCP_CONNECTIONS = 3;
const PINGS = 2;

const RULES = `
table ip nodescope_ct {
  chain out {
    type nat hook output priority -100; policy accept;
    ip daddr ${VIP} tcp dport 80 dnat to ${SERVER}:8080
    ip daddr ${VIP} udp dport 53 dnat to ${SERVER}:5353
    ip daddr ${VIP_MASQ} tcp dport 80 dnat to ${SERVER}:8080
  }
  chain post {
    type nat hook postrouting priority 100; policy accept;
    ct original ip daddr ${VIP_MASQ} snat to ${CLIENT_SNAT}
  }
}
table ip6 nodescope_ct6 {
  chain out {
    type nat hook output priority -100; policy accept;
    ip6 daddr ${VIP6} tcp dport 80 dnat to [${SERVER6}]:8080
  }
}
`;

const SERVER_SCRIPT = `
const net = require('node:net'), dgram = require('node:dgram');
const tcp = net.createServer((s) => { s.on('data', () => s.end('hi\\n')); s.on('error', () => {}); });
const udp = dgram.createSocket('udp4');
udp.on('message', (m, r) => udp.send(m, r.port, r.address));
let ready = 0;
const up = () => { if (++ready === 2) console.log('ready'); };
tcp.listen(8080, '::', up);
udp.bind(5353, '0.0.0.0', up);
`;

const CLIENT_SCRIPT = `
const net = require('node:net'), dgram = require('node:dgram');
const tcp = (host) => new Promise((ok, ko) => {
  const s = net.connect(80, host, () => s.write('x'));
  s.on('data', () => {}); s.on('end', () => { s.end(); ok(); }); s.on('error', ko);
  s.setTimeout(5000, () => ko(new Error('tcp timeout ' + host)));
});
const udp = () => new Promise((ok, ko) => {
  const u = dgram.createSocket('udp4');
  let got = 0;
  u.on('message', () => { if (++got === ${UDP_DATAGRAMS}) { u.close(); ok(); } });
  u.on('error', ko);
  for (let k = 0; k < ${UDP_DATAGRAMS}; k++) u.send('${UDP_PAYLOAD}', 53, '${VIP}');
  setTimeout(() => ko(new Error('udp timeout')), 5000);
});
(async () => {
  for (let k = 0; k < ${TCP_CONNECTIONS}; k++) await tcp('${VIP}');
  await udp();
  await tcp('${VIP_MASQ}');
  await tcp('${VIP6}');
  console.log('done');
})().catch((e) => { console.error(String(e)); process.exit(1); });
`;

function run(argv: readonly string[], input?: string): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync(argv[0]!, argv.slice(1), { input, encoding: 'utf8', timeout: 20_000 });
  return { stdout: r.stdout ?? '', stderr: r.stderr ?? '', status: r.status };
}

function must(argv: readonly string[], input?: string): string {
  const r = run(argv, input);
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

const inNs = (ns: string, ...argv: string[]) => ['ip', 'netns', 'exec', ns, ...argv];

function cleanup(): void {
  // Deleting the namespaces removes the veth pair, the nft tables and the conntrack tables.
  run(['ip', 'netns', 'del', NS_CLIENT]);
  run(['ip', 'netns', 'del', NS_SERVER]);
}

function waitForLine(child: ChildProcess, want: string, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no "${want}" within ${ms} ms: ${seen}`)), ms);
    child.stdout?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(want)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before "${want}": ${seen}`));
    });
  });
}

describe.skipIf(!canRun)('conntrack on the real kernel (two namespaces, nft DNAT)', () => {
  let server: ChildProcess | undefined;
  let events: ChildProcess | undefined;
  let eventsOut = '';
  let eventsErr = '';
  let extended: ParseResult<ConntrackTable>;
  let proc: ParseResult<ConntrackTable> | undefined;
  let plainCount: number | undefined;

  beforeAll(async () => {
    cleanup();
    must(['ip', 'netns', 'add', NS_CLIENT]);
    must(['ip', 'netns', 'add', NS_SERVER]);
    must(['ip', 'link', 'add', VETH_C, 'netns', NS_CLIENT, 'type', 'veth', 'peer', 'name', VETH_S, 'netns', NS_SERVER]);
    for (const [ns, dev, addrs] of [
      [NS_CLIENT, VETH_C, [`${CLIENT}/24`, `${CLIENT_SNAT}/24`]],
      [NS_SERVER, VETH_S, [`${SERVER}/24`]],
    ] as const) {
      for (const a of addrs) must(inNs(ns, 'ip', 'addr', 'add', a, 'dev', dev));
      must(inNs(ns, 'ip', 'addr', 'add', ns === NS_CLIENT ? `${CLIENT6}/64` : `${SERVER6}/64`, 'dev', dev, 'nodad'));
      must(inNs(ns, 'ip', 'link', 'set', dev, 'up'));
      must(inNs(ns, 'ip', 'link', 'set', 'lo', 'up'));
    }
    must(inNs(NS_CLIENT, 'ip', 'route', 'add', '10.96.0.0/16', 'dev', VETH_C));
    must(inNs(NS_CLIENT, 'ip', '-6', 'route', 'add', 'fd00:96::/64', 'dev', VETH_C));
    must(inNs(NS_CLIENT, 'sysctl', '-qw', 'net.netfilter.nf_conntrack_acct=1'));
    must(inNs(NS_CLIENT, 'nft', '-f', '-'), RULES);

    server = spawn('ip', ['netns', 'exec', NS_SERVER, process.execPath, '-e', SERVER_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
    await waitForLine(server, 'ready', 10_000);

    events = spawn('ip', ['netns', 'exec', NS_CLIENT, 'conntrack', '-E', '-o', 'timestamp,extended,id'], { stdio: ['ignore', 'pipe', 'pipe'] });
    events.stdout?.on('data', (d: Buffer) => (eventsOut += d.toString()));
    events.stderr?.on('data', (d: Buffer) => (eventsErr += d.toString()));
    await new Promise((r) => setTimeout(r, 300)); // let it subscribe before traffic

    const client = run(inNs(NS_CLIENT, process.execPath, '-e', CLIENT_SCRIPT));
    if (client.status !== 0 || !client.stdout.includes('done')) throw new Error(`client failed: ${client.stderr}`);
    must(inNs(NS_CLIENT, 'ping', '-c', String(PINGS), '-i', '0.2', '-W', '2', SERVER));

    const ext = run(inNs(NS_CLIENT, 'conntrack', '-L', '-o', 'extended'));
    // stdout and stderr together, the way a terminal capture would hold them.
    extended = parseConntrack(ext.stdout + ext.stderr, 'conntrack -L -o extended');
    const plain = run(inNs(NS_CLIENT, 'conntrack', '-L'));
    plainCount = parseConntrack(plain.stdout, 'conntrack -L').value.entries.length;
    const procText = run(inNs(NS_CLIENT, 'cat', '/proc/net/nf_conntrack'));
    if (procText.status === 0) proc = parseConntrack(procText.stdout, '/proc/net/nf_conntrack');
    else console.warn(`/proc/net/nf_conntrack is absent here (${procText.stderr.trim()}); checked conntrack -L only`);

    const stopped = new Promise((r) => events!.once('exit', r));
    events.kill('SIGINT');
    await stopped;
  }, 60_000);

  afterAll(() => {
    events?.kill('SIGKILL');
    server?.kill('SIGKILL');
    cleanup();
    expect(run(['ip', 'netns', 'list']).stdout).not.toContain(NS_CLIENT);
  });

  const flows = (pred: (e: ConntrackEntry) => boolean) => extended.value.entries.filter(pred);
  const toVip = (ip: string, port: number, proto: string) => (e: ConntrackEntry) =>
    e.proto === proto && e.orig.dst === ip && e.orig.dport === port;

  it('parses every line with no diagnostic, and the summary count matches', () => {
    expect(extended.diagnostics).toEqual([]);
    const n = extended.value.entries.length;
    expect(n).toBe(TCP_CONNECTIONS + 1 + 1 + 1 + 1); // web ×3, dns, masq, web6, ping
    expect(extended.value.reportedCount).toBe(n);
    expect(plainCount).toBe(n);
  });

  it('shows each TCP connection to the VIP DNATed to the server endpoint', () => {
    const web = flows(toVip(VIP, 80, 'tcp'));
    expect(web).toHaveLength(TCP_CONNECTIONS);
    for (const e of web) {
      const v = conntrackNatView(e);
      expect(v.text).toBe(`${CLIENT}:${e.orig.sport} → ${VIP}:80 ⇒ ${SERVER}:8080`);
      expect([v.dnat, v.snat]).toEqual([true, false]);
      expect(e.flags).toContain('ASSURED');
      // SYN, ACK, data, FIN, ACK at least one way; SYN-ACK, data, FIN back.
      expect(e.orig.packets! >= 4n && e.reply.packets! >= 3n).toBe(true);
      expect(e.orig.bytes! > e.orig.packets! * 40n).toBe(true);
    }
  });

  it('counts UDP datagrams and bytes per direction exactly', () => {
    const [dns] = flows(toVip(VIP, 53, 'udp'));
    expect(dns).toBeDefined();
    expect(conntrackNatView(dns!).answeredBy).toEqual({ ip: SERVER, port: 5353 });
    const perPacket = BigInt(20 + 8 + UDP_PAYLOAD.length); // IPv4 + UDP headers + payload
    expect(dns!.orig.packets).toBe(BigInt(UDP_DATAGRAMS));
    expect(dns!.orig.bytes).toBe(BigInt(UDP_DATAGRAMS) * perPacket);
    expect(dns!.reply.packets).toBe(BigInt(UDP_DATAGRAMS));
    expect(dns!.reply.bytes).toBe(BigInt(UDP_DATAGRAMS) * perPacket);
    expect(dns!.state).toBeUndefined();
  });

  it('shows the masqueraded flow with its translated source', () => {
    const [masq] = flows(toVip(VIP_MASQ, 80, 'tcp'));
    const v = conntrackNatView(masq!);
    expect([v.dnat, v.snat]).toEqual([true, true]);
    expect(v.clientAsSeen.ip).toBe(CLIENT_SNAT);
    expect(v.text).toContain(`(SNAT as ${CLIENT_SNAT}:`);
  });

  it('reads the IPv6 DNAT flow and the ICMP echo flow', () => {
    const [web6] = flows(toVip(VIP6, 80, 'tcp'));
    expect(web6).toMatchObject({ family: 'ipv6', orig: { src: CLIENT6 }, reply: { src: SERVER6, sport: 8080 } });
    const [icmp] = flows((e) => e.proto === 'icmp');
    expect(icmp!.orig).toMatchObject({ src: CLIENT, dst: SERVER, icmpType: 8, icmpCode: 0, packets: BigInt(PINGS) });
    expect(icmp!.reply).toMatchObject({ src: SERVER, icmpType: 0, icmpId: icmp!.orig.icmpId, packets: BigInt(PINGS) });
  });

  it('classifies the flows against Services and counts entries per endpoint', () => {
    const services: ServiceFrontends[] = [
      { namespace: 'lab', name: 'web', vips: [{ ip: VIP, port: 80, protocol: 'TCP' }, { ip: VIP6, port: 80, protocol: 'TCP' }], nodePorts: [],
        endpoints: [{ ip: SERVER, port: 8080, protocol: 'TCP' }, { ip: SERVER6, port: 8080, protocol: 'TCP' }] },
      { namespace: 'lab', name: 'dns', vips: [{ ip: VIP, port: 53, protocol: 'UDP' }], nodePorts: [],
        endpoints: [{ ip: SERVER, port: 5353, protocol: 'UDP' }] },
    ];
    const r = classifyConntrack(extended.value.entries, services, [CLIENT, CLIENT6]);
    const byName = (name: string) => r.matches.filter((m) => m.service?.name === name).map((m) => m.status);
    expect(byName('web')).toEqual(Array(TCP_CONNECTIONS + 1).fill('ok'));
    expect(byName('dns')).toEqual(['ok']);
    // The masqueraded flow and the ping are not to a Service frontend.
    expect(r.matches.filter((m) => m.status === 'no-service')).toHaveLength(2);
    // The masqueraded flow was answered by the web endpoint too: counted there.
    expect(r.endpointCounts.map((c) => [c.name, c.endpoint.ip, c.entries])).toEqual([
      ['web', SERVER, TCP_CONNECTIONS + 1],
      ['web', SERVER6, 1],
      ['dns', SERVER, 1],
    ]);
  });

  it('formats every entry back to the exact line conntrack printed', () => {
    for (const e of extended.value.entries) expect(formatConntrackEntry(e, 'extended')).toBe(e.raw);
  });

  it('reads the same flows from /proc/net/nf_conntrack (IPv6 fully expanded there)', () => {
    if (proc === undefined) return; // reason printed in beforeAll
    expect(proc.diagnostics).toEqual([]);
    const key = (e: ConntrackEntry) => `${e.proto} ${e.orig.src} ${e.orig.sport ?? e.orig.icmpId} ${e.orig.dst}`;
    const fromProc = new Map(proc.value.entries.map((e) => [key(e), e]));
    expect(fromProc.size).toBe(extended.value.entries.length);
    for (const e of extended.value.entries) {
      const p = fromProc.get(key(e));
      expect(p, key(e)).toBeDefined();
      expect(plainConntrackTuple(p!.orig)).toEqual(plainConntrackTuple(e.orig));
      expect(plainConntrackTuple(p!.reply)).toEqual(plainConntrackTuple(e.reply));
      expect(p!.zone).toBe(0);
      expect(formatConntrackEntry(p!, 'proc')).toBe(p!.raw);
    }
    const v6 = proc.value.entries.find((e) => e.family === 'ipv6')!;
    expect(v6.raw).toContain('src=fd00:0123:0000:0000:0000:0000:0000:0001');
    expect(v6.orig.src).toBe(CLIENT6);
  });

  it('reads the events conntrack -E printed during the traffic, and its summary', () => {
    const r = parseConntrack(eventsOut + eventsErr, 'conntrack -E');
    expect(r.diagnostics).toEqual([]);
    // Events are never table entries (issue 25): one flow's NEW/UPDATE/DESTROY are three events.
    expect(r.value.entries).toEqual([]);
    const events = r.value.events ?? [];
    const news = events.filter((e) => e.event === 'NEW');
    expect(news).toHaveLength(extended.value.entries.length);
    for (const e of news) {
      expect(e.eventTime).toMatch(/^\d+\.\d{6}$/);
      expect(e.id).toBeGreaterThan(0);
      expect(e.flags).toContain('UNREPLIED');
    }
    expect(events.some((e) => e.event === 'UPDATE' && e.state === 'ESTABLISHED')).toBe(true);
    expect(r.value.trailers).toHaveLength(1);
    expect(r.value.reportedEvents).toBe(events.length);
    expect(r.value.reportedCount).toBeUndefined();
    for (const e of events) expect(formatConntrackEntry(e, 'extended')).toBe(e.raw);
  });
});

/**
 * The query engine and its transports against a real DNS server on 127.0.0.1 (UDP and
 * TCP): answers, NXDOMAIN, NODATA, SRV, truncation → TCP, timeouts with retries, stray
 * datagrams, refused connections; DNS over a TCP stream (the SSH `forwardOut` path); the
 * in-namespace query program and the `dns-query` probe around it.
 */
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectDnsTransport, StreamDnsTransport } from '../../src/dns/direct.js';
import { DNS_QUERY_PROBE, ProbeDnsTransport } from '../../src/dns/probe.js';
import { queryMain } from '../../src/dns/query-main.js';
import { decodeExchange, parseRawExchange } from '../../src/dns/raw.js';
import { UserError } from '../../src/errors.js';
import { catalog, fillArgv, probe } from '../../src/sources/catalog.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import type { ExecOptions, ExecResult, Transport } from '../../src/sources/transport.js';
import { startTestDnsServer, type TestDnsServer, type ZoneRecord } from './builders/dns.js';

const Z = 'default.svc.cluster.local';
const many = Array.from({ length: 40 }, (_, i): ZoneRecord => ({ name: `big.${Z}`, type: 'A', data: `10.244.7.${i + 1}` }));
const RECORDS: ZoneRecord[] = [
  { name: `web.${Z}`, type: 'A', data: '10.96.12.34' },
  { name: `_http._tcp.web.${Z}`, type: 'SRV', data: { priority: 0, weight: 100, port: 80, target: `web.${Z}` } },
  { name: `dual.${Z}`, type: 'AAAA', data: 'fd00:0:0:0::20' },
  { name: `alias.${Z}`, type: 'CNAME', data: `web.${Z}` },
  ...many,
];

let server: TestDnsServer;
let strayServer: TestDnsServer;
beforeAll(async () => {
  server = await startTestDnsServer({ records: RECORDS, truncateUdpAbove: 10, silent: [`slow.${Z}`], servfail: [`broken.${Z}`] });
  strayServer = await startTestDnsServer({ records: RECORDS, strayFirst: true });
});
afterAll(async () => {
  await server.close();
  await strayServer.close();
});

const direct = new DirectDnsTransport();
const ask = (qname: string, qtype: 'A' | 'AAAA' | 'SRV' | 'CNAME' = 'A', port = server.port) => ({ server: '127.0.0.1', port, qname, qtype });

describe('direct transport (UDP, then TCP on truncation)', () => {
  it.each([
    [`web.${Z}`, 'A', 'answer', 'NOERROR', ['A 10.96.12.34']],
    [`web.${Z}.`, 'A', 'answer', 'NOERROR', ['A 10.96.12.34']],
    [`nope.${Z}`, 'A', 'nxdomain', 'NXDOMAIN', []],
    [`web.${Z}`, 'AAAA', 'nodata', 'NOERROR', []],
    [`dual.${Z}`, 'AAAA', 'answer', 'NOERROR', ['AAAA fd00::20']],
    [`_http._tcp.web.${Z}`, 'SRV', 'answer', 'NOERROR', [`SRV 0 100 80 web.${Z}`]],
    [`alias.${Z}`, 'A', 'answer', 'NOERROR', [`CNAME web.${Z}`, 'A 10.96.12.34']],
    [`alias.${Z}`, 'CNAME', 'answer', 'NOERROR', [`CNAME web.${Z}`]],
    [`broken.${Z}`, 'A', 'servfail', 'SERVFAIL', []],
  ] as const)('%s %s → %s', async (qname, qtype, outcome, rcode, answers) => {
    const e = await direct.query(ask(qname, qtype));
    expect([e.outcome, e.rcode, e.answers.map((a) => `${a.type} ${a.data}`)]).toEqual([outcome, rcode, answers]);
    expect(e).toMatchObject({ transport: 'udp', truncated: false, tries: 1, server: '127.0.0.1', port: server.port, via: 'direct', qname: qname.replace(/\.$/, '') });
    expect(e.answers.every((a) => a.ttl === 5 && a.section === 'answer')).toBe(true);
    expect(e.latencyMs).toBeGreaterThanOrEqual(0);
    expect(e.replyHex).toMatch(/^[0-9a-f]+$/);
  });

  it('asks again over TCP when the UDP reply is truncated, and gets every record', async () => {
    const before = server.seen.length;
    const e = await direct.query(ask(`big.${Z}`));
    expect(e).toMatchObject({ outcome: 'answer', truncated: true, transport: 'tcp', tries: 2, error: null });
    expect(e.answers.map((a) => a.data).sort()).toEqual(many.map((r) => r.data).sort());
    expect(server.seen.slice(before).map((s) => s.transport)).toEqual(['udp', 'tcp']);
  });

  it('asks over TCP only with proto tcp', async () => {
    const before = server.seen.length;
    const e = await direct.query(ask(`web.${Z}`), { proto: 'tcp' });
    expect(e).toMatchObject({ outcome: 'answer', transport: 'tcp', truncated: false, tries: 1 });
    expect(server.seen.slice(before).map((s) => s.transport)).toEqual(['tcp']);
  });

  it('times out after every try and says how long it waited', async () => {
    const before = server.seen.length;
    const e = await direct.query(ask(`slow.${Z}`), { timeoutMs: 150, tries: 2 });
    expect(e).toMatchObject({ outcome: 'timeout', rcode: null, tries: 2, error: 'timeout', replyHex: null });
    expect(e.latencyMs).toBeGreaterThanOrEqual(290);
    expect(e.latencyMs).toBeLessThan(2000);
    expect(server.seen.slice(before)).toHaveLength(2);
  });

  it('ignores a datagram with another id, as a resolver must', async () => {
    const e = await direct.query(ask(`web.${Z}`, 'A', strayServer.port));
    expect(e).toMatchObject({ outcome: 'answer', tries: 1 });
    expect(e.answers.map((a) => a.data)).toEqual(['10.96.12.34']);
  });

  it('reports a closed port as a network error, not a timeout', async () => {
    const closed = await freePort();
    const udp = await direct.query(ask(`web.${Z}`, 'A', closed), { timeoutMs: 2000, tries: 1 });
    expect(udp.outcome).toBe('network-error');
    expect(udp.error).toMatch(/ECONNREFUSED/);
    const tcp = await direct.query(ask(`web.${Z}`, 'A', closed), { proto: 'tcp', timeoutMs: 2000, tries: 1 });
    expect(tcp).toMatchObject({ outcome: 'network-error', transport: 'tcp' });
    expect(udp.latencyMs).toBeLessThan(1500);
  });

  it('refuses an invalid question before sending anything', async () => {
    const before = server.seen.length;
    await expect(direct.query(ask('bad name.default'))).rejects.toBeInstanceOf(UserError);
    await expect(direct.query(ask(`-x.${Z}`))).rejects.toBeInstanceOf(UserError);
    await expect(direct.query({ ...ask(`web.${Z}`), server: 'kube-dns' })).rejects.toBeInstanceOf(UserError);
    await expect(direct.query({ ...ask(`web.${Z}`), qtype: 'MX' as never })).rejects.toBeInstanceOf(UserError);
    await expect(direct.query(ask(`web.${Z}`), { timeoutMs: 60_000 })).rejects.toBeInstanceOf(UserError);
    expect(server.seen.length).toBe(before);
  });
});

/** A port nothing listens on (bound then closed). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('stream transport (DNS over TCP through an opened channel, as SSH forwardOut)', () => {
  const opened: string[] = [];
  const opener = {
    openTcp: async (host: string, port: number) => {
      opened.push(`${host}:${port}`);
      return net.connect({ host, port });
    },
  };

  it('asks over TCP through the opener and decodes the reply', async () => {
    const t = new StreamDnsTransport(opener, 'node-1');
    const e = await t.query(ask(`_http._tcp.web.${Z}`, 'SRV'));
    expect(e).toMatchObject({ outcome: 'answer', transport: 'tcp', via: 'tcp-stream:node-1', truncated: false });
    expect(e.answers.map((a) => a.data)).toEqual([`0 100 80 web.${Z}`]);
    expect(opened).toContain(`127.0.0.1:${server.port}`);
  });

  it('gets all records of a large answer in one TCP message', async () => {
    const e = await new StreamDnsTransport(opener, 'node-1').query(ask(`big.${Z}`));
    expect(e.answers).toHaveLength(many.length);
  });

  it('turns a refused channel into a network error and a silent server into a timeout', async () => {
    const refusing = new StreamDnsTransport({ openTcp: () => Promise.reject(Object.assign(new Error('open failed'), { code: 'ECONNREFUSED' })) }, 'n');
    expect((await refusing.query(ask(`web.${Z}`), { tries: 1 })).outcome).toBe('network-error');
    const hanging = new StreamDnsTransport({ openTcp: () => new Promise(() => {}) }, 'n');
    const e = await hanging.query(ask(`web.${Z}`), { timeoutMs: 100, tries: 1 });
    expect(e).toMatchObject({ outcome: 'timeout', tries: 1 });
    const silent = await new StreamDnsTransport(opener, 'n').query(ask(`slow.${Z}`), { timeoutMs: 100, tries: 2 });
    expect(silent).toMatchObject({ outcome: 'timeout', tries: 2 });
  });
});

describe('the query program and the dns-query probe', () => {
  const args = (name: string, extra: string[] = []) => ['--server', '127.0.0.1', '--port', String(server.port), '--name', name, '--type', 'A', ...extra];

  it('prints the raw exchange, which decodes to what the direct transport sees', async () => {
    const r = await queryMain(args(`web.${Z}`));
    expect(r.code).toBe(0);
    const parsed = parseRawExchange(r.stdout, 'query-main');
    expect(parsed.diagnostics).toEqual([]);
    const e = decodeExchange(parsed.value!, 'netns:test');
    expect([e.outcome, e.answers.map((a) => a.data), e.via]).toEqual(['answer', ['10.96.12.34'], 'netns:test']);
  });

  it.each([
    [['--server', '127.0.0.1', '--name', 'a;b', '--type', 'A']],
    [['--server', 'localhost', '--name', 'web', '--type', 'A']],
    [['--server', '127.0.0.1', '--name', 'web', '--type', 'TXT']],
    [['--server', '127.0.0.1', '--name', 'web', '--bogus', 'x']],
    [['--server', '127.0.0.1', '--name', 'web', '--timeout', '1e3']],
  ])('exits 2 on bad arguments %j', async (argv) => {
    const r = await queryMain(argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^query-main: /);
  });

  /** A Transport that runs the probe's query program in-process (as `ip netns exec … node …` would). */
  class InProcessTransport implements Transport {
    readonly kind = 'netns' as const;
    readonly label = 'netns:test-node';
    readonly argvs: string[][] = [];
    constructor(private readonly mode: 'run' | 'missing' | 'garbage' = 'run') {}
    async exec(argv: readonly string[], _o: ExecOptions): Promise<ExecResult> {
      this.argvs.push([...argv]);
      const base = { argv, stderr: '', startedAt: '2026-01-12T09:00:00.000Z', durationMs: 3 };
      if (this.mode === 'missing') return { ...base, stdout: '', stderr: 'exec of "node" failed: No such file or directory', exitCode: 255, missing: true };
      if (this.mode === 'garbage') return { ...base, stdout: 'Segmentation fault\n', exitCode: 0 };
      const r = await queryMain(argv.slice(2));
      return { ...base, stdout: r.stdout, stderr: r.stderr, exitCode: r.code };
    }
    async close(): Promise<void> {}
  }

  it('runs the declared argv with validated parameters and decodes the printed exchange', async () => {
    const t = new InProcessTransport();
    const dns = new ProbeDnsTransport(t, { nodescopeRoot: '/opt/nodescope' });
    const e = await dns.query(ask(`big.${Z}`), { timeoutMs: 800 });
    expect(t.argvs[0]).toEqual([
      'node', '/opt/nodescope/dist/src/dns/query-main.js', '--server', '127.0.0.1', '--port', String(server.port), '--name', `big.${Z}`,
      '--type', 'A', '--proto', 'udp', '--timeout', '800', '--tries', '2',
    ]);
    expect(e).toMatchObject({ outcome: 'answer', truncated: true, transport: 'tcp', via: 'netns:test-node' });
    expect(e.answers).toHaveLength(many.length);
  });

  it('never runs anything for an invalid name', async () => {
    const t = new InProcessTransport();
    await expect(new ProbeDnsTransport(t, { nodescopeRoot: '/opt/n' }).query(ask('x;reboot'))).rejects.toBeInstanceOf(UserError);
    expect(t.argvs).toEqual([]);
  });

  it('reports a node without the query program, or garbage output, as failed', async () => {
    const missing = await new ProbeDnsTransport(new InProcessTransport('missing'), { nodescopeRoot: '/opt/n' }).query(ask(`web.${Z}`));
    expect(missing).toMatchObject({ outcome: 'failed', rcode: null });
    expect(missing.error).toMatch(/could not start/);
    const garbage = await new ProbeDnsTransport(new InProcessTransport('garbage'), { nodescopeRoot: '/opt/n' }).query(ask(`web.${Z}`));
    expect(garbage.outcome).toBe('failed');
  });

  it('is declared read-only and on demand, and its patterns refuse shell text', async () => {
    const spec = probe(DNS_QUERY_PROBE);
    expect([spec.readOnly, spec.onDemand, spec.where]).toEqual([true, true, 'node']);
    const cat = catalog();
    const values = { nodescopeRoot: '/opt/n', dnsName: `web.${Z}` };
    expect(fillArgv(spec.argv, cat.params, values)).toContain('10.96.0.10');
    for (const bad of [{ dnsName: 'a b' }, { dnsServer: '$(id)' }, { dnsType: 'ANY' }, { nodescopeRoot: 'relative/x' }, { dnsTries: '9' }]) {
      expect(() => fillArgv(spec.argv, cat.params, { ...values, ...bad })).toThrow(UserError);
    }
    expect(() => fillArgv(spec.argv, cat.params, { dnsName: 'web' })).toThrow(UserError); // no root given
    // A capture (every node probe) never runs it.
    const t = new InProcessTransport();
    const runs = await runProbes(t, { ids: undefined, catalog: { ...cat, probes: cat.probes.filter((p) => p.id === DNS_QUERY_PROBE || p.id === 'uname') } });
    expect(runs.map((r) => r.id)).toEqual(['uname']);
    expect(path.basename(spec.argv[1] ?? '')).toBe('query-main.js');
  });
});

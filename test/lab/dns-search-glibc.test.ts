/**
 * Lab: `dnsSearchPlan` against the real glibc stub resolver. Each case runs
 * `getent ahosts NAME` (getaddrinfo, AF_UNSPEC) in a network namespace whose
 * /etc/resolv.conf is the case's text (`ip netns exec` bind-mounts
 * /etc/netns/NS/resolv.conf), against dnsmasq on 127.0.0.1 that logs every query, knows a
 * few A records and answers NXDOMAIN for everything else. The logged query sequence
 * must equal the plan's, type by type. getent passes AI_ADDRCONFIG, so the namespace's
 * addresses matter: first only loopback (neither family counts), then an IPv4 address
 * on a veth with IPv6 disabled.
 *
 * Last, the real binary in tmux on that namespace: the DNS pane's `n` takes a typed name and
 * shows the questions the search sent to this dnsmasq, in glibc's order, and the answer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { dnsSearchPlan, type DnsOutcome, type DnsQueryType } from '../../src/analysis/dns-search.js';
import { parseResolvConf } from '../../src/parsers/resolv-conf.js';
import { digSearch } from '../../src/dns/dig-search.js';
import { digSearchText } from '../../src/report/dig-search.js';
import { ProbeDnsTransport } from '../../src/dns/probe.js';
import { readNodeResolvConf } from '../../src/dns/resolve.js';
import { LocalTransport } from '../../src/sources/local.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';

const NS = `nodescope-dns-${process.pid}`;
const ETC = `/etc/netns/${NS}`;
const LOG = path.join(tmpdir(), `nodescope-dns-${process.pid}.log`);
const RECORDS = ['kubernetes.default.svc.cluster.local', 'web.cluster.local', 'x.b.example'];

const labOk = labAvailable(['ip', 'dnsmasq', 'getent']);
const run = (argv: string[]) => spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 30_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let dnsmasq: ChildProcess | null = null;

/** The query lines dnsmasq logged since `from` (byte offset), as `TYPE name.`. */
function loggedQueries(from: number): string[] {
  const text = readFileSync(LOG, 'utf8').slice(from);
  return [...text.matchAll(/query\[(A|AAAA)\] (\S+) from 127\.0\.0\.1/g)].map((m) => `${m[1]} ${m[2]}.`);
}

/** What dnsmasq answers: the records have A only, so their AAAA is NODATA. */
const answer = (qname: string, type: DnsQueryType): DnsOutcome =>
  RECORDS.includes(qname.slice(0, -1)) ? (type === 'A' ? 'answer' : 'nodata') : 'nxdomain';

describe.runIf(labOk)('glibc getaddrinfo sends exactly the planned queries', () => {
  beforeAll(async () => {
    run(['ip', 'netns', 'del', NS]);
    run(['ip', 'netns', 'add', NS]);
    run(['ip', '-n', NS, 'link', 'set', 'lo', 'up']);
    mkdirSync(ETC, { recursive: true });
    writeFileSync(LOG, '');
    dnsmasq = spawn('ip', [
      'netns', 'exec', NS, 'dnsmasq', '--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts',
      '--log-queries', `--log-facility=${LOG}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--user=root',
      '--address=/#/', ...RECORDS.map((r, i) => `--host-record=${r},10.96.0.${i + 1}`),
    ], { stdio: 'ignore' });
    for (let i = 0; i < 50 && !readFileSync(LOG, 'utf8').includes('started'); i += 1) await sleep(100);
  });

  afterAll(() => {
    dnsmasq?.kill();
    run(['ip', 'netns', 'del', NS]);
    rmSync(ETC, { recursive: true, force: true });
    rmSync(LOG, { force: true });
  });

  const POD = ['search default.svc.cluster.local svc.cluster.local cluster.local', 'nameserver 127.0.0.1', 'options ndots:5'];

  /** Runs getent with `text` as resolv.conf; returns [logged, planned] query lists. */
  async function compare(lines: readonly string[], name: string, db: 'ahosts' | 'ahostsv4', addrconfig: { ipv4: boolean; ipv6: boolean }) {
    const text = `${lines.join('\n')}\n`;
    writeFileSync(path.join(ETC, 'resolv.conf'), text);
    const from = readFileSync(LOG, 'utf8').length;
    run(['ip', 'netns', 'exec', NS, 'getent', db, name]);
    await sleep(200);
    const conf = parseResolvConf(text, 'case').value;
    const plan = dnsSearchPlan(conf, name, { answer, addrconfig, family: db === 'ahostsv4' ? 'inet' : 'unspec' });
    return [loggedQueries(from), plan.steps.flatMap((s) => s.types.map((t) => `${t} ${s.qname}`))] as const;
  }

  describe('only loopback configured', () => {
    const lo = { ipv4: false, ipv6: false };
    it.each([
      ['pod, kubernetes.default (found on the 2nd search domain)', POD, 'kubernetes.default'],
      ['pod, an external name with 3 dots (not found)', POD, 's3.eu-west-1.amazonaws.com'],
      ['pod, an absolute name', POD, 'kubernetes.default.svc.cluster.local.'],
      ['ndots:1, a dotted name goes as-is first', ['search cluster.local', 'nameserver 127.0.0.1'], 'web.default'],
      ['no-tld-query, dotless', ['search svc.cluster.local', 'nameserver 127.0.0.1', 'options no-tld-query'], 'nosuch'],
      ['the root in the search list', ['search svc.cluster.local .', 'nameserver 127.0.0.1'], 'nosuch'],
      ['domain after search wins', ['search a.example', 'domain b.example', 'nameserver 127.0.0.1'], 'x'],
      ['single-request', [...POD, 'options single-request'], 'web'],
      ['no-aaaa (glibc 2.36)', [...POD, 'options no-aaaa'], 'nosuch'],
    ] as const)('%s', async (_title, lines, name) => {
      const [logged, planned] = await compare(lines, name, 'ahosts', lo);
      expect(planned.length).toBeGreaterThan(0);
      expect(logged).toEqual(planned);
    });

    it('AF_INET without an IPv4 address sends nothing (AI_ADDRCONFIG)', async () => {
      const [logged, planned] = await compare(POD, 'nosuch', 'ahostsv4', lo);
      expect([logged, planned]).toEqual([[], []]);
    });
  });

  /**
   * coredns#2289, coredns#2133: the questions a search really costs. glibc is the oracle:
   * `nodescope dig +search NAME` through the namespace (its captured resolv.conf, queries sent
   * from inside it) must send dnsmasq the same questions, name by name in the same order,
   * as getaddrinfo does, and print each with its answer and the count.
   */
  describe('coredns#2289, coredns#2133: nodescope dig +search sends what glibc sends', () => {
    const names = (qs: readonly string[]) => qs.map((q) => q.split(' ')[1]).filter((n, i, a) => n !== a[i - 1]);
    it.each([
      ['pod, kubernetes.default (2nd search domain)', POD, 'kubernetes.default', 'kubernetes.default.svc.cluster.local.'],
      ['pod, an absolute name (never searched)', POD, 'kubernetes.default.svc.cluster.local.', 'kubernetes.default.svc.cluster.local.'],
      ['pod, a 3-dot external name under ndots:5 (all 3 domains, then as-is)', POD, 's3.eu-west-1.amazonaws.com', null],
      ['ndots:1, a dotless name is searched first', ['search cluster.local', 'nameserver 127.0.0.1'], 'web', 'web.cluster.local.'],
    ] as const)('%s', async (_title, lines, name, answeredBy) => {
      writeFileSync(path.join(ETC, 'resolv.conf'), `${lines.join('\n')}\n`);
      let from = readFileSync(LOG, 'utf8').length;
      run(['ip', 'netns', 'exec', NS, 'getent', 'ahosts', name]);
      await sleep(200);
      const glibc = loggedQueries(from);
      const transport = new LocalTransport({ netns: NS });
      const captured = await readNodeResolvConf(transport);
      expect(captured?.conf.search.join(' ')).toBe(parseResolvConf(`${lines.join('\n')}\n`, 'case').value.search.join(' '));
      from = readFileSync(LOG, 'utf8').length;
      const r = await digSearch({ name, dns: new ProbeDnsTransport(transport), resolv: { conf: captured!.conf, origin: 'node' } });
      await sleep(200);
      const ours = loggedQueries(from);
      expect(names(ours)).toEqual(names(glibc));
      expect([...ours].sort()).toEqual([...glibc].sort());
      expect(r.answeredBy).toBe(answeredBy);
      expect(r.queries).toBe(glibc.length);
      const text = digSearchText(r, null);
      expect(text).toContain(`;; ${glibc.length} questions sent`);
      if (answeredBy) expect(text).toMatch(new RegExp(`${answeredBy.replace(/\./g, '\\.')}\\s+\\d+\\s+IN\\s+A\\s+10\\.96\\.0\\.\\d`));
    });
  });

  describe('an IPv4 address, IPv6 disabled', () => {
    beforeAll(() => {
      run(['ip', '-n', NS, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'peer0']);
      run(['ip', 'netns', 'exec', NS, 'sysctl', '-qw', 'net.ipv6.conf.eth0.disable_ipv6=1']);
      run(['ip', '-n', NS, 'addr', 'add', '10.244.0.9/24', 'dev', 'eth0']);
      run(['ip', '-n', NS, 'link', 'set', 'eth0', 'up']);
    });

    it('AF_UNSPEC asks for A only (AI_ADDRCONFIG)', async () => {
      const [logged, planned] = await compare(POD, 'kubernetes.default', 'ahosts', { ipv4: true, ipv6: false });
      expect(planned).toEqual(['A kubernetes.default.default.svc.cluster.local.', 'A kubernetes.default.svc.cluster.local.']);
      expect(logged).toEqual(planned);
    });
  });

  /** Issue 19 item 9: the TUI's DNS pane takes any name and resolves it as `dig +search` does. */
  describe.runIf(tmuxAvailable('the DNS pane name test'))('the DNS pane in tmux (the real binary)', () => {
    it('n, a typed name, Enter: each question the search sent this dnsmasq, in order, and the answer', async () => {
      writeFileSync(path.join(ETC, 'resolv.conf'), `${POD.join('\n')}\n`);
      const tui = new TmuxSession(`${NS}-tui`);
      expect(tui.start(`LANG=C.UTF-8 node ${BINARY} --netns ${NS} --lang en`, 110, 32)).toBe(0);
      try {
        await tui.waitFor(['q:quit'], 30_000);
        await tui.keys('5');
        await tui.waitFor(['n:resolve a name']);
        await tui.keys('n', 'kubernetes.default');
        await tui.waitFor(['name to resolve: kubernetes.default']);
        const from = readFileSync(LOG, 'utf8').length;
        await tui.keys('Enter');
        const screen = await tui.waitFor(['answered by kubernetes.default.svc.cluster.local', 'A 10.96.0.1'], 20_000);
        expect(screen).toContain('kubernetes.default · as a pod resolves it (dig +search)');
        expect(screen).toContain(`search "kubernetes.default" (node's resolv.conf, ndots:5, @127.0.0.1)`);
        expect(screen).toMatch(/1 kubernetes\.default\.default\.svc\.cluster\.local\s+A NXDOMAIN\s+AAAA NXDOMAIN/);
        expect(screen).toMatch(/2 kubernetes\.default\.svc\.cluster\.local\s+A NOERROR\s+AAAA NOERROR/);
        expect(screen).toContain('answered by kubernetes.default.svc.cluster.local: 4 queries');
        expect(screen).toMatch(/^ {2}A 10\.96\.0\.1\s*$/m);
        // dnsmasq heard exactly those questions, name by name in that order.
        const heard = loggedQueries(from).map((q) => q.split(' ')[1]).filter((n, i, a) => n !== a[i - 1]);
        expect(heard).toEqual(['kubernetes.default.default.svc.cluster.local.', 'kubernetes.default.svc.cluster.local.']);
        await tui.keys('Escape');
        await tui.waitFor(['n:resolve a name']);
        expect(tui.screen()).not.toContain('as a pod resolves it');
      } finally {
        tui.kill();
      }
    });
  });
});

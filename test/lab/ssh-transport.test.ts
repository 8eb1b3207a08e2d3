/**
 * The SSH source against a real OpenSSH server running inside the lab's node namespace
 * (see ssh-lab.ts for the setup and why): key and agent authentication, known_hosts
 * checks (unknown key refused with its fingerprint, accepted only by flag and only for a
 * host with no entry, a changed key or one of another type always refused), probes that see the node's netfilter rules, ProxyJump through a
 * bastion, a TCP forward from the node, the link cut mid-session and resumed, and a
 * non-root user without sudo rights reported per probe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BugError, TransportError, UserError } from '../../src/errors.js';
import { runProbe, runProbes } from '../../src/sources/probe-runner.js';
import { catalog, probe } from '../../src/sources/catalog.js';
import { openSsh, type SshOptions, type SshTransport } from '../../src/sources/ssh.js';
import { dnsTransportFor } from '../../src/dns/open.js';
import { Session } from '../../src/collect/session.js';
import { labAvailable } from '../helpers/lab.js';
import { runOk, sleep } from './exec.js';
import { LAB_SCENARIO, labDown, labUp, stopProcess, type LabHandle } from './lab.js';
import { makeKey, makeUser, nsSocket, sshdSessions, startSshd, type KeyPair } from './ssh-lab.js';
import type { LabProcess } from './state.js';

const PREFIX = 'nssh-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl', 'ssh-keygen', 'ssh-agent', 'ssh-add', 'sudo', 'pgrep', 'useradd']);
const nodeIP = LAB_SCENARIO.nodes.find((n) => n.name === LAB_SCENARIO.nodeName)?.internalIP ?? '';
const bastionIP = LAB_SCENARIO.outsideIP;
const USER = 'nssh-user';

let lab: LabHandle;
let dir: string;
let home: string;
let hostKey: KeyPair;
let userKey: KeyPair;
let sshd: LabProcess;
let removeUser: (() => Promise<void>) | undefined;
const open: SshTransport[] = [];

/** known_hosts holding `lines`, hashed by ssh-keygen -H like a hardened client would keep it. */
async function knownHosts(name: string, lines: string[]): Promise<string> {
  const file = path.join(dir, name);
  writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
  await runOk(['ssh-keygen', '-H', '-f', file]);
  return file;
}

/** Opens the transport from the outside namespace with the test's HOME; every option overridable. */
async function connect(overrides: Partial<SshOptions> = {}): Promise<SshTransport> {
  const t = await openSsh({ target: `root@${nodeIP}`, home, agentSocket: null, connectSocket: nsSocket(lab.names.outside), backoffMs: 200, maxBackoffMs: 1000, ...overrides });
  open.push(t);
  return t;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

beforeAll(async () => {
  if (!canRun) return;
  lab = await labUp('iptables', { prefix: PREFIX });
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-ssh-'));
  home = path.join(dir, 'home');
  mkdirSync(path.join(home, '.ssh'), { recursive: true });
  hostKey = await makeKey(path.join(dir, 'host_ed25519'), 'node-host-key');
  userKey = await makeKey(path.join(home, '.ssh', 'id_ed25519'), 'sre@laptop');
  removeUser = await makeUser(USER, path.join(dir, 'user-home'));
  sshd = await startSshd(lab.names, { key: 'sshd', ns: lab.names.node, address: nodeIP, port: 22, dir, hostKey, authorized: [userKey.publicLine] });
}, 120_000);

// Each test's connections end with it, so cutting links in one test touches no other.
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

afterAll(async () => {
  if (!canRun) return;
  await labDown({ prefix: PREFIX });
  await removeUser?.();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.runIf(canRun)('SSH source against sshd in the node namespace', () => {
  it('authenticates with the key file, verifies the hashed known_hosts entry, and probes see the node', async () => {
    const t = await connect({ knownHostsFiles: [await knownHosts('kh-ok', [`${nodeIP} ${hostKey.publicLine}`])] });
    expect(t.state().state).toBe('connected');
    const runs = await runProbes(t, { ids: ['uname', 'ip-addr', 'iptables-save'] });
    const byId = Object.fromEntries(runs.map((r) => [r.id, r]));
    expect(byId['uname']!.status).toBe('ok');
    // root needs no sudo: the executed argv is the catalog's, after the locale wrapper only.
    expect(byId['iptables-save']!.result.argv).toEqual(['env', 'LC_ALL=C', 'iptables-save', '-c']);
    expect(byId['iptables-save']!.result.stdout).toContain(':KUBE-SERVICES');
    expect(byId['ip-addr']!.result.stdout).toContain(`"local":"${nodeIP}"`);
  });

  it('authenticates through ssh-agent when no key file exists', async () => {
    const sock = path.join(dir, 'agent.sock');
    const agent: ChildProcess = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    try {
      await until('ssh-agent socket', async () => (await runOk(['test', '-S', sock]).then(() => true, () => false)));
      await runOk(['sh', '-c', `SSH_AUTH_SOCK=${sock} ssh-add ${userKey.file}`]);
      const emptyHome = path.join(dir, 'empty-home');
      mkdirSync(emptyHome, { recursive: true });
      const t = await connect({ home: emptyHome, agentSocket: sock, knownHostsFiles: [await knownHosts('kh-agent', [`${nodeIP} ${hostKey.publicLine}`])] });
      expect((await runProbe(t, probe('uname'))).status).toBe('ok');
    } finally {
      agent.kill();
    }
  });

  it('refuses an unknown host key with its SHA256 fingerprint, and adds it only with --accept-new-host-key', async () => {
    const kh = path.join(dir, 'kh-new');
    const refused = await connect({ knownHostsFiles: [kh] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as UserError).message).toContain(hostKey.fingerprint);
    expect(() => readFileSync(kh)).toThrow(); // nothing written

    const t = await connect({ knownHostsFiles: [kh], acceptNewHostKey: true });
    expect((await runProbe(t, probe('uname'))).status).toBe('ok');
    const again = await connect({ knownHostsFiles: [kh] });
    expect(again.state().state).toBe('connected');
    expect(readFileSync(kh, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('refuses a changed host key even with --accept-new-host-key, naming both fingerprints', async () => {
    const other = await makeKey(path.join(dir, 'impostor'), 'impostor');
    const kh = await knownHosts('kh-changed', [`${nodeIP} ${other.publicLine}`]);
    const before = readFileSync(kh, 'utf8');
    const refused = await connect({ knownHostsFiles: [kh], acceptNewHostKey: true }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as UserError).message).toContain(hostKey.fingerprint);
    expect((refused as UserError).message).toContain(other.fingerprint);
    expect(readFileSync(kh, 'utf8')).toBe(before);
  });

  describe('a second sshd on port 2022 that offers only an RSA host key ([host]:port entries)', () => {
    let rsaKey: KeyPair;
    const rsaName = `[${nodeIP}]:2022`;
    beforeAll(async () => {
      rsaKey = await makeKey(path.join(dir, 'host_rsa'), 'node-rsa-host-key', 'rsa');
      await startSshd(lab.names, { key: 'sshd-rsa', ns: lab.names.node, address: nodeIP, port: 2022, dir, hostKey: rsaKey, authorized: [userKey.publicLine] });
    }, 60_000);

    it.each([false, true])('known_hosts holding only an ed25519 key for the host: the RSA key is refused as changed (accept-new %s), the file untouched', async (acceptNewHostKey) => {
      const kh = await knownHosts(`kh-type-${acceptNewHostKey}`, [`${rsaName} ${hostKey.publicLine}`]);
      const before = readFileSync(kh, 'utf8');
      const refused = await connect({ target: `root@${nodeIP}:2022`, knownHostsFiles: [kh], acceptNewHostKey }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(UserError);
      const message = (refused as UserError).message;
      expect(message).toContain('HAS CHANGED');
      expect(message).toContain(`ssh-rsa ${rsaKey.fingerprint}`); // the offered key
      expect(message).toContain(`${kh}:1 holds ssh-ed25519 ${hostKey.fingerprint}`); // the line with the other key
      expect(readFileSync(kh, 'utf8')).toBe(before);
    });

    it('a host with no entry (other hosts and an unrelated @revoked key listed) is accepted with the flag and appended as [host]:port', async () => {
      const impostor = await makeKey(path.join(dir, 'revoked-key'), 'revoked');
      const kh = await knownHosts('kh-type-new', [`${nodeIP} ${hostKey.publicLine}`]);
      writeFileSync(kh, readFileSync(kh, 'utf8') + `@revoked * ${impostor.publicLine}\n`);
      const before = readFileSync(kh, 'utf8');
      await expect(connect({ target: `root@${nodeIP}:2022`, knownHostsFiles: [kh] })).rejects.toBeInstanceOf(UserError);
      const t = await connect({ target: `root@${nodeIP}:2022`, knownHostsFiles: [kh], acceptNewHostKey: true });
      expect((await runProbe(t, probe('uname'))).status).toBe('ok');
      const added = readFileSync(kh, 'utf8').slice(before.length);
      expect(added.split('\n').filter(Boolean)).toHaveLength(1);
      // ssh-keygen -F finds the appended (hashed) line under the [host]:port name, with the RSA key.
      const found = await runOk(['ssh-keygen', '-F', rsaName, '-f', kh]);
      expect(found.stdout).toContain(rsaKey.publicLine.split(' ')[1]);
      const again = await connect({ target: `root@${nodeIP}:2022`, knownHostsFiles: [kh] });
      expect(again.state().state).toBe('connected');
    });
  });

  it('reaches the node through a ProxyJump bastion (forwarded channel of the first connection)', async () => {
    await startSshd(lab.names, { key: 'bastion', ns: lab.names.outside, address: bastionIP, port: 2222, dir, hostKey, authorized: [userKey.publicLine] });
    writeFileSync(path.join(home, '.ssh', 'config'), `Host lab-node\n  HostName ${nodeIP}\n  User root\n  ProxyJump root@${bastionIP}:2222\n`);
    try {
      const kh = await knownHosts('kh-jump', [`${nodeIP} ${hostKey.publicLine}`, `[${bastionIP}]:2222 ${hostKey.publicLine}`]);
      const t = await connect({ target: 'lab-node', knownHostsFiles: [kh] });
      expect(t.endpoint.jumps.map((j) => `${j.hostName}:${j.port}`)).toEqual([`${bastionIP}:2222`]);
      const r = await runProbe(t, probe('ip-addr'));
      expect(r.result.stdout).toContain(`"local":"${nodeIP}"`);
    } finally {
      rmSync(path.join(home, '.ssh', 'config'));
    }
  });

  it('openTcp connects from the node to a pod (direct-tcpip)', async () => {
    const t = await connect({ knownHostsFiles: [await knownHosts('kh-tcp', [`${nodeIP} ${hostKey.publicLine}`])] });
    const pod = LAB_SCENARIO.pods.find((p) => p.role === 'web' && p.nodeName === LAB_SCENARIO.nodeName)!;
    const s = await t.openTcp(pod.ip, pod.httpPort ?? 8080);
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      s.on('data', (d: Buffer) => (text += d.toString()));
      s.on('close', () => resolve(text));
      s.end(`GET / HTTP/1.0\r\nHost: x\r\n\r\n`);
    });
    expect(reply).toMatch(/^HTTP\/1\.[01] 200/);
    expect(reply).toContain(pod.name);
  });

  it('resolves a Service name through a forwarded channel to the kube-dns ClusterIP (DNS over TCP)', async () => {
    const t = await connect({ knownHostsFiles: [await knownHosts('kh-dns', [`${nodeIP} ${hostKey.publicLine}`])] });
    const dns = dnsTransportFor(t);
    expect(dns.kind).toBe('tcp-stream');
    const exchange = await dns.query({ server: '10.96.0.10', port: 53, qname: 'web.default.svc.cluster.local', qtype: 'A' });
    expect(exchange.rcode).toBe('NOERROR');
    expect(exchange.transport).toBe('tcp');
    expect(exchange.answers.filter((a) => a.type === 'A').map((a) => a.data)).toEqual(['10.96.12.34']);
    await dns.close();
  });

  it('a cut link fails refreshes with TransportError, the session keeps its data, and the link comes back', async () => {
    const t = await connect({ knownHostsFiles: [await knownHosts('kh-cut', [`${nodeIP} ${hostKey.publicLine}`])] });
    const session = new Session({ transport: t, live: true, intervalMs: 3_600_000 });
    await session.start();
    const first = session.getState();
    expect(first.snapshot?.iptables?.value).toBeTruthy();

    for (const pid of await sshdSessions(sshd.pid)) process.kill(pid, 'SIGKILL');
    await until('the link to drop', () => t.state().state !== 'connected');
    await expect(runProbe(t, probe('uname'))).rejects.toBeInstanceOf(TransportError);
    session.refreshNow();
    await until('the failed refresh', () => !session.getState().refreshing && session.getState().error !== null);
    expect(session.getState().snapshot).toBe(first.snapshot);
    expect(session.getState().dataAt).toBe(first.dataAt);

    const failedRefresh = session.getState().error;
    expect(failedRefresh).toMatch(/SSH connection .* is down/);

    await until('the reconnect', () => t.state().state === 'connected');
    session.refreshNow();
    await until('a refresh over the new link', () => !session.getState().refreshing && session.getState().dataAt! > first.dataAt!);
    // Optional probes absent from the lab (IPVS) may still be named; the link is not.
    expect(session.getState().error ?? '').not.toMatch(/SSH connection/);
    expect(session.getState().snapshot).not.toBe(first.snapshot);
    await session.stop();
  });

  it('a non-root user without sudo rights: root probes fail one by one with sudo\'s message, the others run', async () => {
    const t = await connect({ target: `${USER}@${nodeIP}`, knownHostsFiles: [await knownHosts('kh-user', [`${nodeIP} ${hostKey.publicLine}`])] });
    const runs = await runProbes(t, { ids: ['uname', 'ip-addr', 'iptables-save', 'nft-json'] });
    const byId = Object.fromEntries(runs.map((r) => [r.id, r]));
    expect(byId['uname']!.status).toBe('ok');
    expect(byId['ip-addr']!.status).toBe('ok');
    for (const id of ['iptables-save', 'nft-json']) {
      expect(byId[id]!.status).toBe('failed');
      expect(byId[id]!.result.exitCode).toBe(1);
      expect(byId[id]!.result.stderr).toContain('sudo: a password is required');
      expect(byId[id]!.result.argv.slice(0, 3)).toEqual(['sudo', '-n', '--']);
    }
  });

  it('runs only catalog probes, and a probe past its timeout is reported timed out', async () => {
    const t = await connect({ knownHostsFiles: [await knownHosts('kh-misc', [`${nodeIP} ${hostKey.publicLine}`])] });
    await expect(t.exec(['sh', '-c', 'id'], { timeoutMs: 5000 })).rejects.toBeInstanceOf(BugError);
    const r = await runProbe(t, { ...probe('conntrack'), timeoutMs: 1 });
    expect(r.status).toBe('timeout');
    expect(r.result.exitCode).toBeNull();
    expect((await runProbe(t, probe('uname'))).status).toBe('ok'); // the connection survives
  });

  it('feeds a probe that reads stdin its lines (bpftool batch: the LB pane\'s lookups), and the channel ends its stdin', async () => {
    const t = await connect({ knownHostsFiles: [await knownHosts('kh-stdin', [`${nodeIP} ${hostKey.publicLine}`])] });
    expect(t.feedsStdin).toBe(true);
    const line = 'map lookup pinned /sys/fs/bpf/nodescope-none/cilium_lb4_services_v2 key hex 0a 60 00 01 01 bb 00 00 06 00 00 00';
    const r = await runProbe(t, probe('bpf-lb-lookup'), {}, catalog(), { stdin: [line] });
    // bpftool echoes each command it read from stdin; the pin does not exist, so it fails there.
    const out = JSON.parse(r.result.stdout) as { command: string[]; output: unknown }[];
    expect(out.map((o) => o.command.join(' '))).toEqual([line]);
    expect(r.status).toBe('failed');
  });

  it('a host key that changed while reconnecting stops the reconnects (failed), never connects', async () => {
    const t = await connect({ knownHostsFiles: [await knownHosts('kh-mitm', [`${nodeIP} ${hostKey.publicLine}`])] });
    // A stopped listener leaves running sessions alone (OpenSSH): end both.
    const sessions = await sshdSessions(sshd.pid);
    await stopProcess(lab.names, sshd);
    for (const pid of sessions) process.kill(pid, 'SIGKILL');
    await until('the link to drop', () => t.state().state !== 'connected');
    const other = await makeKey(path.join(dir, 'other_host_key'), 'other-host');
    sshd = await startSshd(lab.names, { key: 'sshd-other', ns: lab.names.node, address: nodeIP, port: 22, dir, hostKey: other, authorized: [userKey.publicLine] });
    await until('reconnecting to give up', () => t.state().state === 'failed');
    expect(t.state().error).toContain(other.fingerprint);
    await expect(runProbe(t, probe('uname'))).rejects.toBeInstanceOf(TransportError);
  });
});

/**
 * A real OpenSSH server for the SSH source's lab tests.
 *
 * The setup, and why: the node's "shell" is an `sshd` started inside the lab's node
 * namespace (`labSpawn`), so every probe it runs sees the node's netfilter rules,
 * addresses and conntrack table — exactly what SSH into a real node gives. The client
 * (nodescope's SSH transport, in this test process or the built CLI) connects from the
 * lab's `outside` namespace, the "SRE laptop on the LAN": in-process, through a TCP socket
 * opened inside that namespace by a tiny helper and handed to this process over Node's
 * IPC channel (the socket's file descriptor, not a relay: killing sshd really cuts it);
 * the CLI runs under `ip netns exec <outside>`. Host and user keys are made by ssh-keygen
 * in a temp dir; sshd runs `-D -e -f <temp config>`, accepts only those keys, and uses no
 * PAM, no passwords and no file outside the temp dir except /run/sshd (privilege separation).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { SocketFactory } from '../../src/sources/ssh-connect.js';
import { run, runOk, sleep } from './exec.js';
import { labSpawn, type LabNames, type LabProcess } from './lab.js';

/** A key pair made by ssh-keygen: private key path, public line, and ssh-keygen's SHA256 fingerprint. */
export interface KeyPair {
  readonly file: string;
  readonly publicLine: string;
  readonly fingerprint: string;
}

/** Makes a key with ssh-keygen (no passphrase): ed25519 unless `type` says `rsa` (3072 bits). */
export async function makeKey(file: string, comment = 'nodescope-test', type: 'ed25519' | 'rsa' = 'ed25519'): Promise<KeyPair> {
  mkdirSync(path.dirname(file), { recursive: true });
  await runOk(['ssh-keygen', '-q', '-t', type, ...(type === 'rsa' ? ['-b', '3072'] : []), '-N', '', '-C', comment, '-f', file]);
  const fp = await runOk(['ssh-keygen', '-l', '-E', 'sha256', '-f', `${file}.pub`]);
  return { file, publicLine: readFileSync(`${file}.pub`, 'utf8').trim(), fingerprint: fp.stdout.split(/\s+/)[1] ?? '' };
}

/** Where and how an sshd of the lab listens. */
export interface SshdSpec {
  readonly key: string;
  readonly ns: string;
  readonly address: string;
  readonly port: number;
  readonly dir: string;
  readonly hostKey: KeyPair;
  /** authorized_keys lines (for every allowed user). */
  readonly authorized: readonly string[];
}

/** Starts sshd in `spec.ns` and waits until it accepts TCP connections. */
export async function startSshd(names: LabNames, spec: SshdSpec): Promise<LabProcess> {
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  // sshd reads authorized_keys as the logging-in user: a non-root user must reach it.
  chmodSync(spec.dir, 0o755);
  const auth = path.join(spec.dir, `${spec.key}.authorized_keys`);
  writeFileSync(auth, spec.authorized.join('\n') + '\n');
  chmodSync(auth, 0o644);
  const config = path.join(spec.dir, `${spec.key}.sshd_config`);
  writeFileSync(
    config,
    [
      `ListenAddress ${spec.address}:${spec.port}`,
      `HostKey ${spec.hostKey.file}`,
      'PidFile none',
      `AuthorizedKeysFile ${auth}`,
      'StrictModes no',
      'UsePAM no',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'AllowTcpForwarding yes',
      'UseDNS no',
      'LogLevel VERBOSE',
      '',
    ].join('\n'),
  );
  const proc = await labSpawn(names, spec.key, spec.ns, ['/usr/sbin/sshd', '-D', '-e', '-f', config]);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = await nsSocket(spec.ns)(spec.address, spec.port).catch(() => null);
    if (s) {
      s.destroy();
      return proc;
    }
    if (Date.now() > deadline) throw new Error(`sshd ${spec.key} did not listen on ${spec.address}:${spec.port}; log: ${readFileSync(proc.log, 'utf8')}`);
    await sleep(100);
  }
}

const CONNECT_HELPER = `
const net = require('node:net');
const [host, port] = process.argv.slice(-2);
const s = net.connect({ host, port: Number(port) });
s.on('connect', () => process.send('ok', s, () => process.disconnect()));
s.on('error', (e) => { process.send('error:' + e.message, () => process.disconnect()); });
`;

/**
 * A {@link SocketFactory} whose TCP connections are made inside network namespace `ns`:
 * a helper started with `ip netns exec ns node` connects and passes the connected
 * socket's descriptor back over IPC, then exits.
 */
export function nsSocket(ns: string): SocketFactory {
  return (host, port) =>
    new Promise<Duplex>((resolve, reject) => {
      const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', CONNECT_HELPER, '--', host, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      let done = false;
      child.on('message', (m: unknown, handle: unknown) => {
        done = true;
        if (m === 'ok' && handle) resolve(handle as Socket);
        else reject(new Error(`connect ${host}:${port} in ${ns}: ${String(m)}`));
      });
      child.on('exit', (code) => {
        if (!done) reject(new Error(`connect helper in ${ns} exited ${code}`));
      });
    });
}

/** Pids of the per-connection sshd processes under the listener `pid`. */
export async function sshdSessions(pid: number): Promise<number[]> {
  const r = await run(['pgrep', '-P', String(pid)]);
  return r.stdout.split('\n').map(Number).filter((p) => Number.isInteger(p) && p > 1);
}

/** A local user for non-root tests: created (no password login: `*`), removed by the returned function. */
export async function makeUser(name: string, home: string): Promise<() => Promise<void>> {
  await run(['userdel', name]);
  mkdirSync(home, { recursive: true });
  await runOk(['useradd', '-M', '-d', home, '-s', '/bin/sh', '-p', '*', name]);
  return async () => {
    await run(['userdel', name]);
  };
}

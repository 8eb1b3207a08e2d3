/**
 * One SSH hop with ssh2: host key checked against known_hosts before anything else,
 * then public-key authentication through the ssh-agent (`SSH_AUTH_SOCK`) and the
 * identity files. An unknown or changed host key stops with a `UserError` naming the
 * key's SHA256 fingerprint; a key is added only when the caller says so
 * (`--accept-new-host-key`) and the host has no known_hosts entry at all (see
 * ssh-known-hosts.ts for the rule); a changed or revoked key is never accepted.
 */
import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import ssh2, { type AnyAuthMethod, type Client as SshClient, type ConnectConfig } from 'ssh2';
import { said, TransportError, UserError, type Said } from '../errors.js';
import {
  appendKnownHost, fingerprintSha256, keyTypeOfBlob, knownHostsName, knownKeyTypes, loadKnownHosts, verifyHostKey, type HostKeyVerdict,
} from './ssh-known-hosts.js';
import type { SshEndpoint } from './ssh-target.js';

const { Client, utils } = ssh2;

/** Opens the first hop's byte stream (default: a TCP connection). */
export type SocketFactory = (host: string, port: number) => Promise<Duplex>;

/** Host key policy and credentials shared by every hop. */
export interface HopOptions {
  /** known_hosts files to read; the first is where an accepted key is appended. */
  readonly knownHostsFiles: readonly string[];
  /** Read-only extra known_hosts (e.g. `/etc/ssh/ssh_known_hosts`). */
  readonly globalKnownHostsFiles?: readonly string[];
  readonly acceptNewHostKey: boolean;
  /** ssh-agent socket; `undefined` = none. */
  readonly agentSocket: string | undefined;
  /** SSH keep-alive period in milliseconds (0 = off); 3 unanswered ones drop the link. */
  readonly keepaliveMs: number;
  /** Handshake timeout in milliseconds. */
  readonly readyTimeoutMs: number;
}

/** ssh2's default host key algorithms (lib/protocol/constants.js), to re-order known types first. */
const HOST_KEY_ALGORITHMS = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] as const;

function algorithmsFor(keyType: string): string[] {
  return keyType === 'ssh-rsa' ? ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'] : [keyType];
}

/** Host key algorithms with those of already-known key types first, as OpenSSH orders them. */
export function hostKeyOrder(knownTypes: readonly string[]): string[] {
  const preferred = knownTypes.flatMap(algorithmsFor).filter((a) => (HOST_KEY_ALGORITHMS as readonly string[]).includes(a));
  return [...new Set([...preferred, ...HOST_KEY_ALGORITHMS])];
}

/** The error for a refused host key: what was presented, what was expected, and what to do. */
export function hostKeyError(verdict: Exclude<HostKeyVerdict, { kind: 'known' }>, name: string, blob: Buffer, firstFile: string): UserError {
  const fp = `${keyTypeOfBlob(blob)} ${fingerprintSha256(blob)}`;
  switch (verdict.kind) {
    case 'unknown':
      return new UserError(said('ue.hostKey.unknown', { name, fp }), said('ue.hostKey.unknownHint', { file: firstFile }));
    case 'changed':
      return new UserError(
        said('ue.hostKey.changed', { name, fp, file: verdict.entry.file, line: verdict.entry.line, keyType: verdict.entry.keyType, known: fingerprintSha256(verdict.entry.key), other: verdict.sameType ? '' : said('ue.hostKey.otherType') }),
        said('ue.hostKey.changedHint', { name, file: verdict.entry.file, orAdd: verdict.sameType ? '' : said('ue.hostKey.orAdd') }),
      );
    case 'cert-authority':
      return new UserError(said('ue.hostKey.ca', { name, fp, file: verdict.entry.file, line: verdict.entry.line }), said('ue.hostKey.caHint', { file: firstFile }));
    case 'revoked':
      return new UserError(said('ue.hostKey.revoked', { name, file: verdict.entry.file, line: verdict.entry.line, fp }), said('ue.hostKey.revokedHint'));
  }
}

/** The authentication methods to try: agent first, then each readable unencrypted key file. */
export function authMethods(endpoint: SshEndpoint, agentSocket: string | undefined): { methods: AnyAuthMethod[]; notes: string[] } {
  const methods: AnyAuthMethod[] = [];
  const notes: string[] = [];
  if (agentSocket) methods.push({ type: 'agent', username: endpoint.user, agent: agentSocket });
  for (const file of endpoint.identityFiles) {
    let text: Buffer;
    try {
      text = readFileSync(file);
    } catch (e) {
      notes.push(`${file}: ${(e as Error).message}`);
      continue;
    }
    const parsed = utils.parseKey(text);
    if (parsed instanceof Error) {
      // An encrypted key needs a passphrase nodescope cannot ask for: load it into ssh-agent.
      notes.push(`${file}: ${parsed.message}${/encrypt|passphrase/i.test(parsed.message) ? ' (add it to ssh-agent with ssh-add)' : ''}`);
      continue;
    }
    methods.push({ type: 'publickey', username: endpoint.user, key: text });
  }
  return { methods, notes };
}

/** Opens a TCP connection; rejects with the socket error. */
export const tcpSocket: SocketFactory = (host, port) =>
  new Promise((resolve, reject) => {
    const s = netConnect({ host, port });
    s.once('connect', () => {
      s.removeListener('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });

/**
 * Connects one hop over `sock` and resolves with the ready client. Rejects with
 * `UserError` for a refused host key or failed authentication, `TransportError` when
 * the link fails (handshake timeout, reset).
 */
export function connectHop(endpoint: SshEndpoint, sock: Duplex, options: HopOptions): Promise<SshClient> {
  const name = knownHostsName(endpoint.hostKeyAlias, endpoint.port);
  const entries = loadKnownHosts([...options.knownHostsFiles, ...(options.globalKnownHostsFiles ?? [])]);
  const { methods, notes } = authMethods(endpoint, options.agentSocket);
  if (methods.length === 0) {
    return Promise.reject(
      new UserError(said('ue.ssh.noCreds', { target: `${endpoint.user}@${endpoint.alias}`, notes: notes.length ? ` (${notes.join('; ')})` : '' }), said('ue.ssh.noCredsHint')),
    );
  }
  const firstFile = options.knownHostsFiles[0] ?? '~/.ssh/known_hosts';
  let refused: UserError | undefined;
  const client = new Client();
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      client.end();
      sock.destroy();
      reject(e);
    };
    client.once('ready', () => {
      settled = true;
      resolve(client);
    });
    // ssh2 may emit several errors for one failure, and errors after ready surface as
    // 'close' too: one permanent listener, so none is ever thrown.
    client.on('error', (e: Error & { level?: string }) => {
      if (settled) return;
      if (refused) return fail(refused);
      if (/authentication methods failed/i.test(e.message)) {
        return fail(new UserError(said('ue.ssh.refused', { target: `${endpoint.user}@${endpoint.alias}`, tried: methods.map((m) => (m.type === 'agent' ? 'ssh-agent' : said('ue.ssh.keyFile'))).reduce<string | Said>((a, b) => (a === '' ? b : said('ue.comma', { a, b })), ''), notes: notes.length ? `; ${notes.join('; ')}` : '' }), said('ue.ssh.refusedHint')));
      }
      fail(new TransportError(`SSH to ${endpoint.alias} (${endpoint.hostName}:${endpoint.port}) failed: ${e.message}`, `ssh:${endpoint.alias}`, [], null, ''));
    });
    const config: ConnectConfig = {
      sock,
      username: endpoint.user,
      authHandler: methods,
      keepaliveInterval: options.keepaliveMs,
      keepaliveCountMax: 3,
      readyTimeout: options.readyTimeoutMs,
      algorithms: { serverHostKey: hostKeyOrder(knownKeyTypes(entries, name)) as NonNullable<ConnectConfig['algorithms']>['serverHostKey'] },
      hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
        const verdict = verifyHostKey(entries, name, key);
        if (verdict.kind === 'known') return verify(true);
        if (verdict.kind === 'unknown' && options.acceptNewHostKey) {
          try {
            appendKnownHost(firstFile, name, key);
          } catch (e) {
            refused = new UserError(said('ue.hostKey.cannotAdd', { name, file: firstFile, detail: (e as Error).message }));
            return verify(false);
          }
          return verify(true);
        }
        refused = hostKeyError(verdict, name, key, firstFile);
        verify(false);
      },
    };
    client.connect(config);
  });
}

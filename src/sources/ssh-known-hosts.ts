/**
 * OpenSSH known_hosts files (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"): reading, looking a
 * host up, verifying a presented host key, and the line `--accept-new-host-key` appends.
 *
 * Supported: plain and comma-separated host patterns with `*`/`?` wildcards and `!`
 * negation, the `[host]:port` form for ports other than 22, hashed entries
 * (`|1|base64(salt)|base64(HMAC-SHA1(salt, name))`), the `@revoked` marker (a revoked
 * key is refused, whatever host it is presented for), comments and blank lines.
 * `@cert-authority` lines are read but never verify a key (nodescope does not check host
 * certificates); a host they name is not "new", so `--accept-new-host-key` adds nothing for it.
 *
 * The accept-new rule, as OpenSSH's `StrictHostKeyChecking=accept-new` (ssh 9.2 against an
 * sshd offering only RSA, known_hosts holding only ed25519: "REMOTE HOST IDENTIFICATION HAS
 * CHANGED"): a key is added only for a host with no entry at all. A host known under
 * another key type is refused as a changed key: a man-in-the-middle would otherwise only
 * have to offer a type the client has not seen yet. Stricter than OpenSSH: a host named
 * by a `@cert-authority` line is not new either (nodescope cannot check its certificate).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One key line of a known_hosts file. `line` is 1-based. */
export interface KnownHostEntry {
  readonly file: string;
  readonly line: number;
  readonly marker: 'revoked' | 'cert-authority' | null;
  /** The host field as written (patterns or a `|1|` hash). */
  readonly hosts: string;
  /** Key type, e.g. `ssh-ed25519`. */
  readonly keyType: string;
  /** The public key blob (base64-decoded). */
  readonly key: Buffer;
}

/**
 * The outcome of checking a presented key: `unknown` = the host has no entry at all (the
 * only case `--accept-new-host-key` may add); `changed` = an entry for the host holds
 * another key, of the same type (`sameType`) or of another type; `cert-authority` = the
 * host is named only by `@cert-authority` lines (certificates are not verified).
 */
export type HostKeyVerdict =
  | { readonly kind: 'known'; readonly entry: KnownHostEntry }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'changed'; readonly entry: KnownHostEntry; readonly sameType: boolean }
  | { readonly kind: 'cert-authority'; readonly entry: KnownHostEntry }
  | { readonly kind: 'revoked'; readonly entry: KnownHostEntry };

/** Reads entries from known_hosts text; lines it cannot read and unknown `@` markers are skipped. */
export function parseKnownHosts(text: string, file: string): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const l = raw.trim();
    if (l === '' || l.startsWith('#')) return;
    const fields = l.split(/\s+/);
    let marker: KnownHostEntry['marker'] = null;
    if (fields[0]?.startsWith('@')) {
      if (fields[0] === '@revoked') marker = 'revoked';
      else if (fields[0] === '@cert-authority') marker = 'cert-authority';
      else return;
      fields.shift();
    }
    const [hosts, keyType, b64] = fields;
    if (!hosts || !keyType || !b64 || !/^[A-Za-z0-9+/]+=*$/.test(b64)) return;
    out.push({ file, line: i + 1, marker, hosts, keyType, key: Buffer.from(b64, 'base64') });
  });
  return out;
}

/** The name known_hosts uses for a host and port: `host` for 22, else `[host]:port`. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

function globMatch(pattern: string, name: string): boolean {
  const re = new RegExp('^' + pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$', 'i');
  return re.test(name);
}

/** True when the entry's host field names `name` (plain patterns with negation, or a `|1|` hash). */
export function hostsFieldMatches(hosts: string, name: string): boolean {
  if (hosts.startsWith('|1|')) {
    const [, , salt, hash] = hosts.split('|');
    if (!salt || !hash) return false;
    const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return mac === hash;
  }
  let hit = false;
  for (const p of hosts.split(',')) {
    if (p.startsWith('!')) {
      if (globMatch(p.slice(1), name)) return false;
    } else if (globMatch(p, name)) hit = true;
  }
  return hit;
}

/** The key type written at the start of an SSH public key blob (RFC 4253 §6.6), or `''`. */
export function keyTypeOfBlob(blob: Buffer): string {
  if (blob.length < 4) return '';
  const n = blob.readUInt32BE(0);
  return n > 0 && n < 64 && blob.length >= 4 + n ? blob.subarray(4, 4 + n).toString('latin1') : '';
}

/** OpenSSH's fingerprint of a key blob: `SHA256:` + unpadded base64 of its SHA-256. */
export function fingerprintSha256(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

/** Reads every file that exists and returns its entries (in file order). */
export function loadKnownHosts(files: readonly string[]): KnownHostEntry[] {
  return files.filter((f) => existsSync(f)).flatMap((f) => parseKnownHosts(readFileSync(f, 'utf8'), f));
}

/**
 * Checks `blob` (the raw host key the server presented) for `name` (see
 * {@link knownHostsName}) against `entries`: `revoked` when any `@revoked` line holds
 * this key; `known` when a plain entry for the name holds it; `changed` when a plain
 * entry for the name holds another key (one of the same type first, else the first of
 * another type); `cert-authority` when only `@cert-authority` lines name the host;
 * `unknown` when nothing names it (`@revoked` lines for other keys do not count).
 */
export function verifyHostKey(entries: readonly KnownHostEntry[], name: string, blob: Buffer): HostKeyVerdict {
  const revoked = entries.find((e) => e.marker === 'revoked' && e.key.equals(blob));
  if (revoked) return { kind: 'revoked', entry: revoked };
  const mine = entries.filter((e) => e.marker === null && hostsFieldMatches(e.hosts, name));
  const same = mine.find((e) => e.key.equals(blob));
  if (same) return { kind: 'known', entry: same };
  const type = keyTypeOfBlob(blob);
  const clash = mine.find((e) => e.keyType === type);
  if (clash) return { kind: 'changed', entry: clash, sameType: true };
  if (mine[0]) return { kind: 'changed', entry: mine[0], sameType: false };
  const ca = entries.find((e) => e.marker === 'cert-authority' && hostsFieldMatches(e.hosts, name));
  if (ca) return { kind: 'cert-authority', entry: ca };
  return { kind: 'unknown' };
}

/** Key types known for `name`, to offer those host key algorithms first (as OpenSSH does). */
export function knownKeyTypes(entries: readonly KnownHostEntry[], name: string): string[] {
  return [...new Set(entries.filter((e) => e.marker === null && hostsFieldMatches(e.hosts, name)).map((e) => e.keyType))];
}

/**
 * The line to append for a newly accepted key: hashed like `HashKnownHosts yes`
 * (`|1|salt|hmac`) so the file does not list the hosts one reaches. `salt` is for tests.
 */
export function knownHostsLine(name: string, blob: Buffer, salt: Buffer = randomBytes(20)): string {
  const mac = createHmac('sha1', salt).update(name).digest('base64');
  return `|1|${salt.toString('base64')}|${mac} ${keyTypeOfBlob(blob)} ${blob.toString('base64')}\n`;
}

/** Appends an accepted key to `file` (mode 0600 when created). Throws the filesystem's errors. */
export function appendKnownHost(file: string, name: string, blob: Buffer): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // A file whose last line has no newline would otherwise glue the new entry onto it.
  const needsNewline = existsSync(file) && !/(^|\n)$/.test(readFileSync(file, 'utf8'));
  appendFileSync(file, (needsNewline ? '\n' : '') + knownHostsLine(name, blob), { mode: 0o600 });
}

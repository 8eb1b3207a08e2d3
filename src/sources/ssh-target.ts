/**
 * Where `--ssh [user@]host[:port]` really goes: the target parsed, then resolved through
 * the OpenSSH client configuration (`~/.ssh/config`, ssh_config(5)): `Host` aliases
 * and patterns, `HostName`, `User`, `Port`, `IdentityFile` (repeatable, `~` and `%`
 * tokens expanded), `ProxyJump` (comma-separated hops, each resolved through the same
 * config), `HostKeyAlias`, `UserKnownHostsFile`. First obtained value wins, as in
 * OpenSSH. Parsing is done by the `ssh-config` package; `Match exec` is never run.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SSHConfig from 'ssh-config';
import { said, UserError } from '../errors.js';

/** `[user@]host[:port]` as typed; `host` may be an IPv6 address in brackets (`[::1]:2222`). */
export interface SshTarget {
  readonly user: string | undefined;
  readonly host: string;
  readonly port: number | undefined;
}

/**
 * Parses `[user@]host[:port]` (also `ssh://[user@]host[:port]`). A bare IPv6 address
 * without brackets is taken whole as the host. Throws `UserError` for an empty host, a
 * bad port, or characters that cannot be in a host name.
 */
export function parseSshTarget(text: string): SshTarget {
  let rest = text.trim().replace(/^ssh:\/\//, '');
  let user: string | undefined;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    user = rest.slice(0, at);
    rest = rest.slice(at + 1);
    if (user === '') throw new UserError(said('ue.ssh.emptyUser', { text }));
  }
  let host = rest;
  let portText: string | undefined;
  const bracket = /^\[([^\]]+)\](?::(.*))?$/.exec(rest);
  if (bracket) {
    host = bracket[1]!;
    portText = bracket[2];
  } else if ((rest.match(/:/g) ?? []).length === 1) {
    [host, portText] = rest.split(':') as [string, string];
  }
  if (host === '' || !/^[A-Za-z0-9._:%-]+$/.test(host)) throw new UserError(said('ue.ssh.badHost', { text, host }), said('ue.ssh.form'));
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d+$/.test(portText) || port < 1 || port > 65535) throw new UserError(said('ue.ssh.badPort', { text, port: portText }), said('ue.ssh.portRange'));
  }
  return { user, host, port };
}

/** One hop's settings after `~/.ssh/config` (the final target, or a ProxyJump hop). */
export interface SshEndpoint {
  /** The name as given (alias), used in messages and as the label. */
  readonly alias: string;
  /** The address to connect to (`HostName`, else the alias). */
  readonly hostName: string;
  readonly port: number;
  readonly user: string;
  /** Private key files to try, absolute, in order (only those that exist). */
  readonly identityFiles: readonly string[];
  /** The name to look up in known_hosts (`HostKeyAlias`, else `hostName`). */
  readonly hostKeyAlias: string;
  /** ProxyJump hops, first hop first; empty for a direct connection. */
  readonly jumps: readonly SshEndpoint[];
}

/** Files and identity that resolution reads; defaults are the user's. */
export interface SshConfigContext {
  /** `~/.ssh/config` (absent file: no config). */
  readonly configPath?: string;
  readonly home?: string;
  readonly localUser?: string;
}

const DEFAULT_IDENTITIES = ['id_ed25519', 'id_ecdsa', 'id_rsa'];

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Expands `~` and the ssh_config(5) tokens `%d %u %h %r %p %%` of a path. */
export function expandSshPath(p: string, tokens: { home: string; localUser: string; host: string; user: string; port: number }): string {
  const t = p.replace(/%([durhp%])/g, (_, c: string) =>
    c === 'd' ? tokens.home : c === 'u' ? tokens.localUser : c === 'r' ? tokens.user : c === 'h' ? tokens.host : c === 'p' ? String(tokens.port) : '%',
  );
  if (t === '~') return tokens.home;
  return t.startsWith('~/') ? path.join(tokens.home, t.slice(2)) : path.resolve(tokens.home, t);
}

function loadConfig(file: string): SSHConfig {
  if (!existsSync(file)) return SSHConfig.parse('');
  try {
    return SSHConfig.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError(said('ue.ssh.cannotRead', { file, detail: (e as Error).message }), said('ue.ssh.fixConfig'));
  }
}

/** The known_hosts files the config names (`UserKnownHostsFile`), or the default. */
export function knownHostsFiles(endpointAlias: string, ctx: SshConfigContext = {}): string[] {
  const home = ctx.home ?? os.homedir();
  const config = loadConfig(ctx.configPath ?? path.join(home, '.ssh', 'config'));
  const computed = config.compute(endpointAlias, { ignoreCase: true, matchExec: false });
  const v = computed['userknownhostsfile'];
  const list = (Array.isArray(v) ? v : v ? v.split(/\s+/) : []).filter((x) => x !== '' && x.toLowerCase() !== 'none');
  const tokens = { home, localUser: ctx.localUser ?? os.userInfo().username, host: endpointAlias, user: '', port: 22 };
  return list.length > 0 ? list.map((f) => expandSshPath(f, tokens)) : [path.join(home, '.ssh', 'known_hosts')];
}

/**
 * Resolves a target through the ssh config. `depth` guards against ProxyJump loops.
 * Throws `UserError` for a ProxyJump loop or an unreadable config file.
 */
export function resolveSshTarget(target: SshTarget, ctx: SshConfigContext = {}, depth = 0): SshEndpoint {
  if (depth > 8) throw new UserError(said('ue.ssh.jumpDepth', { host: target.host }), said('ue.ssh.jumpLoop'));
  const home = ctx.home ?? os.homedir();
  const localUser = ctx.localUser ?? os.userInfo().username;
  const config = loadConfig(ctx.configPath ?? path.join(home, '.ssh', 'config'));
  const c = config.compute(target.user ? { Host: target.host, User: target.user } : { Host: target.host }, { ignoreCase: true, matchExec: false });
  const hostName = first(c['hostname'])?.replace(/%h/g, target.host) ?? target.host;
  const user = target.user ?? first(c['user']) ?? localUser;
  const portText = first(c['port']);
  const port = target.port ?? (portText !== undefined && /^\d+$/.test(portText) ? Number(portText) : 22);
  const tokens = { home, localUser, host: hostName, user, port };
  const named = c['identityfile'];
  const files = named === undefined ? DEFAULT_IDENTITIES.map((n) => path.join(home, '.ssh', n)) : (Array.isArray(named) ? named : [named]).map((f) => expandSshPath(f, tokens));
  const jumpText = first(c['proxyjump']);
  // Each hop is resolved through the same config; a hop's own ProxyJump hops come before it.
  const jumps =
    jumpText === undefined || jumpText.toLowerCase() === 'none'
      ? []
      : jumpText.split(',').flatMap((hop) => {
          const resolved = resolveSshTarget(parseSshTarget(hop), ctx, depth + 1);
          return [...resolved.jumps, { ...resolved, jumps: [] }];
        });
  return {
    alias: target.host,
    hostName,
    port,
    user,
    identityFiles: files.filter((f) => existsSync(f)),
    hostKeyAlias: first(c['hostkeyalias']) ?? hostName,
    jumps,
  };
}

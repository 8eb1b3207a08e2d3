/**
 * The SSH transport (`--ssh [user@]host[:port]`): one SSH connection to the node
 * (through ProxyJump hops as forwarded channels of the previous hop), each probe on its
 * own exec channel, SSH keep-alives, and reconnection with exponential backoff when the
 * link drops. While disconnected `exec` throws `TransportError`, so the session keeps its
 * last good snapshot and shows it stale. Only catalog probes are run (see ssh-command.ts):
 * root probes go through the catalog's `sudo -n --` wrapper when the remote user is not
 * root, and a missing sudo right comes back as that probe's failure (exit 1, `sudo: a
 * password is required`), never as a prompt.
 */
import os from 'node:os';
import type { Duplex } from 'node:stream';
import type { Client as SshClient, ClientChannel } from 'ssh2';
import { said, TransportError, UserError } from '../errors.js';
import { connectHop, tcpSocket, type HopOptions, type SocketFactory } from './ssh-connect.js';
import { probeForArgv, remoteArgv, shellQuote } from './ssh-command.js';
import { knownHostsFiles, parseSshTarget, resolveSshTarget, type SshEndpoint } from './ssh-target.js';
import type { ExecOptions, ExecResult, Transport } from './transport.js';

/** Options of {@link openSsh}. Paths default to the user's `~/.ssh/…`; times are milliseconds. */
export interface SshOptions {
  /** `[user@]host[:port]` or a `Host` alias of the ssh config. */
  readonly target: string;
  readonly acceptNewHostKey?: boolean;
  readonly configPath?: string;
  readonly home?: string;
  /** Overrides the known_hosts files (default: `UserKnownHostsFile`, else `~/.ssh/known_hosts`). */
  readonly knownHostsFiles?: readonly string[];
  /** ssh-agent socket; default `SSH_AUTH_SOCK`; `null` = do not use an agent. */
  readonly agentSocket?: string | null;
  /** Opens the first hop's stream (default TCP). Tests use it to connect from inside a network namespace. */
  readonly connectSocket?: SocketFactory;
  /** Keep-alive period (default 10,000 ms; 3 missed = link lost). */
  readonly keepaliveMs?: number;
  /** First reconnect delay (default 1,000 ms), doubled per failure up to `maxBackoffMs` (default 30,000 ms). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly readyTimeoutMs?: number;
  readonly now?: () => number;
}

/** Link state of an {@link SshTransport}; `since` in ms since epoch. */
export interface SshLinkState {
  readonly state: 'connected' | 'reconnecting' | 'failed' | 'closed';
  readonly since: number;
  /** Why the link is down (or why reconnecting gave up: a changed host key). */
  readonly error: string | null;
  /** Reconnect attempts since the link dropped. */
  readonly attempts: number;
}

/** A live SSH connection to a node. Create with {@link openSsh}. */
export class SshTransport implements Transport {
  readonly kind = 'ssh' as const;
  readonly feedsStdin = true;
  readonly label: string;
  private clients: SshClient[] = [];
  private link: SshLinkState;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<(s: SshLinkState) => void>();
  private readonly now: () => number;

  constructor(
    readonly endpoint: SshEndpoint,
    private readonly hop: HopOptions,
    private readonly socketFactory: SocketFactory,
    private readonly backoff: { readonly initialMs: number; readonly maxMs: number },
    now: () => number = Date.now,
  ) {
    this.now = now;
    this.label = `ssh:${endpoint.user}@${endpoint.alias}`;
    this.link = { state: 'reconnecting', since: now(), error: null, attempts: 0 };
  }

  /** The link's state now. */
  state(): SshLinkState {
    return this.link;
  }

  /** Calls `listener` on every link state change; returns the unsubscribe function. */
  onState(listener: (s: SshLinkState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private setLink(patch: Partial<SshLinkState>): void {
    this.link = { ...this.link, ...patch };
    for (const l of this.listeners) l(this.link);
  }

  /** Connects every hop in order; the last client is the node. Throws like {@link connectHop}. */
  async connect(): Promise<void> {
    const hops = [...this.endpoint.jumps, this.endpoint];
    const clients: SshClient[] = [];
    try {
      for (const [i, hop] of hops.entries()) {
        const sock = i === 0 ? await this.socketFactory(hop.hostName, hop.port) : await forward(clients[i - 1]!, hop.hostName, hop.port);
        clients.push(await connectHop(hop, sock, this.hop));
      }
    } catch (e) {
      for (const c of clients.reverse()) c.end();
      throw e instanceof UserError || e instanceof TransportError ? e : new TransportError(`cannot reach ${this.endpoint.alias}: ${(e as Error).message}`, this.label, [], null, '');
    }
    if (this.link.state === 'closed') {
      // close() came while this (re)connect was under way.
      for (const c of clients.reverse()) c.end();
      return;
    }
    this.clients = clients;
    for (const c of clients) c.once('close', () => this.dropped(c));
    this.setLink({ state: 'connected', since: this.now(), error: null, attempts: 0 });
  }

  private dropped(c: SshClient): void {
    if (!this.clients.includes(c) || this.link.state === 'closed') return;
    for (const other of this.clients) if (other !== c) other.end();
    this.clients = [];
    this.setLink({ state: 'reconnecting', since: this.now(), error: `connection to ${this.endpoint.alias} lost`, attempts: 0 });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.link.state !== 'reconnecting') return;
    const delay = Math.min(this.backoff.initialMs * 2 ** this.link.attempts, this.backoff.maxMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect().catch((e: Error) => {
        if (this.link.state === 'closed') return;
        // A refused host key will not fix itself: stop instead of retrying forever.
        if (e instanceof UserError) this.setLink({ state: 'failed', error: e.message });
        else {
          this.setLink({ error: e.message, attempts: this.link.attempts + 1 });
          this.scheduleReconnect();
        }
      });
    }, delay);
    this.timer.unref();
  }

  private down(argv: readonly string[]): TransportError {
    const why = this.link.state === 'failed' ? 'gave up reconnecting' : this.link.state === 'closed' ? 'closed' : 'reconnecting';
    return new TransportError(`SSH connection to ${this.endpoint.alias} is down (${why})`, this.label, argv, null, this.link.error ?? '');
  }

  /**
   * Runs one catalog probe on its own exec channel. Exit 127 (the shell's "not found")
   * is reported as `missing`. Throws `BugError` for an argv outside the catalog and
   * `TransportError` when the link is down or drops during the probe.
   */
  async exec(argv: readonly string[], options: ExecOptions): Promise<ExecResult> {
    const spec = probeForArgv(argv);
    const full = remoteArgv(argv, { sudo: (spec?.root ?? false) && this.endpoint.user !== 'root' });
    const client = this.clients[this.clients.length - 1];
    if (!client || this.link.state !== 'connected') throw this.down(full);
    const started = this.now();
    return new Promise((resolve, reject) => {
      client.exec(shellQuote(full), (err, stream) => {
        if (err) return reject(new TransportError(`cannot open an exec channel on ${this.endpoint.alias}: ${err.message}`, this.label, full, null, ''));
        if (options.stdin !== undefined) stream.end(options.stdin);
        collect(stream, options.timeoutMs, options.signal).then(
          (r) => {
            if (r.exit === undefined && !r.timedOut && !options.signal?.aborted) return reject(this.down(full));
            const exitCode = r.timedOut ? null : (r.exit ?? null);
            resolve({
              argv: full,
              stdout: r.stdout,
              stderr: r.stderr + (r.timedOut ? `killed after ${options.timeoutMs} ms\n` : ''),
              exitCode,
              startedAt: new Date(started).toISOString(),
              durationMs: this.now() - started,
              ...(exitCode === 127 ? { missing: true } : {}),
              ...(r.timedOut ? { timedOut: true } : {}),
            });
          },
          reject,
        );
      });
    });
  }

  /**
   * Opens a TCP connection from the node to `host:port` (an SSH `direct-tcpip` channel,
   * like `ssh -W`), e.g. to query the cluster DNS from the node. Throws `TransportError`
   * when the link is down or the node refuses the forward.
   */
  async openTcp(host: string, port: number): Promise<Duplex> {
    const client = this.clients[this.clients.length - 1];
    if (!client || this.link.state !== 'connected') throw this.down([]);
    try {
      return await forward(client, host, port);
    } catch (e) {
      throw new TransportError(`the node refused a TCP forward to ${host}:${port}: ${(e as Error).message}`, this.label, [], null, '');
    }
  }

  async close(): Promise<void> {
    this.setLink({ state: 'closed', since: this.now() });
    if (this.timer) clearTimeout(this.timer);
    for (const c of [...this.clients].reverse()) c.end();
    this.clients = [];
  }
}

function forward(client: SshClient, host: string, port: number): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, host, port, (err, channel) => (err ? reject(err) : resolve(channel)));
  });
}

interface Collected {
  stdout: string;
  stderr: string;
  exit: number | null | undefined;
  timedOut: boolean;
}

/**
 * Reads a channel to its close: stdout, stderr, the exit status (undefined: none came — the
 * link broke, or `signal` stopped it: TERM to the command, then the channel closed).
 */
function collect(stream: ClientChannel, timeoutMs: number, signal?: AbortSignal): Promise<Collected> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let exit: number | null | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      stream.signal('KILL');
      stream.close();
    }, timeoutMs);
    const stop = () => {
      stream.signal('TERM');
      stream.close();
    };
    if (signal?.aborted) stop();
    else signal?.addEventListener('abort', stop, { once: true });
    stream.on('data', (d: Buffer) => out.push(d));
    stream.stderr.on('data', (d: Buffer) => err.push(d));
    stream.on('exit', (code: number | null, signal?: string) => {
      exit = code ?? (signal ? 128 + (signal === 'KILL' ? 9 : signal === 'TERM' ? 15 : 1) : null);
    });
    stream.on('close', () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), exit, timedOut });
    });
  });
}

/**
 * Resolves `options.target` through the ssh config and connects. Throws `UserError`
 * for a bad target, an unknown/changed host key, or refused credentials, and
 * `TransportError` when the node cannot be reached.
 */
export async function openSsh(options: SshOptions): Promise<SshTransport> {
  const home = options.home ?? os.homedir();
  const ctx = { home, ...(options.configPath ? { configPath: options.configPath } : {}) };
  const endpoint = resolveSshTarget(parseSshTarget(options.target), ctx);
  const agent = options.agentSocket === null ? undefined : (options.agentSocket ?? process.env['SSH_AUTH_SOCK']);
  const hop: HopOptions = {
    knownHostsFiles: options.knownHostsFiles ?? knownHostsFiles(endpoint.alias, ctx),
    globalKnownHostsFiles: options.knownHostsFiles ? [] : ['/etc/ssh/ssh_known_hosts'],
    acceptNewHostKey: options.acceptNewHostKey ?? false,
    agentSocket: agent && agent !== '' ? agent : undefined,
    keepaliveMs: options.keepaliveMs ?? 10_000,
    readyTimeoutMs: options.readyTimeoutMs ?? 20_000,
  };
  const t = new SshTransport(endpoint, hop, options.connectSocket ?? tcpSocket, { initialMs: options.backoffMs ?? 1000, maxMs: options.maxBackoffMs ?? 30_000 }, options.now);
  try {
    await t.connect();
  } catch (e) {
    if (e instanceof TransportError) throw new UserError(said('ue.ssh.cannotConnect', { target: `${endpoint.user}@${endpoint.alias}`, host: endpoint.hostName, port: endpoint.port, detail: e.message }), said('ue.ssh.cannotConnectHint'));
    throw e;
  }
  return t;
}

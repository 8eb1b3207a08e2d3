/**
 * A tiny HTTPS client for tests of the recorded API server: requests that
 * trust the server's CA and send its bearer token, a watch reader, and a raw
 * exec WebSocket client that records every frame. No Kubernetes library here,
 * so these tests check the wire protocol itself.
 */
import { request } from 'node:https';
import WebSocket from 'ws';
import type { ApiServerHandle } from './server.js';

/** One HTTP response. `json` is the parsed body when it is JSON. */
export interface ApiResponse {
  status: number;
  contentType: string;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests index freely into API JSON
}

/** Options of {@link api}. `token: null` sends no Authorization header. */
export interface ApiRequestOptions {
  method?: string;
  accept?: string;
  body?: string | Buffer;
  contentType?: string;
  token?: string | null;
}

/** Sends one request to `server` and reads the whole response. */
export function api(server: ApiServerHandle, path: string, o: ApiRequestOptions = {}): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const token = o.token === undefined ? server.token : o.token;
    const headers: Record<string, string> = {};
    if (token !== null) headers['Authorization'] = `Bearer ${token}`;
    if (o.accept) headers['Accept'] = o.accept;
    if (o.body !== undefined) {
      headers['Content-Type'] = o.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(o.body)); // DELETE is not chunked by default
    }
    const req = request(`${server.url}${path}`, { method: o.method ?? 'GET', ca: server.caPem, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text, json });
      });
    });
    req.on('error', reject);
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });
}

/** One decoded watch event. */
export interface WatchEvent {
  type: string;
  object: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** An open watch: events arrive in `events`; `next(n)` waits until n events are there. */
export interface OpenWatch {
  readonly events: WatchEvent[];
  readonly status: number;
  /** Resolves when at least `count` events arrived (rejects after `timeoutMs`). */
  next(count: number, timeoutMs?: number): Promise<WatchEvent[]>;
  /** Resolves when the server ended the stream. */
  ended(): Promise<void>;
  close(): void;
}

/** Opens `path` (which should carry `watch=1`) and collects newline-delimited events. */
export function openWatch(server: ApiServerHandle, path: string, accept?: string): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Authorization: `Bearer ${server.token}` };
    if (accept) headers['Accept'] = accept;
    const req = request(`${server.url}${path}`, { ca: server.caPem, headers }, (res) => {
      const events: WatchEvent[] = [];
      let buf = '';
      let done = false;
      const waiters: (() => void)[] = [];
      const poke = () => waiters.splice(0).forEach((w) => w());
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        buf += c;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) events.push(JSON.parse(line) as WatchEvent);
        }
        poke();
      });
      const finish = () => {
        done = true;
        poke();
      };
      res.on('end', finish);
      res.on('close', finish);
      resolve({
        events,
        status: res.statusCode ?? 0,
        next: (count, timeoutMs = 5000) =>
          new Promise((ok, fail) => {
            const deadline = setTimeout(() => fail(new Error(`watch: ${events.length}/${count} events after ${timeoutMs} ms`)), timeoutMs);
            const check = () => {
              if (events.length >= count) {
                clearTimeout(deadline);
                ok(events.slice(0, count));
              } else if (done) {
                clearTimeout(deadline);
                fail(new Error(`watch ended with ${events.length}/${count} events`));
              } else waiters.push(check);
            };
            check();
          }),
        ended: () =>
          new Promise((ok) => {
            const check = () => (done ? ok() : waiters.push(check));
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', (e) => {
      if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(e);
    });
    req.end();
  });
}

/** What an exec session produced, frame by frame. */
export interface ExecTranscript {
  protocol: string;
  /** Every binary frame received: channel byte and payload. */
  frames: { channel: number; data: Buffer }[];
  stdout: string;
  stderr: string;
  /** The channel-3 status, parsed. */
  status: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  closeCode: number;
}

/** Options of {@link execRaw}: the query (`command` repeated), protocols offered, and stdin chunks to send. */
export interface ExecRawOptions {
  namespace?: string;
  pod: string;
  command: string[];
  container?: string;
  protocols?: string[];
  stdin?: string[];
  /** Send the v5 CLOSE signal for stdin after the chunks (default true when stdin is given). */
  closeStdin?: boolean;
  tty?: boolean;
}

/** Opens an exec WebSocket and records the session until the server closes it. Rejects on a refused upgrade with the status code. */
export function execRaw(server: ApiServerHandle, o: ExecRawOptions): Promise<ExecTranscript> {
  const q = new URLSearchParams();
  for (const c of o.command) q.append('command', c);
  if (o.container) q.set('container', o.container);
  q.set('stdout', 'true');
  q.set('stderr', 'true');
  if (o.stdin) q.set('stdin', 'true');
  if (o.tty) q.set('tty', 'true');
  const url = `${server.url.replace('https', 'wss')}/api/v1/namespaces/${o.namespace ?? 'default'}/pods/${o.pod}/exec?${q}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, o.protocols ?? ['v5.channel.k8s.io', 'v4.channel.k8s.io'], {
      ca: server.caPem,
      headers: { Authorization: `Bearer ${server.token}` },
    });
    const t: ExecTranscript = { protocol: '', frames: [], stdout: '', stderr: '', status: undefined, closeCode: 0 };
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { statusCode: res.statusCode, body: Buffer.concat(chunks).toString() })));
    });
    ws.on('error', reject);
    ws.on('open', () => {
      t.protocol = ws.protocol;
      for (const chunk of o.stdin ?? []) ws.send(Buffer.concat([Buffer.from([0]), Buffer.from(chunk)]));
      if (o.stdin && o.closeStdin !== false) ws.send(Buffer.from([255, 0]));
    });
    ws.on('message', (data: Buffer) => {
      const channel = data[0]!;
      const payload = data.subarray(1);
      t.frames.push({ channel, data: payload });
      if (channel === 1) t.stdout += payload.toString();
      if (channel === 2) t.stderr += payload.toString();
      if (channel === 3 && payload.length) t.status = JSON.parse(payload.toString());
    });
    ws.on('close', (code) => {
      t.closeCode = code;
      resolve(t);
    });
  });
}

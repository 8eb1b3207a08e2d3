/**
 * The recorded API server's pods/portforward without root: the WebSocket protocol
 * (`v4.channel.k8s.io`: data and error channel per port, each opening with the port as
 * 2 bytes little-endian), its refusals, client-node's side of it (`openPortForward`), and
 * the SPDY/3.1 session kubectl speaks, driven by a client that compresses its headers
 * with zlib and the SPDY dictionary as Go's framer does (the lab test runs real kubectl).
 */
import net from 'node:net';
import { constants, createDeflate, inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadKube } from '../../src/sources/k8s-client.js';
import { K8sStatusError } from '../../src/sources/k8s-client.js';
import { openPortForward, PortForwardError } from '../../src/sources/k8s-portforward.js';
import { startApiServer, type ApiServerHandle, type PodDialer } from '../api-server/index.js';
import { makeList, makeNamespace, makePod } from '../api-server/builders.js';
import { portPrefix } from '../api-server/portforward.js';
import { controlFrame, dataFrame, decodeHeaderBlock, encodeHeaderBlock, FLAG_FIN, SPDY, SPDY_DICTIONARY, SpdySession } from '../api-server/spdy.js';
import { serveSpdyPortForward } from '../api-server/spdy-portforward.js';

const ECHO_PORT = 7;
let echo: net.Server;
let echoPort = 0;
/** Port 7 of every pod is an upper-casing echo server; any other port is refused. */
const dial: PodDialer = (_pod, port) =>
  new Promise((resolve, reject) => {
    if (port !== ECHO_PORT) return reject(new Error(`dial tcp4 127.0.0.1:${port}: connect: connection refused`));
    const s = net.connect(echoPort, '127.0.0.1');
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });

let server: ApiServerHandle;
beforeAll(async () => {
  echo = net.createServer((c) => c.on('data', (d: Buffer) => c.write(d.toString().toUpperCase())));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  echoPort = (echo.address() as net.AddressInfo).port;
  server = await startApiServer({
    objects: makeList([makeNamespace('default'), makePod({ name: 'web-0' }), makePod({ name: 'pending-0', phase: 'Pending' })]),
    portForward: dial,
  });
});
afterAll(async () => {
  await server?.close();
  await new Promise<void>((r) => echo.close(() => r()));
});

/** Opens a raw WebSocket to the pod's portforward; resolves with it and every message, or rejects with the refusal's status code. */
function connect(query: string, pod = 'web-0', protocol = 'v4.channel.k8s.io'): Promise<{ ws: WebSocket; frames: Buffer[]; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('https', 'wss')}/api/v1/namespaces/default/pods/${pod}/portforward${query}`, [protocol], { ca: server.caPem, headers: { Authorization: `Bearer ${server.token}` } });
    const frames: Buffer[] = [];
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('message', (d: Buffer) => frames.push(Buffer.from(d)));
    ws.on('open', () => resolve({ ws, frames, closed }));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(body), { code: res.statusCode })));
    });
    ws.on('error', () => undefined);
  });
}

const until = async (ok: () => boolean) => {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};
const onChannel = (frames: Buffer[], ch: number) => Buffer.concat(frames.filter((f) => f[0] === ch).map((f) => f.subarray(1)));

describe('pods/portforward over a WebSocket (v4.channel.k8s.io)', () => {
  it('opens each port\'s data and error channel with the port (2 bytes LE) and forwards data both ways', async () => {
    const { ws, frames } = await connect(`?ports=${ECHO_PORT}&ports=9`);
    await until(() => frames.length >= 4);
    expect(frames.slice(0, 4)).toEqual([0, 1, 2, 3].map((ch) => Buffer.concat([Buffer.from([ch]), portPrefix(ch < 2 ? ECHO_PORT : 9)])));
    ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('hello')]));
    await until(() => onChannel(frames.slice(4), 0).toString() === 'HELLO');
    // The second port could not be dialled: its error channel says why, kubelet-style.
    await until(() => onChannel(frames.slice(4), 3).length > 0);
    expect(onChannel(frames.slice(4), 3).toString()).toMatch(/^error forwarding port 9 to pod web-0, uid [^:]+: dial tcp4 127\.0\.0\.1:9: connect: connection refused$/);
    ws.close();
  });

  it('closes normally (1000) once the only port cannot be dialled', async () => {
    const { frames, closed } = await connect('?ports=9');
    expect(await closed).toBe(1000);
    expect(onChannel(frames, 1).subarray(2).toString()).toContain('error forwarding port 9 to pod web-0');
  });

  it.each([
    ['', 'web-0', 400, 'query parameter "ports" is required'],
    ['?ports=70000', 'web-0', 400, 'invalid port "70000"'],
    ['?ports=7', 'pending-0', 400, 'pod pending-0 is not running'],
    ['?ports=7', 'nope', 404, 'pods "nope" not found'],
  ])('refuses %s on %s with %i', async (query, pod, code, text) => {
    const e = (await connect(query, pod).catch((x: unknown) => x)) as Error & { code: number };
    expect(e.code).toBe(code);
    expect(JSON.parse(e.message).message).toContain(text);
  });

  it('a forbidden create pods/portforward is the RBAC 403', async () => {
    server.setForbidden([{ verb: 'create', resource: 'pods/portforward' }]);
    try {
      const e = (await connect('?ports=7').catch((x: unknown) => x)) as Error & { code: number };
      expect(e.code).toBe(403);
      expect(JSON.parse(e.message).message).toBe(`pods "web-0" is forbidden: User "${server.user}" cannot create resource "pods/portforward" in API group "" in the namespace "default"`);
    } finally {
      server.setForbidden([]);
    }
  });
});

describe('openPortForward (client-node PortForward) against it', () => {
  const kc = () => loadKube({ kubeconfig: server.kubeconfigPath }).kc;

  it('gives a Duplex over one forwarded connection', async () => {
    const s = await openPortForward(kc(), { namespace: 'default', pod: 'web-0', port: ECHO_PORT });
    const got = new Promise<string>((r) => s.once('data', (d: Buffer) => r(d.toString())));
    s.write('dns?');
    expect(await got).toBe('DNS?');
    s.destroy();
  });

  it('errors with the error channel\'s text when the dial fails, and rejects a refused upgrade with its status', async () => {
    const s = await openPortForward(kc(), { namespace: 'default', pod: 'web-0', port: 9 });
    const e = await new Promise<Error>((r) => s.on('error', r));
    expect(e).toBeInstanceOf(PortForwardError);
    expect(e.message).toMatch(/^port-forward to default\/web-0:9: error forwarding port 9 to pod web-0/);
    const refused = await openPortForward(kc(), { namespace: 'default', pod: 'nope', port: 7 }).catch((x: unknown) => x);
    expect(refused).toBeInstanceOf(K8sStatusError);
    expect((refused as K8sStatusError).code).toBe(404);
  });
});

describe('SPDY/3.1 port-forward session (kubectl\'s protocol)', () => {
  /** A client header compressor as Go's framer: one zlib stream with the SPDY dictionary, a sync flush per block. */
  function compressor(): (raw: Buffer) => Promise<Buffer> {
    const d = createDeflate({ dictionary: SPDY_DICTIONARY, level: 9 });
    const out: Buffer[] = [];
    d.on('data', (c: Buffer) => out.push(c));
    return (raw) =>
      new Promise((resolve) => {
        d.write(raw);
        d.flush(constants.Z_SYNC_FLUSH, () => setImmediate(() => resolve(Buffer.concat(out.splice(0)))));
      });
  }
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n, 0);
    return b;
  };
  const synStream = (id: number, block: Buffer) => controlFrame(SPDY.synStream, 0, Buffer.concat([u32(id), u32(0), Buffer.from([0, 0]), block]));

  /** Splits the server's bytes into frames. */
  function frames(bytes: Buffer): { control: boolean; type: number; id: number; flags: number; payload: Buffer }[] {
    const out = [];
    for (let o = 0; o + 8 <= bytes.length; ) {
      const len = bytes.readUInt32BE(o + 4) & 0xffffff;
      const control = (bytes[o]! & 0x80) !== 0;
      const payload = bytes.subarray(o + 8, o + 8 + len);
      out.push({ control, type: control ? bytes.readUInt16BE(o + 2) : 0, id: control ? payload.readUInt32BE(0) & 0x7fffffff : bytes.readUInt32BE(o) & 0x7fffffff, flags: bytes[o + 4]!, payload });
      o += 8 + len;
    }
    return out;
  }

  it('replies to both streams of a request, forwards the data stream, reports a failed dial on the error stream', async () => {
    const written: Buffer[] = [];
    const session = new SpdySession((b) => written.push(b));
    serveSpdyPortForward(session, { pod: { namespace: 'default', name: 'web-0', uid: 'u-1' }, dial });
    const z = compressor();
    const headers = (type: string, port: number, req: number) => encodeHeaderBlock({ streamType: type, port: String(port), requestID: String(req) });
    session.feed(synStream(1, await z(headers('error', ECHO_PORT, 0))));
    session.feed(dataFrame(1, FLAG_FIN, Buffer.alloc(0)));
    session.feed(synStream(3, await z(headers('data', ECHO_PORT, 0))));
    session.feed(dataFrame(3, 0, Buffer.from('spdy')));
    session.feed(synStream(5, await z(headers('error', 9, 1))));
    session.feed(synStream(7, await z(headers('data', 9, 1))));
    session.feed(controlFrame(SPDY.ping, 0, u32(1)));
    await until(() => frames(Buffer.concat(written)).some((f) => !f.control && f.id === 3 && f.payload.length > 0));
    await until(() => frames(Buffer.concat(written)).some((f) => !f.control && f.id === 5 && f.payload.length > 0));
    const out = frames(Buffer.concat(written));
    const replies = out.filter((f) => f.control && f.type === SPDY.synReply);
    expect(replies.map((f) => f.id)).toEqual([1, 3, 5, 7]);
    // The reply header blocks form one zlib stream, each block decoding to no headers.
    const stream = inflateSync(Buffer.concat(replies.map((f) => f.payload.subarray(4))), { finishFlush: constants.Z_SYNC_FLUSH });
    expect(stream).toEqual(Buffer.concat(replies.map(() => encodeHeaderBlock({}))));
    expect(decodeHeaderBlock(encodeHeaderBlock({}))).toEqual(new Map());
    expect(Buffer.concat(out.filter((f) => !f.control && f.id === 3).map((f) => f.payload)).toString()).toBe('SPDY');
    expect(Buffer.concat(out.filter((f) => !f.control && f.id === 5).map((f) => f.payload)).toString()).toMatch(/^error forwarding port 9 to pod web-0, uid u-1: dial tcp4/);
    expect(out.filter((f) => !f.control && (f.id === 5 || f.id === 7) && (f.flags & FLAG_FIN) !== 0).map((f) => f.id).sort()).toEqual([5, 7]);
    expect(out.find((f) => f.control && f.type === SPDY.ping)?.payload).toEqual(u32(1));
    session.closeAll();
  });

  it('the dictionary is SPDY/3\'s: 1,423 bytes, zlib dictionary id (Adler-32) 0xe3c6a7c2', () => {
    let a = 1;
    let b = 0;
    for (const c of SPDY_DICTIONARY) {
      a = (a + c) % 65521;
      b = (b + a) % 65521;
    }
    expect([SPDY_DICTIONARY.length, ((b << 16) | a) >>> 0]).toEqual([1423, 0xe3c6a7c2]);
  });
});

/**
 * The server side of SPDY/3.1 as Kubernetes' streaming APIs use it (the framing of
 * moby/spdystream, spdy-protocol-draft3-1): what `kubectl port-forward` speaks, raw after
 * an `Upgrade: SPDY/3.1` or tunnelled in a WebSocket (`SPDY/3.1+portforward.k8s.io`).
 *
 * Frames (all integers big-endian): a control frame is `1|version(15) type(16) flags(8)
 * length(24) payload`; a data frame `0|stream-id(31) flags(8) length(24) data`, flag
 * 0x01 = FIN. Control types used here: SYN_STREAM 1 (stream-id, associated-id,
 * priority/slot, header block), SYN_REPLY 2 (stream-id, header block), RST_STREAM 3,
 * SETTINGS 4, PING 6 (echoed), GOAWAY 7, HEADERS 8, WINDOW_UPDATE 9 (read and ignored:
 * port-forward data is tiny next to the 64 KiB initial window).
 *
 * Header blocks are one zlib stream per direction with the SPDY/3 dictionary (draft 3
 * §2.6.10.1), each block ending in a sync flush; uncompressed they are `count(32)` then
 * `name-length(32) name value-length(32) value` per pair (names lower-case, several
 * values NUL-separated). The client's blocks are inflated by re-inflating the whole
 * stream so far (blocks are few and small; this keeps the zlib context without async
 * streams). This server's blocks are zlib "stored" blocks, each followed by the empty
 * stored block of a sync flush (a valid deflate stream that needs no compressor state),
 * the zlib header without a preset dictionary first.
 */
import { EventEmitter } from 'node:events';
import { constants, inflateSync } from 'node:zlib';

/** The SPDY/3 header dictionary's length-prefixed words, in order (draft 3 §2.6.10.1). */
const DICTIONARY_WORDS = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
  'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding',
  'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag',
  'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin',
];
/** Status codes, then reason phrases, dates and media types the dictionary ends with (no length prefixes). */
const DICTIONARY_TAIL =
  [100, 101, 201, 202, 205, 206, 300, 302, 303, 304, 305, 306, 307, 402, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 502, 504, 505].join('') +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized403 Forbidden' +
  '404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,' +
  'publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The SPDY/3 zlib dictionary (1,423 bytes). */
export const SPDY_DICTIONARY: Buffer = Buffer.concat([
  ...DICTIONARY_WORDS.map((w) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(w.length, 0);
    return Buffer.concat([len, Buffer.from(w, 'latin1')]);
  }),
  Buffer.from(DICTIONARY_TAIL, 'latin1'),
]);

/** Control frame types. */
export const SPDY = { synStream: 1, synReply: 2, rstStream: 3, settings: 4, ping: 6, goAway: 7, headers: 8, windowUpdate: 9 } as const;
/** FIN flag of data and SYN frames. */
export const FLAG_FIN = 0x01;

/** Headers of a stream: lower-case name → values. */
export type SpdyHeaders = ReadonlyMap<string, readonly string[]>;

/** Encodes a header block's uncompressed form. */
export function encodeHeaderBlock(headers: Readonly<Record<string, string>>): Buffer {
  const parts: Buffer[] = [u32(Object.keys(headers).length)];
  for (const [k, v] of Object.entries(headers)) {
    const name = Buffer.from(k.toLowerCase(), 'utf8');
    const value = Buffer.from(v, 'utf8');
    parts.push(u32(name.length), name, u32(value.length), value);
  }
  return Buffer.concat(parts);
}

/** Decodes an uncompressed header block; throws on a truncated one. */
export function decodeHeaderBlock(b: Buffer): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let o = 0;
  const take = (n: number) => {
    if (o + n > b.length) throw new Error('truncated SPDY header block');
    const s = b.subarray(o, o + n);
    o += n;
    return s;
  };
  const count = take(4).readUInt32BE(0);
  for (let i = 0; i < count; i++) {
    const name = take(take(4).readUInt32BE(0)).toString('utf8');
    const value = take(take(4).readUInt32BE(0)).toString('utf8');
    out.set(name, [...(out.get(name) ?? []), ...value.split('\0')]);
  }
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return b;
}

/** A control frame with `payload`. */
export function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8000 | 3, 0);
  h.writeUInt16BE(type, 2);
  h.writeUInt32BE(payload.length, 4);
  h[4] = flags;
  return Buffer.concat([h, payload]);
}

/** A data frame. */
export function dataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(streamId & 0x7fffffff, 0);
  h.writeUInt32BE(data.length, 4);
  h[4] = flags;
  return Buffer.concat([h, data]);
}

/** One stream opened by the client. Events: `data` (Buffer), `end` (client FIN), `reset`. */
export class SpdyStream extends EventEmitter {
  private finSent = false;
  private closed = false;
  constructor(readonly id: number, readonly headers: SpdyHeaders, private readonly session: SpdySession) {
    super();
  }

  /** The first value of a header, or undefined. */
  header(name: string): string | undefined {
    return this.headers.get(name.toLowerCase())?.[0];
  }

  /** Sends data (ignored after FIN or reset). */
  write(data: Buffer): void {
    if (this.finSent || this.closed) return;
    for (let o = 0; o < data.length; o += 0xffff) this.session.send(dataFrame(this.id, 0, data.subarray(o, o + 0xffff)));
  }

  /** Half-closes this side: an empty data frame with FIN (spdystream's `Close`). */
  end(): void {
    if (this.finSent || this.closed) return;
    this.finSent = true;
    this.session.send(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
  }

  /** @internal the client reset the stream or the session ended. */
  markClosed(): void {
    this.closed = true;
  }
}

/**
 * A SPDY/3.1 session as the server: `feed` it the client's bytes, it writes frames with
 * `send`. Emits `stream` (SpdyStream, after its SYN_REPLY is sent), `goaway`, and `error`
 * for a protocol error (then the caller closes the transport).
 */
export class SpdySession extends EventEmitter {
  private buf: Buffer = Buffer.alloc(0);
  private readonly streams = new Map<number, SpdyStream>();
  private inflateInput: Buffer[] = [];
  private inflatedSoFar = 0;
  private deflateStarted = false;
  private dead = false;

  constructor(private readonly write: (b: Buffer) => void) {
    super();
  }

  /** Writes raw frame bytes to the client. */
  send(frame: Buffer): void {
    if (!this.dead) this.write(frame);
  }

  /** Takes bytes from the client; parses every complete frame. */
  feed(chunk: Buffer): void {
    if (this.dead) return;
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (this.buf.length >= 8) {
      const length = this.buf.readUInt32BE(4) & 0xffffff;
      if (this.buf.length < 8 + length) break;
      const frame = this.buf.subarray(0, 8 + length);
      this.buf = this.buf.subarray(8 + length);
      try {
        this.onFrame(frame);
      } catch (e) {
        this.dead = true;
        this.emit('error', e);
        return;
      }
    }
  }

  /** Ends every stream (the transport closed). */
  closeAll(): void {
    this.dead = true;
    for (const s of this.streams.values()) {
      s.markClosed();
      s.emit('reset');
    }
    this.streams.clear();
  }

  private onFrame(f: Buffer): void {
    const flags = f[4]!;
    const payload = f.subarray(8);
    if ((f[0]! & 0x80) === 0) {
      const s = this.streams.get(f.readUInt32BE(0) & 0x7fffffff);
      if (!s) return; // data for a reset stream
      if (payload.length) s.emit('data', Buffer.from(payload));
      if (flags & FLAG_FIN) s.emit('end');
      return;
    }
    const version = f.readUInt16BE(0) & 0x7fff;
    if (version !== 3) throw new Error(`SPDY version ${version} is not 3`);
    const type = f.readUInt16BE(2);
    switch (type) {
      case SPDY.synStream: {
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        const headers = this.inflate(payload.subarray(10));
        const stream = new SpdyStream(id, headers, this);
        this.streams.set(id, stream);
        this.send(controlFrame(SPDY.synReply, 0, Buffer.concat([u32(id), this.deflate(encodeHeaderBlock({}))])));
        this.emit('stream', stream);
        if (flags & FLAG_FIN) stream.emit('end');
        return;
      }
      case SPDY.headers:
      case SPDY.synReply:
        // Keeps the zlib context in step even though nothing here needs them.
        this.inflate(payload.subarray(4));
        return;
      case SPDY.rstStream: {
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        const s = this.streams.get(id);
        this.streams.delete(id);
        s?.markClosed();
        s?.emit('reset');
        return;
      }
      case SPDY.ping:
        this.send(controlFrame(SPDY.ping, 0, Buffer.from(payload.subarray(0, 4))));
        return;
      case SPDY.goAway:
        this.emit('goaway');
        return;
      default:
        return; // SETTINGS, WINDOW_UPDATE, unknown: nothing to do
    }
  }

  /** Inflates the next header block of the client's zlib stream. */
  private inflate(block: Buffer): Map<string, string[]> {
    this.inflateInput.push(Buffer.from(block));
    const all = inflateSync(Buffer.concat(this.inflateInput), { dictionary: SPDY_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
    const mine = all.subarray(this.inflatedSoFar);
    this.inflatedSoFar = all.length;
    return decodeHeaderBlock(mine);
  }

  /**
   * The next header block of this side's zlib stream: one stored block, then the empty
   * stored block a sync flush ends with (`00 00 00 ff ff`). The empty block matters: Go's
   * flate reader hands out a block's bytes only when it reaches the next block header,
   * and that header has to be inside this frame.
   */
  private deflate(raw: Buffer): Buffer {
    const head = this.deflateStarted ? Buffer.alloc(0) : Buffer.from([0x78, 0x01]);
    this.deflateStarted = true;
    const stored = (b: Buffer) => Buffer.concat([Buffer.from([0x00, b.length & 0xff, b.length >> 8, ~b.length & 0xff, (~b.length >> 8) & 0xff]), b]);
    return Buffer.concat([head, stored(raw), stored(Buffer.alloc(0))]);
  }
}

/**
 * A list of texts kept deflated in blocks (node:zlib raw deflate, RFC 1951), for a reader
 * that locates items in a big text and reads them much later (nft-json-direct.ts'
 * lazy pass over a replay's `nft -j` stdout): nft's JSON deflates about tenfold, so the kept
 * text costs a tenth of its characters. Texts are exact: every character, lone surrogates
 * included, comes back as it went in (Latin-1 bytes when every character of a block is below
 * U+0100, else UTF-16LE code units).
 *
 * Off the thread (the default): a block is deflated by node:zlib's asynchronous `deflateRaw`,
 * which runs on libuv's thread pool — a second core — while the caller reads on; the block's
 * text is kept and read as it is until its bytes come back (at the caller's next turn of the
 * event loop). A caller whose turns never reach the event loop (microtasks only) would hold
 * every block as text: past {@link MAX_PENDING_BLOCKS} blocks waiting, a block is deflated
 * on the thread instead, so the text held stays bounded either way.
 */
import { deflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';

/** Characters of texts gathered before they are deflated as one block. */
export const PACK_BLOCK_CHARS = 1 << 20;

/** Blocks whose asynchronous deflate may be waited for at once before one is deflated on the thread (bounds the text held). */
export const MAX_PENDING_BLOCKS = 8;

/** Deflate level: the fastest (a reader waits on it; the text repeats itself so much that level 1 already packs it tenfold). */
const LEVEL = 1;

/**
 * Output bytes per call back from the thread pool: above a block's deflated size (a 1 MiB
 * block deflates to about 90 KB), so each block comes back in one call, not in zlib's 16 KiB pieces.
 */
const POOL_CHUNK_BYTES = 1 << 18;

const WIDE = /[^\x00-\xff]/;

/** One block: its deflated bytes (or, while its deflate runs, its text), their encoding, where each text starts and ends in the block's characters. */
interface Block {
  bytes: Buffer | undefined;
  /** The block's texts until `bytes` came back from the thread pool (then let go). */
  texts: readonly string[] | undefined;
  readonly wide: boolean;
  /** `ends[k]`: the end of the block's k-th text (its start is `ends[k - 1]`, or 0). */
  readonly ends: readonly number[];
}

/** Where blocks are deflated: on libuv's thread pool (`'pool'`, see the module comment) or on the calling thread (`'thread'`). */
export type PackWhere = 'pool' | 'thread';

/**
 * Texts in the order pushed, by index: the last ones pushed stay strings until
 * {@link PACK_BLOCK_CHARS} of them are gathered, then they are deflated together and let go.
 * {@link PackedTexts.at} inflates a text's block (one block decoded at a time is kept).
 */
export class PackedTexts {
  private readonly blocks: Block[] = [];
  /** `blockOf[k]`: the block of text k, or -1 while it is still in `open`. */
  private readonly blockOf: number[] = [];
  /** `slot[k]`: text k's place in its block (or in `open`). */
  private readonly slot: number[] = [];
  private open: string[] = [];
  private openChars = 0;
  private decodedBlock = -1;
  private decoded = '';
  /** Bumped by {@link clear}: a deflate that comes back for an earlier generation is dropped. */
  private generation = 0;
  /** Deflates on the thread pool not come back yet. */
  private pending = 0;
  private waiters: (() => void)[] = [];
  /** Characters deflated so far (what a test counts). */
  packedChars = 0;
  /** Blocks deflated on the thread pool / on the calling thread (what a test counts). */
  packedOnPool = 0;
  packedOnThread = 0;

  /**
   * `blockChars`: characters gathered before a block is deflated (Infinity: texts are kept as
   * they are); `where`: where blocks are deflated ({@link PackWhere}).
   */
  constructor(
    private readonly blockChars: number = PACK_BLOCK_CHARS,
    private readonly where: PackWhere = 'pool',
  ) {}

  /** How many texts were pushed. */
  get length(): number {
    return this.blockOf.length;
  }

  /** Adds `text` as the next index; deflates the gathered texts once they reach the block's characters. */
  push(text: string): void {
    this.blockOf.push(-1);
    this.slot.push(this.open.length);
    this.open.push(text);
    this.openChars += text.length;
    if (this.openChars >= this.blockChars) this.pack();
  }

  /** Text `k` (0 ≤ k < length), exactly as pushed. */
  at(k: number): string {
    const b = this.blockOf[k]!;
    const s = this.slot[k]!;
    if (b < 0) return this.open[s]!;
    const block = this.blocks[b]!;
    if (block.texts !== undefined) return block.texts[s]!;
    if (this.decodedBlock !== b) {
      const bytes = inflateRawSync(block.bytes!);
      this.decoded = bytes.toString(block.wide ? 'utf16le' : 'latin1');
      this.decodedBlock = b;
    }
    return this.decoded.slice(s === 0 ? 0 : block.ends[s - 1]!, block.ends[s]!);
  }

  /** Blocks still held as text: their deflate on the thread pool has not come back (what a test counts). */
  get textBlocks(): number {
    let n = 0;
    for (const b of this.blocks) if (b.texts !== undefined) n++;
    return n;
  }

  /** Resolves once no deflate is waited for on the thread pool (at once when none is). */
  settled(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Deflates the gathered texts into one block. */
  private pack(): void {
    const open = this.open;
    if (open.length === 0) return;
    // The texts written one after another into one buffer: no joined copy of them as a string.
    const wide = open.some((t) => WIDE.test(t));
    const ends: number[] = [];
    let end = 0;
    for (const t of open) ends.push((end += t.length));
    const index = this.blocks.length;
    const encoding = wide ? 'utf16le' : 'latin1';
    const raw = Buffer.allocUnsafe(wide ? end * 2 : end);
    let at = 0;
    for (const t of open) at += raw.write(t, at, encoding);
    if (this.where === 'pool' && this.pending < MAX_PENDING_BLOCKS) {
      const block: Block = { bytes: undefined, texts: open, wide, ends };
      this.blocks.push(block);
      this.pending++;
      this.packedOnPool++;
      const generation = this.generation;
      deflateRaw(raw, { level: LEVEL, chunkSize: POOL_CHUNK_BYTES }, (error, bytes) => {
        if (generation !== this.generation) return;
        // On an error the block stays as text: nothing is lost, it only costs its characters.
        if (error === null) {
          block.bytes = bytes;
          block.texts = undefined;
        }
        this.pending--;
        if (this.pending === 0) for (const w of this.waiters.splice(0)) w();
      });
    } else {
      this.blocks.push({ bytes: deflateRawSync(raw, { level: LEVEL }), texts: undefined, wide, ends });
      this.packedOnThread++;
    }
    for (let k = this.blockOf.length - open.length; k < this.blockOf.length; k++) this.blockOf[k] = index;
    this.packedChars += end;
    this.open = [];
    this.openChars = 0;
  }

  /** Lets every text go (deflates still running are dropped when they come back). */
  clear(): void {
    this.generation++;
    this.pending = 0;
    for (const w of this.waiters.splice(0)) w();
    this.blocks.length = 0;
    this.blockOf.length = 0;
    this.slot.length = 0;
    this.open = [];
    this.openChars = 0;
    this.decodedBlock = -1;
    this.decoded = '';
  }
}

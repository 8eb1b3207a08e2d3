/**
 * A list of texts kept deflated in blocks (node:zlib raw deflate, RFC 1951), for a reader
 * that locates items in a big text and reads them much later (nft-json-direct.ts'
 * lazy pass over a replay's `nft -j` stdout): nft's JSON deflates about tenfold, so the kept
 * text costs a tenth of its characters. Texts are exact: every character, lone surrogates
 * included, comes back as it went in (Latin-1 bytes when every character of a block is below
 * U+0100, else UTF-16LE code units).
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** Characters of texts gathered before they are deflated as one block. */
export const PACK_BLOCK_CHARS = 1 << 20;

/** Deflate level: the fastest (a reader waits on it; the text repeats itself so much that level 1 already packs it tenfold). */
const LEVEL = 1;

const WIDE = /[^\x00-\xff]/;

/** One deflated block: its bytes, their encoding, where each text starts and ends in the block's characters. */
interface Block {
  readonly bytes: Buffer;
  readonly wide: boolean;
  /** `ends[k]`: the end of the block's k-th text (its start is `ends[k - 1]`, or 0). */
  readonly ends: readonly number[];
}

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
  /** Characters deflated so far (what a test counts). */
  packedChars = 0;

  /** `blockChars`: characters gathered before a block is deflated (Infinity: texts are kept as they are). */
  constructor(private readonly blockChars: number = PACK_BLOCK_CHARS) {}

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
    if (this.decodedBlock !== b) {
      const bytes = inflateRawSync(block.bytes);
      this.decoded = bytes.toString(block.wide ? 'utf16le' : 'latin1');
      this.decodedBlock = b;
    }
    return this.decoded.slice(s === 0 ? 0 : block.ends[s - 1]!, block.ends[s]!);
  }

  /** Deflates the gathered texts into one block. */
  private pack(): void {
    const open = this.open;
    if (open.length === 0) return;
    const joined = open.join('');
    const wide = WIDE.test(joined);
    const ends: number[] = [];
    let end = 0;
    for (const t of open) ends.push((end += t.length));
    const index = this.blocks.length;
    this.blocks.push({ bytes: deflateRawSync(Buffer.from(joined, wide ? 'utf16le' : 'latin1'), { level: LEVEL }), wide, ends });
    for (let k = this.blockOf.length - open.length; k < this.blockOf.length; k++) this.blockOf[k] = index;
    this.packedChars += joined.length;
    this.open = [];
    this.openChars = 0;
  }

  /** Lets every text go. */
  clear(): void {
    this.blocks.length = 0;
    this.blockOf.length = 0;
    this.slot.length = 0;
    this.open = [];
    this.openChars = 0;
    this.decodedBlock = -1;
    this.decoded = '';
  }
}

/**
 * `JSON.parse` of a file's bytes for the plain subset of JSON an API server and `kubectl get
 * -o json` print, without first decoding the bytes to a string: the same value `JSON.parse`
 * gives of the text (RFC 8259) when the bytes hold only
 * - strings of printable ASCII with no escape (no `\`, no byte below 0x20 or above 0x7e),
 * - integers without fraction or exponent, of at most 15 digits (exact in a double),
 * - objects without a `__proto__` key, nested at most {@link MAX_DEPTH} deep,
 * - JSON's four blanks around values;
 * and `undefined` for anything else — any other byte, a syntax error, a string with an escape, a
 * number in another form, text after the value — where the caller decodes the text and
 * parses it whole. Equal strings (keys, enum values, timestamps) are made once and shared
 * (an object's key order and values are those `JSON.parse` gives: a repeated key keeps its
 * first place and its last value, as an assignment does). Pure; never throws.
 */
import type { JsonObject, JsonValue } from '../model/k8s.js';

/** Node's Buffer with its Latin-1 slice (`buf.toString('latin1', s, e)` without the argument checks; not in @types/node). */
type LatinBuffer = Buffer & { latin1Slice(start: number, end: number): string };

/** Containers nested deeper than this are left to `JSON.parse` (the reader recurses once per level). */
const MAX_DEPTH = 100;

/** Thrown inside this module only: the bytes leave the subset. */
const OUTSIDE = Symbol('outside the plain subset');

function outside(): never {
  throw OUTSIDE;
}

/** Strings at most this long are looked up among those already made. */
const SHARED_MAX = 40;
/** Slots of the shared-string table (a power of two). */
const TABLE_SIZE = 1 << 17;
/** Strings kept in the table at most (half its slots, so a look-up ends soon); later ones are only looked up. */
const TABLE_KEEPS = TABLE_SIZE >> 1;

/**
 * The JSON value in `bytes` (blanks around it allowed), as `JSON.parse` of their text gives
 * it, or `undefined` when the bytes leave the plain subset (see the module's comment). Never throws.
 */
export function parseJsonBytes(bytes: Uint8Array): JsonValue | undefined {
  try {
    return new JsonBytesCursor(bytes).document();
  } catch {
    // Outside the subset, a stack too small for the allowed depth, or anything unforeseen: the caller parses the text.
    return undefined;
  }
}

/** Whether `e`, caught from a {@link JsonBytesCursor} call, says the bytes leave the plain subset (or a reader gave up on purpose: {@link outsideSubset}). */
export function isOutsideSubset(e: unknown): boolean {
  return e === OUTSIDE;
}

/** Gives up reading: what a {@link JsonBytesCursor} throws when the bytes leave the subset, for its callers' own checks. */
export function outsideSubset(): never {
  throw OUTSIDE;
}

/**
 * A reader of JSON bytes in the plain subset (see the module's comment) one value at a time,
 * for readers that build their own objects: each method reads at the cursor (blanks before it
 * skipped) and moves past what it read, or throws (see {@link isOutsideSubset}) when the bytes
 * there leave the subset or are not what it reads.
 */
export class JsonBytesCursor {
  /** The byte the cursor is at. */
  p = 0;
  private readonly b: LatinBuffer;
  /** Shared strings: per slot, the string and where its bytes first occurred. */
  private readonly texts = new Array<string | undefined>(TABLE_SIZE);
  private readonly at = new Int32Array(TABLE_SIZE);
  private kept = 0;

  constructor(bytes: Uint8Array) {
    this.b = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as LatinBuffer;
  }

  /** The whole bytes as one value with blanks around it. */
  document(): JsonValue {
    const v = this.value(0);
    this.blanks();
    if (this.p !== this.b.length) outside();
    return v;
  }

  /** Skips blanks; returns the byte then at the cursor (undefined at the end). */
  blanks(): number | undefined {
    const b = this.b;
    let p = this.p;
    let c = b[p];
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++p];
    this.p = p;
    return c;
  }

  /** Any value, as `JSON.parse` makes it; `depth`: the containers around it. */
  value(depth = 0): JsonValue {
    this.blanks();
    const c = this.b[this.p];
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object(depth + 1);
    if (c === 0x5b) return this.array(depth + 1);
    if (c === 0x74) return this.word(0x74_72_75_65, true);
    if (c === 0x66) {
      // `false`: the `f`, then `alse` as one 32-bit word.
      this.p++;
      return this.word(0x61_6c_73_65, false);
    }
    if (c === 0x6e) return this.word(0x6e_75_6c_6c, null);
    if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return this.number();
    return outside();
  }

  /** Skips one value (read and dropped). */
  skip(): void {
    this.value(1);
  }

  /**
   * The next key of an object whose `{` was read, the cursor then at its value; undefined at
   * the object's end (its `}` read). `first`: no member of this object read yet.
   */
  key(first: boolean): string | undefined {
    const b = this.b;
    let c = this.blanks();
    if (c === 0x7d) {
      this.p++;
      return undefined;
    }
    if (!first) {
      if (c !== 0x2c) outside();
      this.p++;
      c = this.blanks();
    }
    if (c !== 0x22) outside();
    const key = this.string();
    if (this.blanks() !== 0x3a) outside();
    this.p++;
    return key;
  }

  /** Whether an array whose `[` was read has another element (the cursor then at it); reads its `]` at the end. */
  element(first: boolean): boolean {
    const c = this.blanks();
    if (c === 0x5d) {
      this.p++;
      return false;
    }
    if (first) return true;
    if (c !== 0x2c) outside();
    this.p++;
    return true;
  }

  /** Reads `{` and says true, or reads `null` and says false; throws on any other value. */
  objectOrNull(): boolean {
    return this.opening(0x7b);
  }

  /** Reads `[` and says true, or reads `null` and says false; throws on any other value. */
  arrayOrNull(): boolean {
    return this.opening(0x5b);
  }

  private opening(bracket: number): boolean {
    const c = this.blanks();
    if (c === bracket) {
      this.p++;
      return true;
    }
    if (c === 0x6e) return this.word(0x6e_75_6c_6c, false);
    return outside();
  }

  /** A string, or `null` as undefined; throws on any other value. */
  stringOrNull(): string | undefined {
    const c = this.blanks();
    if (c === 0x22) return this.string();
    if (c === 0x6e) return this.word(0x6e_75_6c_6c, undefined);
    return outside();
  }

  /** `true` or `false`, or `null` as null; throws on any other value. */
  booleanOrNull(): boolean | null {
    const c = this.blanks();
    if (c === 0x74) return this.word(0x74_72_75_65, true);
    if (c === 0x66) {
      this.p++;
      return this.word(0x61_6c_73_65, false);
    }
    if (c === 0x6e) return this.word(0x6e_75_6c_6c, null);
    return outside();
  }

  /** Four bytes at the reader equal to `word` (big-endian), then `v`. */
  private word<T>(word: number, v: T): T {
    const b = this.b;
    const p = this.p;
    if (p + 4 > b.length || ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) !== (word | 0)) outside();
    this.p = p + 4;
    return v;
  }

  /** A number (the cursor at its first byte). */
  number(): number {
    const b = this.b;
    let p = this.p;
    const negative = b[p] === 0x2d;
    if (negative) p++;
    const start = p;
    let n = 0;
    let c = b[p];
    while (c !== undefined && c >= 0x30 && c <= 0x39) {
      n = n * 10 + (c - 0x30);
      c = b[++p];
    }
    const digits = p - start;
    // No digit, a leading zero, a fraction or exponent, or more digits than a double holds exactly.
    if (digits === 0 || digits > 15 || (digits > 1 && b[start] === 0x30) || c === 0x2e || c === 0x65 || c === 0x45) outside();
    this.p = p;
    return negative ? -n : n;
  }

  /** A string (the cursor at its opening quote). */
  string(): string {
    const b = this.b;
    const start = this.p + 1;
    let p = start;
    let h = 0;
    let c = b[p];
    while (c !== 0x22) {
      // An escape, a control character, a byte beyond ASCII, or the end of the bytes.
      if (c === undefined || c === 0x5c || c < 0x20 || c > 0x7e) outside();
      h = (Math.imul(h, 31) + c) | 0;
      c = b[++p];
    }
    this.p = p + 1;
    const len = p - start;
    if (len > SHARED_MAX) return b.latin1Slice(start, p);
    // Open addressing: the slot of `h`, then the next ones, until the same bytes or an empty slot.
    for (let slot = h & (TABLE_SIZE - 1); ; slot = (slot + 1) & (TABLE_SIZE - 1)) {
      const s = this.texts[slot];
      if (s === undefined) {
        const made = b.latin1Slice(start, p);
        if (this.kept < TABLE_KEEPS) {
          this.kept++;
          this.texts[slot] = made;
          this.at[slot] = start;
        }
        return made;
      }
      if (s.length === len && sameBytes(b, this.at[slot]!, start, len)) return s;
    }
  }

  private object(depth: number): JsonObject {
    if (depth > MAX_DEPTH) outside();
    const b = this.b;
    this.p++;
    this.blanks();
    const o: Record<string, JsonValue> = {};
    if (b[this.p] === 0x7d) {
      this.p++;
      return o;
    }
    for (;;) {
      if (b[this.p] !== 0x22) outside();
      const key = this.string();
      // `JSON.parse` makes `__proto__` an own key; an assignment would set the prototype.
      if (key === '__proto__') outside();
      this.blanks();
      if (b[this.p] !== 0x3a) outside();
      this.p++;
      o[key] = this.value(depth);
      this.blanks();
      const c = b[this.p++];
      if (c === 0x7d) return o;
      if (c !== 0x2c) outside();
      this.blanks();
    }
  }

  private array(depth: number): JsonValue[] {
    if (depth > MAX_DEPTH) outside();
    const b = this.b;
    this.p++;
    this.blanks();
    const a: JsonValue[] = [];
    if (b[this.p] === 0x5d) {
      this.p++;
      return a;
    }
    for (;;) {
      a.push(this.value(depth));
      this.blanks();
      const c = b[this.p++];
      if (c === 0x5d) return a;
      if (c !== 0x2c) outside();
    }
  }
}

/** Whether `len` bytes at `x` equal those at `y`. */
function sameBytes(b: Uint8Array, x: number, y: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (b[x + i] !== b[y + i]) return false;
  return true;
}

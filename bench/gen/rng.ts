/**
 * A small seeded pseudo-random generator for the capture generator: the same seed gives
 * the same sequence on every machine and Node version (no `Math.random`).
 *
 * Algorithm: mulberry32 (Tommy Ettinger's 32-bit generator, public domain), seeded from
 * the FNV-1a hash of the seed text, so seeds may be words (`--seed lab`) or numbers.
 */

/** FNV-1a, 32 bits, of a string's UTF-16 code units. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A seeded random source. Every method advances the one underlying sequence. */
export class Rng {
  private state: number;

  /** `seed`: any text; `'1'` and `1` give the same sequence. */
  constructor(seed: string | number) {
    this.state = fnv1a(String(seed));
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p` (0–1). */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)]!;
  }

  /**
   * A positive integer with a long tail (most values near `median`, a few ×50): the
   * shape of per-Service traffic. Exponential of a uniform, so cheap and deterministic.
   */
  heavy(median: number): number {
    return Math.max(1, Math.round(median * Math.exp((this.next() - 0.5) * 4 + (this.chance(0.05) ? 2 : 0))));
  }
}

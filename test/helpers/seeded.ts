/**
 * A seeded generator for tests: floats in [0, 1), the same sequence on every run and machine.
 * Algorithm: mulberry32 (Tommy Ettinger's 32-bit generator, public domain), as bench/gen/rng.ts
 * but seeded by the number itself.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

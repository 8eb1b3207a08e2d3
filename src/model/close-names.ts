/**
 * "Did you mean": the names of a list closest to one that was not found, for
 * UserError hints (`--service default/nope` → `default/nginx, kube-system/dns`).
 */

/** Levenshtein edit distance between `a` and `b` (insertions, deletions, substitutions; UTF-16 units). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * Up to `max` of `candidates` closest to `wanted`, nearest first (ties in input order):
 * those within an edit distance of a third of the longer string (at least 2), or that
 * contain `wanted`'s last `/`-segment (a Service name in another namespace).
 */
export function closeNames(wanted: string, candidates: readonly string[], max = 5): string[] {
  const tail = wanted.slice(wanted.lastIndexOf('/') + 1);
  return candidates
    .map((c, i) => ({ c, i, d: editDistance(wanted, c) }))
    .filter(({ c, d }) => d <= Math.max(2, Math.floor(Math.max(c.length, wanted.length) / 3)) || (tail !== '' && c.slice(c.lastIndexOf('/') + 1).includes(tail)))
    .sort((x, y) => x.d - y.d || x.i - y.i)
    .slice(0, max)
    .map(({ c }) => c);
}

// Vitest setup: deep equality (`toEqual`, `toStrictEqual`, `toMatchObject`…) compares a
// compact model object (a conntrack entry or tuple, an iptables rule or chain read
// through prototype getters) by its plain form (src/model/plain.ts), so a test compares
// what the fields read, never which of them happen to be stored.
import { expect } from 'vitest';
import { hasPlainForm, toPlain } from '../../src/model/plain.js';

/**
 * `x`'s plain form, plus the keys `other` has that `x` reads as undefined (a plain form
 * leaves absent fields out; `{ state: undefined }` must still match an entry without a state).
 */
function plainBeside(x: unknown, other: unknown): unknown {
  if (!hasPlainForm(x)) return x;
  const plain: Record<string, unknown> = { ...(toPlain(x) as object) };
  if (typeof other === 'object' && other !== null) {
    for (const k of Object.keys(other)) if (!(k in plain) && (x as unknown as Record<string, unknown>)[k] === undefined) plain[k] = undefined;
  }
  return plain;
}

type Tester = Parameters<typeof expect.addEqualityTesters>[0][number];

expect.addEqualityTesters([
  function plainForm(this: ThisParameterType<Tester>, a: unknown, b: unknown, testers: Tester[]) {
    if (!hasPlainForm(a) && !hasPlainForm(b)) return undefined;
    return this.equals(plainBeside(a, b), plainBeside(b, a), testers);
  },
]);

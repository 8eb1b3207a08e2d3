/**
 * The one documented way from a model object to plain data.
 *
 * The parsers keep the biggest tables compact (src/parsers/conntrack-compact.ts,
 * src/parsers/iptables-records.ts): a conntrack entry or tuple, an iptables rule or
 * chain may read some of its fields through prototype getters or inherit them from a
 * shared prototype, so a million-entry table costs a fraction of plain objects. Reading
 * a field is always right. What is NOT: object spread, `Object.keys`, `structuredClone`
 * and deep-equality helpers, which see only the stored fields. Before any of those, go
 * through {@link toPlain} (or the per-type `plainConntrackEntry`, `plainConntrackTuple`,
 * `plainIptablesRule`, `plainIptablesChain` it calls). `JSON.stringify` gives the plain
 * form by itself (`toJSON`).
 *
 * A compact object says so by a method under {@link PLAIN_FORM}; an object made of plain
 * data (a literal) has none and is its own plain form.
 */

/** The key of the method a compact model object gives its plain copy by. */
export const PLAIN_FORM: unique symbol = Symbol.for('nodescope.plainForm');

/** A model object that holds some fields in its prototype (see the module comment). */
export interface HasPlainForm {
  [PLAIN_FORM](): object;
}

/** True when `x` is a compact model object (its plain copy differs from it). */
export function hasPlainForm(x: unknown): x is HasPlainForm {
  return typeof x === 'object' && x !== null && typeof (x as Partial<HasPlainForm>)[PLAIN_FORM] === 'function';
}

/**
 * A plain copy of a compact model object (every field an own enumerable property; the
 * per-type functions say which nested values are shared), or `x` itself when it is
 * plain data already. Never throws.
 */
export function toPlain<T>(x: T): T {
  return hasPlainForm(x) ? (x[PLAIN_FORM]() as T) : x;
}

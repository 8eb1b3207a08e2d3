/**
 * The conntrack interner sent to another thread (src/parsers/conntrack-scan.ts `state` /
 * `restore`, used by the parse worker's reply, src/parsers/conntrack-transfer.ts): the restored
 * interner adopts the sender's IPv4 table instead of hashing every text again, and answers
 * every look-up — and numbers new addresses — exactly as the sender and as the table made again
 * from the texts (`restoreByTexts`, the reference). A table of a shape the class does not make is
 * not adopted (made again instead).
 */
import { describe, expect, it } from 'vitest';
import { ConntrackInterner, type ConntrackInternerState } from '../../src/parsers/conntrack-scan.js';
import { seededRandom } from '../helpers/seeded.js';

function ipv4(next: () => number): string {
  return [0, 1, 2, 3].map(() => Math.floor(next() * 256)).join('.');
}

/** Address texts of every kind the interner keeps: canonical IPv4 (`n` of them), IPv6 in two spellings, leading-zero IPv4. */
function addresses(n: number, seed: number): string[] {
  const next = seededRandom(seed);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(ipv4(next));
  for (let i = 0; i < 50; i++) out.push(`fd00::${(i + seed).toString(16)}`, `fd00:0000:0000:0000:0000:0000:0000:${(i + seed).toString(16).padStart(4, '0')}`);
  for (let i = 0; i < 20; i++) out.push(`10.0.0.0${i % 10}`, `010.${i}.1.2`);
  return out;
}

function filled(texts: readonly string[]): ConntrackInterner {
  const interner = new ConntrackInterner();
  for (const t of texts) interner.address(t, 0, t.length);
  interner.intern('not-an-address');
  return interner;
}

/** The state as a message to another thread carries it (the IPv4 table transferred). */
function sent(state: ConntrackInternerState): ConntrackInternerState {
  return structuredClone(state, { transfer: state.v4 ? [state.v4.slots.buffer] : [] });
}

function expectSameAnswers(a: ConntrackInterner, b: ConntrackInterner, probes: readonly string[]): void {
  expect(b.texts).toEqual(a.texts);
  expect(probes.map((t) => b.idOf(t))).toEqual(probes.map((t) => a.idOf(t)));
}

describe('conntrack interner restored in another thread', () => {
  it.each([100, 3000, 20_000])('with %i IPv4 addresses: adopts the IPv4 table and answers as the sender and as the table made again from the texts', (n) => {
    const texts = addresses(n, n);
    const original = filled(texts);
    const probes = [...texts, ...addresses(2000, n + 1), 'not-an-address', 'nothing', '', '1.2.3', '::'];
    const state = original.state();
    const reference = ConntrackInterner.restoreByTexts(state);
    const message = sent(original.state());
    const restored = ConntrackInterner.restore(message);
    expectSameAnswers(original, restored, probes);
    expectSameAnswers(original, reference, probes);
    expect(probes.filter((t) => restored.idOf(t) >= 0).length).toBeGreaterThan(n / 2);
    // Adopted, not made again: its table is the message's (zeroed, the IPv4 look-ups fail).
    message.v4!.slots.fill(0);
    expect(restored.idOf(texts[0]!)).toBe(-1);
    // Numbering goes on alike (past the table's growth for the big one).
    const more = addresses(n, n + 7);
    const again = ConntrackInterner.restore(sent(original.state()));
    const ref2 = ConntrackInterner.restoreByTexts(original.state());
    for (const t of more) {
      again.address(t, 0, t.length);
      ref2.address(t, 0, t.length);
      original.address(t, 0, t.length);
    }
    expectSameAnswers(original, again, [...probes, ...more]);
    expectSameAnswers(original, ref2, [...probes, ...more]);
  });

  it('does not adopt a table of a shape the class does not make: made again from the texts, same answers', () => {
    const texts = addresses(5000, 5);
    const original = filled(texts);
    const probes = [...texts, ...addresses(500, 6)];
    const good = original.state();
    const slots = good.v4!.slots;
    const odd: ConntrackInternerState[] = [
      { ...good, v4: { slots: slots.slice(0, slots.length - 2), count: good.v4!.count } },
      { ...good, v4: { slots: new Int32Array(slots.length * 3), count: good.v4!.count } },
      { ...good, v4: { slots: slots.slice(0, 2 * 1024), count: 10 } },
      { ...good, v4: { slots: slots.slice(), count: slots.length } },
      { ...good, v4: { slots: slots.slice(), count: -1 } },
      { texts: good.texts, v6: good.v6, odd: good.odd },
    ];
    for (const state of odd) {
      const restored = ConntrackInterner.restore(state);
      expectSameAnswers(original, restored, probes);
      // Not adopted: zeroing the given table changes nothing.
      state.v4?.slots.fill(0);
      expectSameAnswers(original, restored, probes);
    }
  });
});

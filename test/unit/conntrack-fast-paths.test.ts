/**
 * The shortcuts inside the conntrack fast path (src/parsers/conntrack-fast.ts) change
 * nothing but speed: a dotted quad read octet by octet, the reply's destination taken
 * from the original's source, a line's prefix compared with the previous line's, the
 * usual `mark=0 use=1` tail in one compare, state words by first letter, counters in
 * one pass. Lines at each shortcut's edges, in sequences where the line before sets
 * up the shortcut, parse exactly as the general line parser parses them.
 */
import { describe, expect, it } from 'vitest';
import { COMPACT_STATES } from '../../src/parsers/conntrack-compact.js';
import { plainConntrackEntry, type ConntrackTable } from '../../src/model/conntrack.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import { parseConntrack, parseConntrackGeneral, parseConntrackStream } from '../../src/parsers/conntrack.js';
import { ctLine } from './conntrack-builders.js';

function plain(r: ParseResult<ConntrackTable>) {
  return { ...r, value: { ...r.value, entries: r.value.entries.map(plainConntrackEntry) } };
}

/** `lines` parsed by the fast path (string and stream) must equal the general parser's result. */
async function expectSameAsGeneral(lines: readonly string[]): Promise<void> {
  const text = `${lines.join('\n')}\n`;
  const want = plain(parseConntrackGeneral(text, 'ct'));
  expect(plain(parseConntrack(text, 'ct'))).toStrictEqual(want);
  expect(plain(await parseConntrackStream(lines, 'ct'))).toStrictEqual(want);
}

/** A flow from `client` to `vip`, answered by `endpoint` to `back` (the address the reply goes to). */
function flow(client: string, vip: string, endpoint: string, back: string, over: Parameters<typeof ctLine>[0] = {}): string {
  return ctLine({
    orig: `src=${client} dst=${vip} sport=40000 dport=80`,
    reply: `src=${endpoint} dst=${back} sport=8080 dport=40000`,
    ...over,
  });
}

describe('conntrack fast path shortcuts', () => {
  it.each([
    ['0.0.0.0'],
    ['255.255.255.255'],
    ['1.2.3.4'],
    ['100.64.0.1'],
    ['10.244.255.9'],
    ['256.1.1.1'],
    ['1.256.1.1'],
    ['1.1.1.300'],
    ['1.2.3.4.5'],
    ['1.2.3'],
    ['1..2.3'],
    ['01.2.3.4'],
    ['1.2.3.00'],
    ['1234.1.1.1'],
    ['1.2.3.4x'],
    ['1.2.3.4:'],
    ['a.b.c.d'],
  ])('reads the address %s as the general parser does, in each position of both tuples', async (addr) => {
    const lines = [
      flow(addr, '10.96.0.1', '10.244.0.31', addr),
      flow('10.244.0.9', addr, '10.244.0.31', '10.244.0.9'),
      flow('10.244.0.9', '10.96.0.1', addr, '10.244.0.9'),
      flow('10.244.0.9', '10.96.0.1', '10.244.0.31', addr),
      flow(addr, addr, addr, addr),
    ];
    await expectSameAsGeneral(lines);
  });

  it('gives the reply destination its own value whether or not it repeats the original source', async () => {
    // [original source, reply destination]
    const pairs: [string, string][] = [
      ['10.244.0.9', '10.244.0.9'],
      ['10.244.0.9', '10.244.0.10'],
      ['10.244.0.9', '10.96.0.1'],
      // A non-canonical original source: no shortcut.
      ['10.244.0.09', '10.244.0.9'],
      ['10.244.0.9', '10.244.0.09'],
      // IPv6 original source, IPv4 reply destination (mixed families: not a fast entry).
      ['fd00::9', '10.244.0.9'],
      ['10.244.0.7', '10.244.0.7'],
    ];
    const lines = pairs.map(([client, back]) => flow(client, '10.96.0.1', '10.244.0.31', back));
    await expectSameAsGeneral(lines);
    const byLine = new Map(parseConntrack(`${lines.join('\n')}\n`, 'ct').value.entries.map((e) => [e.line, e]));
    const leadingZero = /(^|\.)0\d/;
    const checked = pairs.filter(([client, back], k) => {
      if (client.includes(':') || leadingZero.test(client) || leadingZero.test(back)) return false; // not an entry / not canonical
      expect([k, byLine.get(k + 1)?.reply.dst, byLine.get(k + 1)?.orig.src]).toEqual([k, back, client]);
      return true;
    });
    expect(checked.length).toBe(4);
  });

  it('reads each prefix afresh when it differs from the line before, or is followed by more blanks', async () => {
    const v6 = { orig: 'src=fd00::9 dst=fd00::34 sport=1 dport=2', reply: 'src=fd00::31 dst=fd00::9 sport=3 dport=1' };
    const lines = [
      ctLine({ l3: 'ipv4     2' }),
      ctLine({ l3: 'ipv4     2' }),
      ctLine({ l3: 'ipv4     2', head: 'tcp      6  431999 ESTABLISHED' }),
      ctLine({ l3: 'ipv4     2', head: 'tcp      6\t431999 ESTABLISHED' }),
      ctLine({ l3: 'ipv4     2', head: 'udp      17 30', afterReply: 'mark=0 use=1' }),
      ctLine({ l3: 'ipv4     2' }),
      ctLine({ l3: 'ipv6     10', ...v6 }),
      ctLine({ l3: 'ipv6     10', ...v6 }),
      ctLine({ l3: 'ipv6     10' }),
      ctLine(),
      ctLine({ head: 'tcp     6 431999 ESTABLISHED' }),
      ctLine(),
      ctLine({ l3: 'ipv4      2' }),
      ctLine({ l3: 'ipv4     2' }),
      ctLine({ l3: 'ipv4     2' }).slice(0, 22),
      ctLine({ l3: 'ipv4     2' }).slice(0, 21),
      ctLine({ l3: 'ipv4     2', head: 'tcp      6 ESTABLISHED' }),
      ctLine({ l3: 'ipv4     2', head: 'tcp      6 4 ESTABLISHED' }),
    ];
    await expectSameAsGeneral(lines);
    await expectSameAsGeneral([...lines].reverse());
  });

  it('tells apart state words that share a beginning, and rejects words that only start like one', async () => {
    const words = [...COMPACT_STATES, 'CLOSE_WAITX', 'ESTABLISHE', 'SYN_SENT3', 'TIME', 'Zzz', 'NONE_'];
    expect(words).toContain('SYN_SENT2');
    const lines = words.flatMap((w) => [ctLine({ head: `tcp      6 120 ${w}` }), ctLine({ l3: 'ipv4     2', head: `sctp     132 ${w}` })]);
    await expectSameAsGeneral(lines);
  });

  it.each([
    ['mark=0 use=1'],
    ['[ASSURED] mark=0 use=1'],
    ['[ASSURED] mark=0 use=12'],
    ['[ASSURED] mark=0 use=1 id=5'],
    ['[ASSURED] mark=0  use=1'],
    ['[ASSURED] mark=00 use=1'],
    ['[ASSURED] mark=0 use=1x'],
    ['[ASSURED] mark=0 use='],
    ['[ASSURED] mark=0 use=1\t'],
    ['[ASSURED] mark=0 zone=1 use=1'],
  ])('reads the tail %j as the general parser does', async (afterReply) => {
    await expectSameAsGeneral([ctLine(), ctLine({ afterReply }), ctLine()]);
  });

  it.each([
    ['packets=0 bytes=0'],
    ['packets=999999999999999 bytes=1'],
    ['packets=9999999999999999 bytes=1'],
    ['packets=1 bytes=18446744073709551615'],
    ['packets=1 bytes=18446744073709551616'],
    ['packets=1 bytes=012'],
    ['packets=1 bytes=12a'],
    ['packets=1 bytes='],
    ['packets= bytes=1'],
    ['packets=1 bites=1'],
    ['packets=1'],
  ])('reads the counters %j as the general parser does', async (afterOrig) => {
    await expectSameAsGeneral([ctLine({ afterOrig }), ctLine({ afterOrig, afterReply: `${afterOrig} [ASSURED] mark=0 use=1` })]);
  });
});

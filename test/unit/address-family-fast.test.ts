/**
 * `addressFamily` reads the common case without ipaddr.js (src/net/address.ts): it must give
 * exactly what the ipaddr.js reading (`addressFamilyViaIpaddr`, the old path) gives, for
 * addresses, CIDR-less near misses and random text.
 */
import { describe, expect, it } from 'vitest';
import { addressFamily, addressFamilyViaIpaddr, isFourPartDecimal } from '../../src/net/address.js';

const CASES = [
  '10.0.0.1', '0.0.0.0', '255.255.255.255', '256.0.0.1', '010.0.0.1', '10.01.0.1', '10.0.0.00', '10.0.0.0', '1.2.3', '1.2.3.4.5',
  '1..2.3', '.1.2.3', '1.2.3.', '0x0a.0.0.1', '10.0.0.1 ', ' 10.0.0.1', '10.0.0.1\n', '1000.0.0.1', '00.0.0.0', '', '.', 'a',
  '::', '::1', 'fd00::1', 'fd00::1%eth0', '::ffff:10.0.0.1', '::ffff:010.0.0.1', '2001:db8::', 'fe80::1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:9', ':1', '1:', 'g::1', '10.0.0.1:80', '[fd00::1]', 'FD00::A', '١٠.0.0.1', '10.0.0.1/24',
];

/** Random text from the characters addresses are made of (seeded: the same run every time). */
function randomTexts(n: number): string[] {
  let seed = 0x2545f491;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) / 0x1000000;
  const alphabet = '0123456789.:.0123456789abcdefABCDEF%x/ ';
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let s = '';
    const len = Math.floor(next() * 18);
    for (let k = 0; k < len; k++) s += alphabet[Math.floor(next() * alphabet.length)];
    out.push(s);
  }
  return out;
}

/** Random dotted quads, some with leading zeros or parts above 255. */
function randomQuads(n: number): string[] {
  let seed = 7;
  const next = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) >>> 8) / 0x1000000;
  const part = () => {
    const r = next();
    if (r < 0.1) return `0${Math.floor(next() * 100)}`;
    if (r < 0.2) return String(250 + Math.floor(next() * 10));
    return String(Math.floor(next() * 256));
  };
  return Array.from({ length: n }, () => `${part()}.${part()}.${part()}.${part()}`);
}

describe('addressFamily without ipaddr.js for the common case', () => {
  it('gives what ipaddr.js gives, on known cases, random dotted quads and random text', () => {
    const texts = [...CASES, ...randomQuads(10_000), ...randomTexts(15_000)];
    const differ = texts.filter((t) => addressFamily(t) !== addressFamilyViaIpaddr(t));
    expect(differ).toEqual([]);
    // The sample reaches every answer, so the comparison is not vacuous.
    const answers = new Set(texts.map(addressFamilyViaIpaddr));
    expect(answers).toEqual(new Set(['ipv4', 'ipv6', null]));
  });

  it('takes the four-part decimal form only', () => {
    expect(['10.0.0.1', '0.0.0.0', '255.255.255.255'].map(isFourPartDecimal)).toEqual([true, true, true]);
    expect(['010.0.0.1', '10.0.0.01', '256.1.1.1', '10.1', '0x0a.0.0.1', '10.0.0.1 '].map(isFourPartDecimal)).toEqual([false, false, false, false, false, false]);
  });
});

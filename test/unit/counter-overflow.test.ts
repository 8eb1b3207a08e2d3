/**
 * Counters above 2^64−1 (issue 24 item 9): the kernel's packet and byte counters are u64,
 * so a larger value in iptables-save or nft output is a damaged or forged dump. Each is a
 * `counter-overflow` warning at its line; the value is kept as read (bigint), never wrapped.
 * (conntrack already refuses such a value: `bad-value`, the field left unknown.)
 */
import { describe, expect, it } from 'vitest';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';

const MAX = '18446744073709551615';
const OVER = '18446744073709551616';

describe('iptables-save counters above 2^64−1', () => {
  it('a chain header, a [p:b] rule and a -c rule each give a counter-overflow warning; 2^64−1 itself none', () => {
    const text = [
      '*nat',
      `:PREROUTING ACCEPT [${OVER}:0]`,
      `:KUBE-SERVICES - [${MAX}:${MAX}]`,
      `[1:${OVER}] -A KUBE-SERVICES -j RETURN`,
      `-A PREROUTING -c ${OVER} 5 -j KUBE-SERVICES`,
      `[${MAX}:1] -A PREROUTING -j RETURN`,
      'COMMIT',
      '',
    ].join('\n');
    const r = parseIptablesSave(text, 'iptables-save');
    expect(r.diagnostics.filter((d) => d.code === 'counter-overflow').map((d) => [d.severity, d.line])).toEqual([
      ['warning', 2],
      ['warning', 4],
      ['warning', 5],
    ]);
    const nat = r.value.tables.find((t) => t.name === 'nat')!;
    const chain = (name: string) => nat.chains.find((c) => c.name === name)!;
    expect(chain('PREROUTING').counters).toEqual({ packets: BigInt(OVER), bytes: 0n });
    expect(chain('KUBE-SERVICES').rules[0]!.counters).toEqual({ packets: 1n, bytes: BigInt(OVER) });
    expect(chain('PREROUTING').rules[0]!.counters).toEqual({ packets: BigInt(OVER), bytes: 5n });
  });
});

describe('nft counters above 2^64−1', () => {
  it('nft text: a counter-overflow warning at the rule, the value kept', () => {
    const text = `table ip t {\n\tchain c {\n\t\tcounter packets 1 bytes 2 accept\n\t\tcounter packets ${OVER} bytes 5 accept\n\t\tcounter packets ${MAX} bytes ${MAX} drop\n\t}\n}\n`;
    const r = parseNftText(text, 'nft');
    expect(r.diagnostics.filter((d) => d.code === 'counter-overflow').map((d) => [d.severity, d.line])).toEqual([['warning', 4]]);
    const rule = r.value.tables[0]!.chains[0]!.rules[1]!;
    expect(rule.statements[0]).toMatchObject({ kind: 'counter', packets: BigInt(OVER), bytes: 5n });
  });

  it('nft -j: a counter-overflow warning for the rule, the value kept with every digit', () => {
    const rule = (handle: number, packets: string) => `{"rule":{"family":"ip","table":"t","chain":"c","handle":${handle},"expr":[{"counter":{"packets":${packets},"bytes":5}},{"accept":null}]}}`;
    const text = `{"nftables":[{"metainfo":{"json_schema_version":1}},{"table":{"family":"ip","name":"t","handle":1}},{"chain":{"family":"ip","table":"t","name":"c","handle":1}},${rule(2, MAX)},${rule(3, OVER)}]}`;
    const r = parseNftJson(text, 'nft-json');
    expect(r.diagnostics.filter((d) => d.code === 'counter-overflow')).toHaveLength(1);
    expect(r.diagnostics.find((d) => d.code === 'counter-overflow')!.message).toContain(OVER);
    const rules = r.value.tables[0]!.chains[0]!.rules;
    expect(rules.map((x) => x.statements[0])).toMatchObject([{ packets: BigInt(MAX) }, { packets: BigInt(OVER) }]);
  });
});

import { describe, expect, it } from 'vitest';
import { hasPlainForm, toPlain } from '../../src/model/plain.js';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { CompactConntrackEntry } from '../../src/parsers/conntrack-compact.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import type { ConntrackEntry } from '../../src/model/conntrack.js';
import { toJson } from '../../src/text/json.js';
import type { IptablesChain, IptablesRule } from '../../src/model/iptables.js';

const LINE = 'ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.1 dst=10.96.0.10 sport=40000 dport=53 src=10.244.1.5 dst=10.0.0.1 sport=53 dport=40000 [ASSURED] mark=0 use=1';

const DUMP = [
  '*nat',
  ':PREROUTING ACCEPT [0:0]',
  ':KUBE-SERVICES - [0:0]',
  '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
  '-A KUBE-SERVICES -d 10.96.0.10/32 -p udp -m udp --dport 53 -j KUBE-SVC-TCOU7JCQXEZGVUNU',
  'COMMIT',
  '',
].join('\n');

/** The entry as plain data, written out by hand from LINE (what every reader of the model sees). */
const WANT: ConntrackEntry = {
  line: 1,
  raw: LINE,
  family: 'ipv4',
  proto: 'tcp',
  protoNum: 6,
  timeout: 431999,
  state: 'ESTABLISHED',
  orig: { src: '10.0.0.1', dst: '10.96.0.10', sport: 40000, dport: 53 },
  reply: { src: '10.244.1.5', dst: '10.0.0.1', sport: 53, dport: 40000 },
  flags: ['ASSURED'],
  mark: 0,
  use: 1,
};

function compactEntry(): ConntrackEntry {
  const e = parseConntrack(`${LINE}\n`, 't').value.entries[0]!;
  // The point of this file: the parser's compact class, whose fields a spread does not see.
  expect(e).toBeInstanceOf(CompactConntrackEntry);
  return e;
}

function firstRule(): { chain: IptablesChain; rule: IptablesRule } {
  const chain = parseIptablesSave(DUMP, 't').value.tables[0]!.chains.find((c) => c.name === 'PREROUTING')!;
  return { chain, rule: chain.rules[0]! };
}

describe('model objects have one path to plain data (issue 20: honest model types)', () => {
  it('a compact conntrack entry: a spread sees only stored fields, toPlain gives every field', () => {
    const e = compactEntry();
    expect(hasPlainForm(e)).toBe(true);
    expect(Object.keys({ ...e })).not.toContain('state');
    const plain = toPlain(e);
    expect(hasPlainForm(plain)).toBe(false);
    expect(Object.keys(plain)).toEqual(expect.arrayContaining(['state', 'timeout', 'orig', 'reply', 'raw']));
    expect(structuredClone(plain)).toStrictEqual(WANT);
    expect(JSON.parse(JSON.stringify(e)).state).toBe('ESTABLISHED');
  });

  it('deep equality compares a compact entry by what its fields read, and still fails on a difference', () => {
    const e = compactEntry();
    expect(e).toEqual(WANT);
    expect(e.orig).toEqual(WANT.orig);
    expect(e).not.toEqual({ ...WANT, state: 'TIME_WAIT' });
    expect(e).not.toEqual({ ...WANT, orig: { ...WANT.orig, dport: 54 } });
  });

  it('an iptables rule and chain: defaults inherited from the prototype appear in toPlain, JSON and deep equality', () => {
    const { chain, rule } = firstRule();
    expect(Object.keys({ ...rule })).not.toContain('source');
    expect(hasPlainForm(rule)).toBe(true);
    const plain = toPlain(rule);
    expect(plain.source).toBeNull();
    expect(Object.keys(plain)).toContain('source');
    expect(JSON.parse(JSON.stringify(rule))).toMatchObject({ chain: 'PREROUTING', source: null, destination: null, comment: 'kubernetes service portals' });
    expect(rule).toEqual({ ...plain });
    expect(rule).not.toEqual({ ...plain, comment: 'other' });
    const plainChain = toPlain(chain);
    expect(Object.keys(plainChain)).toEqual(expect.arrayContaining(['builtin', 'policy', 'inferred', 'rules']));
    expect(hasPlainForm(plainChain.rules[0])).toBe(false);
    expect(JSON.parse(toJson(chain)).rules[0].source).toBeNull();
    // Own enumerable keys are what they were: the methods live on the prototype, not listed.
    expect(Object.keys(rule)).not.toContain('toJSON');
  });

  it('plain data is its own plain form', () => {
    expect(toPlain(WANT)).toBe(WANT);
    expect(hasPlainForm(null)).toBe(false);
  });
});

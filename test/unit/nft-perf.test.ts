/**
 * nft parsers stay linear: a kube-proxy ruleset of tens of thousands of lines in both text
 * forms and as JSON, and inputs shaped to make a careless parser quadratic (one huge line,
 * one huge set, thousands of unknown statements, a giant word). The time bounds are loose
 * on purpose: a quadratic path would take minutes at these sizes, a linear one well under
 * a second, so the bound separates the two without depending on the machine.
 */
import { describe, expect, it } from 'vitest';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import { countRules, findMap } from '../../src/model/nftables.js';
import { formatNftText } from '../../src/parsers/nft-format.js';
import { parseNftJson } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { kubeProxyInput, kubeService } from './nft-builders.js';

const BOUND_MS = 15_000;

function timed<T>(f: () => T): { value: T; ms: number } {
  const t0 = performance.now();
  const value = f();
  return { value, ms: performance.now() - t0 };
}

const SERVICES = 2000;
const services = Array.from({ length: SERVICES }, (_, i) =>
  kubeService({
    name: `svc${i}`,
    clusterIP: `10.96.${i >> 8}.${i & 255}`,
    endpointIPs: [0, 1, 2].map((k) => `10.244.${i >> 6}.${(i & 63) * 3 + k}`),
  }),
);

describe('a large kube-proxy ruleset', () => {
  const tx = generateNftablesRules(kubeProxyInput(services));

  it(`reads ${SERVICES} Services as a transaction and as nft list text`, () => {
    const fromTx = timed(() => parseNftText(tx, 'tx'));
    expect(fromTx.value.diagnostics).toEqual([]);
    expect(findMap(fromTx.value.value.tables[0]!, 'service-ips')!.elements).toHaveLength(SERVICES);
    const listed = formatNftText(fromTx.value.value);
    expect(listed.split('\n').length).toBeGreaterThan(40_000);
    const fromList = timed(() => parseNftText(listed, 'list'));
    expect(fromList.value.diagnostics).toEqual([]);
    expect(countRules(fromList.value.value)).toBe(countRules(fromTx.value.value));
    expect(fromTx.ms + fromList.ms).toBeLessThan(BOUND_MS);
  });

  it('reads a JSON document of 100,000 rules', () => {
    const rule = (i: number) => ({
      rule: {
        family: 'ip',
        table: 't',
        chain: 'c',
        handle: i,
        expr: [
          { match: { op: '==', left: { payload: { protocol: 'ip', field: 'daddr' } }, right: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}` } },
          { counter: { packets: i, bytes: i * 60 } },
          { jump: { target: `service-${i}` } },
        ],
      },
    });
    const text = JSON.stringify({
      nftables: [{ metainfo: { json_schema_version: 1 } }, { table: { family: 'ip', name: 't' } }, { chain: { family: 'ip', table: 't', name: 'c' } }, ...Array.from({ length: 100_000 }, (_, i) => rule(i))],
    });
    const r = timed(() => parseNftJson(text, 'big.json'));
    expect(r.value.diagnostics).toEqual([]);
    expect(countRules(r.value.value)).toBe(100_000);
    expect(r.ms).toBeLessThan(BOUND_MS);
  });
});

describe('inputs shaped to be slow', () => {
  it.each([
    ['a 200,000-field concatenation on one line', () => `table ip t {\n\tchain c {\n\t\tip daddr${' . ip daddr'.repeat(200_000)} accept\n\t}\n}\n`],
    ['100,000 elements in one set on one line', () => `table ip t {\n\tset s {\n\t\ttype inet_service\n\t\telements = { ${Array.from({ length: 100_000 }, (_, i) => i).join(', ')} }\n\t}\n}\n`],
    ['20,000 unknown statements with braces', () => `table ip t {\n\tchain c {\n${'\t\tmeter m { ip saddr limit rate 1/second } accept\n'.repeat(20_000)}\t}\n}\n`],
    ['a 5 MB word', () => `table ip t {\n\tchain ${'x'.repeat(5_000_000)} {\n\t}\n}\n`],
    ['50,000 unterminated strings', () => 'table ip t {\n\tcomment "open\n'.repeat(50_000)],
    ['100,000 lines of garbage', () => 'garbage { ; } , here\n'.repeat(100_000)],
  ])('%s', (_name, make) => {
    const text = make();
    const r = timed(() => parseNftText(text, 'slow'));
    expect(r.ms).toBeLessThan(BOUND_MS);
    expect(r.value.diagnostics.length).toBeLessThanOrEqual(1001);
  });

  it('a set of 1,000,000 elements (regression: `push(...elements)` overflowed the stack)', () => {
    const text = `table ip t {\n\tset s {\n\t\ttype inet_service\n\t\telements = { ${Array.from({ length: 1_000_000 }, (_, i) => i % 65536).join(', ')} }\n\t}\n}\n`;
    const r = timed(() => parseNftText(text, 'million'));
    expect(r.value.diagnostics).toEqual([]);
    expect(r.value.value.tables[0]!.sets[0]!.elements).toHaveLength(1_000_000);
    expect(r.ms).toBeLessThan(BOUND_MS);
  });

  it('truncated JSON of 10 MB locates its error and salvages in linear time', () => {
    const full = JSON.stringify({ nftables: [{ metainfo: { json_schema_version: 1 } }, ...Array.from({ length: 100_000 }, (_, i) => ({ table: { family: 'ip', name: `t${i}` } }))] });
    const r = timed(() => parseNftJson(full.slice(0, full.length - 30), 'cut.json'));
    expect(r.value.diagnostics[0]!.code).toBe('json-syntax');
    expect(r.value.value.tables.length).toBeGreaterThan(99_990);
    expect(r.ms).toBeLessThan(BOUND_MS);
  });
});

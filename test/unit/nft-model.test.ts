/**
 * nftables model helpers: base chains ordered by hook and priority (what the step engine
 * walks), and lookups of tables, chains, sets and maps by name.
 */
import { describe, expect, it } from 'vitest';
import { chainsByHook, countRules, findChain, findMap, findSet, findTable, type NftChain, type NftRuleset, type NftTable } from '../../src/model/nftables.js';
import { parseNftText } from '../../src/parsers/nft-text.js';

/** A base chain declaration line for the text parser. */
const base = (name: string, type: string, hook: string, prio: string) => `add chain ip t ${name} { type ${type} hook ${hook} priority ${prio} ; }`;

function ruleset(lines: string[]): NftRuleset {
  const r = parseNftText(`${lines.join('\n')}\n`, 'model');
  expect(r.diagnostics).toEqual([]);
  return r.value;
}

describe('chainsByHook', () => {
  const rs = ruleset([
    'add table ip t',
    'add table inet f',
    base('nat-postrouting', 'nat', 'postrouting', 'srcnat'),
    base('nat-output', 'nat', 'output', 'dstnat'),
    base('filter-output', 'filter', 'output', '0'),
    base('filter-output-pre-dnat', 'filter', 'output', '-110'),
    base('nat-prerouting', 'nat', 'prerouting', 'dstnat'),
    base('raw-prerouting', 'filter', 'prerouting', 'raw'),
    'add chain ip t services',
    'add chain inet f input { type filter hook input priority filter ; policy drop ; }',
    'add chain inet f early-output { type filter hook output priority filter ; }',
  ]);
  const names = (list: ReturnType<typeof chainsByHook>) => list.map((h) => `${h.table.family}/${h.chain.name}`);

  it('orders base chains by hook, then priority; equal priorities keep ruleset order; regular chains are left out', () => {
    expect(names(chainsByHook(rs))).toEqual([
      'ip/raw-prerouting',
      'ip/nat-prerouting',
      'inet/input',
      'ip/filter-output-pre-dnat',
      'ip/nat-output',
      'ip/filter-output',
      'inet/early-output',
      'ip/nat-postrouting',
    ]);
  });

  it('narrows to one hook and to families', () => {
    expect(names(chainsByHook(rs, { hook: 'output', families: ['ip'] }))).toEqual(['ip/filter-output-pre-dnat', 'ip/nat-output', 'ip/filter-output']);
    expect(chainsByHook(rs, { hook: 'input' })[0]!.base).toEqual({ type: 'filter', hook: 'input', priority: 0, priorityText: 'filter', policy: 'drop' });
    expect(chainsByHook(rs, { families: ['bridge'] })).toEqual([]);
  });
});

describe('lookups', () => {
  const rs = ruleset([
    'add table ip kube-proxy',
    'add set ip kube-proxy cluster-ips { type ipv4_addr ; }',
    'add map ip kube-proxy service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; }',
    'add chain ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80',
    'add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 accept',
    'add table ip6 kube-proxy',
  ]);
  const t = findTable(rs, 'ip', 'kube-proxy') as NftTable;

  it('finds tables by family and name', () => {
    expect(t.family).toBe('ip');
    expect(findTable(rs, 'ip6', 'kube-proxy')!.family).toBe('ip6');
    expect(findTable(rs, 'inet', 'kube-proxy')).toBeUndefined();
  });

  it('finds chains, sets and maps by name (a leading @ is accepted for sets and maps)', () => {
    expect((findChain(t, 'service-ULMVA6XW-ns1/svc1/tcp/p80') as NftChain).rules).toHaveLength(1);
    expect(findChain(t, 'nope')).toBeUndefined();
    expect(findSet(t, '@cluster-ips')!.kind).toBe('set');
    expect(findSet(t, 'service-ips')!.kind).toBe('map');
    expect(findMap(t, '@service-ips')!.mapType).toBe('verdict');
    expect(findMap(t, 'cluster-ips')).toBeUndefined();
    expect(countRules(rs)).toBe(1);
  });
});

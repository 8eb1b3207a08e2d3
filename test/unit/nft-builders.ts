/**
 * Test-data builders for the nftables model and text.
 *
 * - `randomRuleset(seed)`: a seeded, canonical ruleset (what the parsers produce: raw text
 *   as the formatter prints it, counters derived from the counter statement) covering the
 *   statement kinds the model knows, for round-trip tests.
 * - `canonicalRaw`, `withoutHandles`, `asNft106Json`: projections used to compare models
 *   from different sources; each says exactly what it drops and why.
 * - `kubeProxyInput`: a kube-proxy scenario for `generateNftablesRules` (the project's
 *   kube-proxy nftables generator).
 */
import type { KubeProxyInput, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import {
  ruleCounters,
  type NftBaseChain,
  type NftChain,
  type NftElement,
  type NftExpr,
  type NftFamily,
  type NftHook,
  type NftRule,
  type NftRuleset,
  type NftSet,
  type NftStatement,
  type NftTable,
} from '../../src/model/nftables.js';
import { formatRuleText } from '../../src/parsers/nft-format-expr.js';
import { priorityText } from '../../src/parsers/nft-priority.js';

/** Deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const v = (value: string | number): NftExpr => ({ kind: 'value', value });
const payload = (protocol: string, field: string): NftExpr => ({ kind: 'payload', protocol, field });
const meta = (key: string): NftExpr => ({ kind: 'meta', key });
const verdict = (kind: 'accept' | 'drop' | 'return' | 'continue'): NftStatement => ({ kind: 'verdict', verdict: kind });
const go = (kind: 'jump' | 'goto', target: string): NftStatement & NftExpr => ({ kind: 'verdict', verdict: kind, target });

/** A rule as the parsers give it: `raw` printed from the statements, counters from the counter statement. */
export function makeRule(statements: NftStatement[], extra: { comment?: string; handle?: number } = {}): NftRule {
  const counters = ruleCounters(statements);
  return {
    statements,
    raw: formatRuleText({ statements, ...(extra.comment !== undefined && { comment: extra.comment }) }),
    ...(extra.handle !== undefined && { handle: extra.handle }),
    ...(extra.comment !== undefined && { comment: extra.comment }),
    ...(counters && { counters }),
  };
}

/** kube-proxy-like chain names, with the characters that make them unusual (`/`, `__`, `.`, trailing `tcp/`). */
const CHAIN_NAMES = [
  'services',
  'mark-for-masquerade',
  'service-ULMVA6XW-ns1/svc1/tcp/p80',
  'service-P6J77WGM-riset/hellopod-np-svc/tcp/',
  'endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80',
  'endpoint-Q3ECPPUF-ns1/svc1/tcp/p80__fd00.10.180..2.1/80',
  'KUBE-SVC-NPX46M4PTMTKRN6Y',
];

const HOOKS: readonly NftHook[] = ['prerouting', 'input', 'forward', 'output', 'postrouting'];

/**
 * A random canonical ruleset: parse(format(x)) must give x back. Uses `seed` only, so a
 * failing seed reproduces.
 */
export function randomRuleset(seed: number): NftRuleset {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T;
  const ip4 = () => `10.${int(256)}.${int(256)}.${1 + int(254)}`;
  const ip6 = () => `fd00:${(1 + int(0xfff)).toString(16)}::${(1 + int(0xfff)).toString(16)}`;
  const count = (): NftStatement => ({ kind: 'counter', packets: BigInt(int(1e6)), bytes: BigInt(int(1e9)) * 1000n });

  const tables: NftTable[] = [];
  const families: NftFamily[] = ['ip', 'ip6', 'inet'];
  for (let ti = 0, nt = 1 + int(3); ti < nt; ti++) {
    const family = families[ti % families.length] as NftFamily;
    const names = CHAIN_NAMES.slice(0, 2 + int(CHAIN_NAMES.length - 1));
    const addr = family === 'ip6' ? ip6 : ip4;
    const daddr = family === 'ip6' ? payload('ip6', 'daddr') : payload('ip', 'daddr');
    const saddr = family === 'ip6' ? payload('ip6', 'saddr') : payload('ip', 'saddr');
    const addrType = family === 'ip6' ? 'ipv6_addr' : 'ipv4_addr';
    const target = () => pick(names);

    const sets: NftSet[] = [
      {
        kind: 'map',
        name: 'service-ips',
        type: `${addrType} . inet_proto . inet_service`,
        keyTypes: [addrType, 'inet_proto', 'inet_service'],
        mapType: 'verdict',
        flags: [],
        comment: 'ClusterIP, ExternalIP and LoadBalancer IP traffic',
        elements: Array.from({ length: int(5) }, (_, i): NftElement => ({
          key: { kind: 'concat', items: [v(addr()), v(pick(['tcp', 'udp'])), v(1 + int(65535))] },
          value: go('goto', target()),
          ...(i % 2 === 1 && { comment: `ns${i}/svc${i}:p${i}` }),
        })),
      },
      {
        kind: 'set',
        name: 'ranges',
        type: addrType,
        keyTypes: [addrType],
        flags: ['interval'],
        elements: [
          { key: family === 'ip6' ? { kind: 'prefix', addr: 'fd00::', len: 64 } : { kind: 'prefix', addr: '10.0.0.0', len: 8 } },
          { key: { kind: 'range', from: v(family === 'ip6' ? 'fd01::1' : '192.168.1.1'), to: v(family === 'ip6' ? 'fd01::9' : '192.168.1.9') }, comment: 'a range' },
        ],
      },
      {
        kind: 'set',
        name: 'affinity-ns5/svc5/tcp/p80__10.180.0.3/80',
        type: addrType,
        keyTypes: [addrType],
        flags: ['timeout', 'dynamic'],
        timeout: 10800,
        size: 65535,
        elements: [],
      },
      {
        kind: 'map',
        name: 'marks',
        type: 'inet_service',
        keyTypes: ['inet_service'],
        mapType: 'mark',
        flags: [],
        elements: Array.from({ length: int(8) }, (_, i) => ({ key: v(1000 + i), value: v(int(0xffff)) })),
      },
    ];

    const statementPool: (() => NftStatement[])[] = [
      () => [{ kind: 'vmap', key: { kind: 'concat', items: [daddr, meta('l4proto'), payload('th', 'dport')] }, data: { kind: 'setref', name: 'service-ips' } }],
      () => {
        const n = 1 + int(4);
        const elements = Array.from({ length: n }, (_, i) => ({ key: v(i), value: go('goto', target()) }));
        return [{ kind: 'vmap', key: { kind: 'numgen', mode: 'random', mod: n, offset: 0 }, data: { kind: 'set', elements } }];
      },
      () => [
        { kind: 'match', left: { kind: 'binop', op: '&', left: meta('mark'), right: v(0x4000) }, op: '==', right: v(0) },
        verdict('return'),
      ],
      () => [{ kind: 'mangle', key: meta('mark'), value: { kind: 'binop', op: pick(['|', '^'] as const), left: meta('mark'), right: v(0x4000) } }],
      () => [{ kind: 'match', left: saddr, op: '!=', right: family === 'ip6' ? { kind: 'prefix', addr: 'fd00::', len: 48 } : { kind: 'prefix', addr: '10.42.0.0', len: 16 } }, go('jump', target())],
      () => [{ kind: 'match', left: daddr, op: '==', right: v(addr()) }, { kind: 'match', left: payload('tcp', 'dport'), op: '==', right: v(1 + int(65535)) }, count(), go('jump', target())],
      () => [{ kind: 'match', left: meta('l4proto'), op: '==', right: v('tcp') }, { kind: 'nat', type: 'dnat', flags: [], ...(family === 'inet' && { family: 'ip' as const }), addr: v(family === 'ip6' ? ip6() : ip4()), port: v(1 + int(65535)) }],
      () => [{ kind: 'nat', type: 'masquerade', flags: pick([[], ['fully-random'], ['random', 'persistent']]) }],
      () => [{ kind: 'match', left: { kind: 'ct', key: 'state' }, op: 'in', right: { kind: 'list', items: [v('established'), v('related')] } }, verdict('accept')],
      () => [{ kind: 'match', left: { kind: 'ct', key: 'state' }, op: 'in', right: v('new') }, go('jump', target())],
      () => [{ kind: 'match', left: { kind: 'fib', flags: ['daddr'], result: 'type' }, op: '==', right: v('local') }, go('goto', target())],
      () => [{ kind: 'match', left: daddr, op: '==', right: { kind: 'setref', name: 'ranges' } }, { kind: 'reject' }],
      () => [{ kind: 'match', left: payload('tcp', 'dport'), op: '==', right: { kind: 'set', elements: [{ key: v(80) }, { key: v(443) }] } }, { kind: 'reject', type: 'tcp reset' }],
      () => [{ kind: 'match', left: payload('udp', 'dport'), op: '==', right: { kind: 'range', from: v(1000), to: v(2000) } }, verdict('drop')],
      () => [{ kind: 'match', left: meta('iifname'), op: '==', right: { kind: 'set', elements: [{ key: v('eth0') }, { key: v('lo') }] } }, verdict('accept')],
      () => [{ kind: 'match', left: meta('oifname'), op: '!=', right: v('eth*') }, verdict('continue')],
      () => [{ kind: 'log', prefix: 'nodescope: ', level: 'info' }, { kind: 'limit', rate: 1 + int(100), unit: 'packets', per: 'second', over: false }],
      () => [{ kind: 'notrack' }],
      () => [{ kind: 'set-update', op: 'update', set: 'affinity-ns5/svc5/tcp/p80__10.180.0.3/80', elem: saddr }],
      () => [{ kind: 'mangle', key: { kind: 'ct', key: 'mark' }, value: meta('mark') }],
      () => [{ kind: 'xt', xtType: 'match', name: 'recent', raw: 'xt match recent' }, count()],
    ];

    const chains: NftChain[] = names.map((name, ci): NftChain => {
      const hook = pick(HOOKS);
      const priority = pick([-300, -155, -110, -100, 0, 5, 100, 200]);
      const base: NftBaseChain | undefined =
        ci < 2
          ? { type: hook === 'postrouting' || hook === 'prerouting' ? 'nat' : 'filter', hook, priority, priorityText: priorityText(priority, family, hook), policy: pick(['accept', 'drop'] as const) }
          : undefined;
      const rules = Array.from({ length: int(7) }, (_, ri) =>
        makeRule(pick(statementPool)(), {
          ...(ri % 3 === 2 && { comment: `rule ${ri} of ${name}` }),
          ...(seed % 2 === 0 && { handle: 100 * ci + ri + 1 }),
        }),
      );
      return { name, ...(base && { base }), ...(ci === 1 && { comment: 'helper chain' }), rules };
    });

    tables.push({
      family,
      name: ti === 0 ? 'kube-proxy' : `t${ti}`,
      ...(ti === 0 && { comment: 'rules for kube-proxy' }),
      ...(seed % 2 === 0 && { handle: ti + 1 }),
      chains,
      sets,
      counters: int(2) ? [{ name: 'dns-packets', comment: 'named', packets: BigInt(int(1000)), bytes: BigInt(int(100000)) }] : [],
      objects: [],
    });
  }
  return { tables };
}

/** Every rule's `raw` replaced by the formatter's text (for sources whose text was not nft's own, e.g. `nft -f` input). */
export function canonicalRaw(rs: NftRuleset): NftRuleset {
  return mapChains(rs, (c) => ({ ...c, rules: c.rules.map((r) => ({ ...r, raw: formatRuleText(r) })) }));
}

/** The ruleset without handles (`nft list` without `-a` prints none). */
export function withoutHandles(rs: NftRuleset): NftRuleset {
  const drop = <T extends { handle?: number }>(x: T): T => {
    const { handle: _h, ...rest } = x;
    return rest as T;
  };
  return {
    tables: rs.tables.map((t) => ({
      ...drop(t),
      chains: t.chains.map((c) => ({ ...drop(c), rules: c.rules.map(drop) })),
      sets: t.sets.map(drop),
      counters: t.counters.map(drop),
      objects: t.objects.map(drop),
    })),
  };
}

/**
 * What `nft -j` of nftables 1.0.6 leaves out, removed from a model read from text: table and
 * chain comments, chain devices, the `dynamic` set flag, `typeof` (JSON gives the types).
 * Each omission was seen on this machine's nft 1.0.6; newer nft prints some of them.
 */
export function asNft106Json(rs: NftRuleset): NftRuleset {
  return {
    tables: rs.tables.map(({ comment: _c, ...t }) => ({
      ...t,
      chains: t.chains.map(({ comment: _cc, ...c }) => {
        if (!c.base) return c;
        const { devices: _d, ...base } = c.base;
        return { ...c, base };
      }),
      sets: t.sets.map(({ typeof: _t, ...s }) => ({ ...s, flags: s.flags.filter((f) => f !== 'dynamic') })),
    })),
  };
}

function mapChains(rs: NftRuleset, f: (c: NftChain) => NftChain): NftRuleset {
  return { tables: rs.tables.map((t) => ({ ...t, chains: t.chains.map(f) })) };
}

/** A kube-proxy Service for `generateNftablesRules`, one port, endpoints ready. */
export function kubeService(overrides: Partial<ScenarioService> & { endpointIPs?: readonly string[] } = {}): ScenarioService {
  const { endpointIPs = ['10.244.1.5'], ...rest } = overrides;
  return {
    namespace: 'default',
    name: 'web',
    type: 'ClusterIP',
    clusterIP: '10.96.0.20',
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
    endpoints: endpointIPs.map((ip) => ({ ip, ready: true, serving: true, terminating: false })),
    ...rest,
  };
}

/** kube-proxy's input for a node `node-a` with pod CIDR 10.244.0.0/16 and Service CIDR 10.96.0.0/12. */
export function kubeProxyInput(services: readonly ScenarioService[]): KubeProxyInput {
  return { nodeName: 'node-a', nodeIPs: ['192.168.49.2'], clusterCIDR: '10.244.0.0/16', serviceCIDRs: ['10.96.0.0/12'], services };
}

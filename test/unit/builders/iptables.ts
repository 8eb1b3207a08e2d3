/**
 * Test-data builders for the iptables model and for iptables text.
 *
 * Model builders (`opt`, `match`, `target`, `makeRule`, `makeChain`, `makeTable`,
 * `makeRuleset`, `kubeNatTable`) fill every field with a neutral default; text builders
 * (`saveBlock`, `kubeProxyRestoreText`) write the two dialects the corpus shows:
 * iptables-save's normalized form and kube-proxy's own iptables-restore input.
 */
import { createHash } from 'node:crypto';
import {
  IPTABLES_COMMENT_JOINER,
  IPTABLES_EXTENSION_TARGETS,
  IPTABLES_VERDICTS,
  isBuiltinChainName,
  plainIptablesChain,
  plainIptablesRule,
  type IptablesChain,
  type IptablesCounters,
  type IptablesMatch,
  type IptablesOption,
  type IptablesRule,
  type IptablesRuleset,
  type IptablesTable,
  type IptablesTableKey,
  type IptablesTarget,
  type IptablesTargetKind,
} from '../../../src/model/iptables.js';

/** `--name v…` */
export function opt(name: string, ...values: string[]): IptablesOption {
  return { name, negated: false, values };
}

/** `! --name v…` */
export function notOpt(name: string, ...values: string[]): IptablesOption {
  return { name, negated: true, values };
}

/** `-m module options…` */
export function match(module: string, ...options: IptablesOption[]): IptablesMatch {
  return { module, options };
}

/** `-m comment --comment text` */
export function commentMatch(text: string): IptablesMatch {
  return match('comment', opt('comment', text));
}

/** A target; the kind defaults the way the parser decides it for a chain-less name. */
export function target(name: string, options: IptablesOption[] = [], kind?: IptablesTargetKind): IptablesTarget {
  const k: IptablesTargetKind =
    kind ?? (IPTABLES_VERDICTS.has(name) ? 'builtin' : IPTABLES_EXTENSION_TARGETS.has(name) || options.length > 0 ? 'extension' : 'jump');
  return { name, kind: k, options };
}

/** Counters from numbers or bigints. */
export function counters(packets: bigint | number, bytes: bigint | number): IptablesCounters {
  return { packets: BigInt(packets), bytes: BigInt(bytes) };
}

/** A rule with every field defaulted; `comment` is derived from the comment matches. */
export function makeRule(overrides: Partial<IptablesRule> = {}): IptablesRule {
  const matches = overrides.matches ?? [];
  const comments = matches
    .filter((m) => m.module === 'comment')
    .flatMap((m) => m.options.filter((o) => o.name === 'comment').map((o) => o.values[0] ?? ''));
  return {
    chain: 'KUBE-SERVICES',
    index: 1,
    line: 0,
    raw: '',
    counters: null,
    source: null,
    destination: null,
    inInterface: null,
    outInterface: null,
    protocol: null,
    fragment: null,
    target: null,
    comment: comments.length > 0 ? comments.join(IPTABLES_COMMENT_JOINER) : null,
    ...overrides,
    matches,
  };
}

/** A declared chain of `table`; rules get the chain's name and their 1-based index. */
export function makeChain(
  name: string,
  rules: readonly Partial<IptablesRule>[] = [],
  overrides: Partial<IptablesChain> & { table?: IptablesTableKey } = {},
): IptablesChain {
  const { table = 'filter', ...rest } = overrides;
  const builtin = rest.builtin ?? (rest.policy != null || isBuiltinChainName(table, name));
  return {
    name,
    builtin,
    policy: builtin ? 'ACCEPT' : null,
    counters: rest.inferred ? null : counters(0, 0),
    line: 0,
    inferred: false,
    ...rest,
    rules: rules.map((r, i) => makeRule({ ...r, chain: name, index: i + 1 })),
  };
}

/** A table block, committed unless told otherwise. */
export function makeTable(name: IptablesTableKey, chains: IptablesChain[], overrides: Partial<IptablesTable> = {}): IptablesTable {
  return { name, chains, line: 0, committed: name !== 'unknown', ...overrides };
}

/** A save-format ruleset without header comments. */
export function makeRuleset(tables: IptablesTable[], overrides: Partial<IptablesRuleset> = {}): IptablesRuleset {
  return { dialect: 'save', family: 'ipv4', generator: null, legacyTablesPresent: false, tables, ...overrides };
}

/** One Service port and its endpoints, for the kube-proxy builders. */
export interface KubeServiceSpec {
  readonly namespace: string;
  readonly name: string;
  readonly portName: string;
  readonly protocol: 'tcp' | 'udp';
  readonly clusterIP: string;
  readonly port: number;
  readonly endpoints: readonly { readonly ip: string; readonly port: number }[];
}

/** A Service spec with defaults (`ns1/svc1:p80`, 172.30.0.41:80, one endpoint). */
export function makeService(overrides: Partial<KubeServiceSpec> = {}): KubeServiceSpec {
  return {
    namespace: 'ns1',
    name: 'svc1',
    portName: 'p80',
    protocol: 'tcp',
    clusterIP: '172.30.0.41',
    port: 80,
    endpoints: [{ ip: '10.180.0.1', port: 80 }],
    ...overrides,
  };
}

/** kube-proxy-like chain name: prefix + 16 characters of a hash, as in proxier.go. */
function chainName(prefix: string, key: string): string {
  return prefix + createHash('sha256').update(key).digest('hex').slice(0, 16).toUpperCase();
}

/** Names of the chains kube-proxy makes for a service port. */
export function serviceChains(s: KubeServiceSpec): { svc: string; seps: string[]; spn: string } {
  const spn = `${s.namespace}/${s.name}${s.portName ? `:${s.portName}` : ''}`;
  return {
    spn,
    svc: chainName('KUBE-SVC-', spn + s.protocol),
    seps: s.endpoints.map((e) => chainName('KUBE-SEP-', `${spn}${s.protocol}${e.ip}:${e.port}`)),
  };
}

/** kube-proxy's probability text for endpoint i of n (`%0.10f` of 1/(n-i)). */
export function probability(remaining: number): string {
  return (1 / remaining).toFixed(10);
}

/**
 * The nat table kube-proxy builds for `services`, as iptables-save prints it (normalized
 * order, `/32` addresses, `--set-xmark`). `clusterCIDR` drives the masquerade rule.
 */
export function kubeNatTable(services: readonly KubeServiceSpec[], clusterCIDR = '10.0.0.0/8'): IptablesTable {
  const tcpOrUdp = (s: KubeServiceSpec) => ({ value: s.protocol, negated: false });
  const services_: Partial<IptablesRule>[] = [];
  const chains: IptablesChain[] = [];
  for (const s of services) {
    const { spn, svc, seps } = serviceChains(s);
    const dst = { value: `${s.clusterIP}/32`, negated: false };
    const port = match(s.protocol, opt('dport', String(s.port)));
    services_.push({
      destination: dst,
      protocol: tcpOrUdp(s),
      matches: [commentMatch(`${spn} cluster IP`), port],
      target: target(svc, [], 'jump'),
    });
    chains.push(
      makeChain(
        svc,
        [
          {
            source: { value: clusterCIDR, negated: true },
            destination: dst,
            protocol: tcpOrUdp(s),
            matches: [commentMatch(`${spn} cluster IP`), port],
            target: target('KUBE-MARK-MASQ', [], 'jump'),
          },
          ...s.endpoints.map((e, i) => ({
            matches: [
              commentMatch(`${spn} -> ${e.ip}:${e.port}`),
              ...(i < s.endpoints.length - 1
                ? [match('statistic', opt('mode', 'random'), opt('probability', probability(s.endpoints.length - i)))]
                : []),
            ],
            target: target(seps[i]!, [], 'jump'),
          })),
        ],
        { table: 'nat' },
      ),
    );
    s.endpoints.forEach((e, i) => {
      chains.push(
        makeChain(
          seps[i]!,
          [
            {
              source: { value: `${e.ip}/32`, negated: false },
              matches: [commentMatch(spn)],
              target: target('KUBE-MARK-MASQ', [], 'jump'),
            },
            {
              protocol: tcpOrUdp(s),
              matches: [commentMatch(spn), match(s.protocol)],
              target: target('DNAT', [opt('to-destination', `${e.ip}:${e.port}`)]),
            },
          ],
          { table: 'nat' },
        ),
      );
    });
  }
  const portals = [commentMatch('kubernetes service portals')];
  return makeTable('nat', [
    makeChain('PREROUTING', [{ matches: portals, target: target('KUBE-SERVICES', [], 'jump') }], { table: 'nat' }),
    makeChain('INPUT', [], { table: 'nat' }),
    makeChain('OUTPUT', [{ matches: portals, target: target('KUBE-SERVICES', [], 'jump') }], { table: 'nat' }),
    makeChain('POSTROUTING', [{ matches: [commentMatch('kubernetes postrouting rules')], target: target('KUBE-POSTROUTING', [], 'jump') }], {
      table: 'nat',
    }),
    makeChain('KUBE-MARK-MASQ', [{ target: target('MARK', [opt('set-xmark', '0x4000/0x4000')]) }], { table: 'nat' }),
    makeChain(
      'KUBE-POSTROUTING',
      [
        { matches: [match('mark', notOpt('mark', '0x4000/0x4000'))], target: target('RETURN') },
        { target: target('MARK', [opt('set-xmark', '0x4000/0x0')]) },
        { matches: [commentMatch('kubernetes service traffic requiring SNAT')], target: target('MASQUERADE', [opt('random-fully')]) },
      ],
      { table: 'nat' },
    ),
    makeChain('KUBE-SERVICES', services_, { table: 'nat' }),
    ...chains,
  ]);
}

/**
 * kube-proxy's own iptables-restore input for `services` (nat table only), written the
 * way proxier.go writes it: `-m comment` first, `-m tcp -p tcp -d IP --dport P`, bare
 * addresses, `! -s CIDR` last, `--or-mark`/`--xor-mark`, comments bare unless they
 * have spaces. Jumps from OUTPUT/PREROUTING/POSTROUTING are included so the text loads
 * into an empty namespace.
 */
export function kubeProxyRestoreText(services: readonly KubeServiceSpec[], clusterCIDR = '10.0.0.0/8'): string {
  const q = (c: string) => (c.includes(' ') ? `"${c}"` : c);
  const lines = ['*nat', ':KUBE-SERVICES - [0:0]', ':KUBE-MARK-MASQ - [0:0]', ':KUBE-POSTROUTING - [0:0]'];
  const rules: string[] = [];
  for (const s of services) {
    const { spn, svc, seps } = serviceChains(s);
    lines.push(`:${svc} - [0:0]`, ...seps.map((c) => `:${c} - [0:0]`));
    const dst = `-m ${s.protocol} -p ${s.protocol} -d ${s.clusterIP} --dport ${s.port}`;
    rules.push(`-A KUBE-SERVICES -m comment --comment ${q(`${spn} cluster IP`)} ${dst} -j ${svc}`);
    rules.push(`-A ${svc} -m comment --comment ${q(`${spn} cluster IP`)} ${dst} ! -s ${clusterCIDR} -j KUBE-MARK-MASQ`);
    s.endpoints.forEach((e, i) => {
      const stat =
        i < s.endpoints.length - 1 ? ` -m statistic --mode random --probability ${probability(s.endpoints.length - i)}` : '';
      rules.push(`-A ${svc} -m comment --comment ${q(`${spn} -> ${e.ip}:${e.port}`)}${stat} -j ${seps[i]}`);
      rules.push(`-A ${seps[i]} -m comment --comment ${q(spn)} -s ${e.ip} -j KUBE-MARK-MASQ`);
      rules.push(`-A ${seps[i]} -m comment --comment ${q(spn)} -m ${s.protocol} -p ${s.protocol} -j DNAT --to-destination ${e.ip}:${e.port}`);
    });
  }
  lines.push(
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    ...rules,
    'COMMIT',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * One iptables-save table block: optional `# Generated by` header (`header: 'v1.8.9 (nf_tables)'`
 * gives `# Generated by iptables-save v1.8.9 (nf_tables) on …`), the lines, and COMMIT
 * unless `commit: false`.
 */
export function saveBlock(table: string, lines: readonly string[], options: { header?: string; commit?: boolean } = {}): string {
  const date = 'Sat Mar  9 17:33:03 2024';
  const out: string[] = [];
  if (options.header !== undefined) out.push(`# Generated by iptables-save ${options.header} on ${date}`);
  out.push(`*${table}`, ...lines);
  if (options.commit !== false) {
    out.push('COMMIT');
    if (options.header !== undefined) out.push(`# Completed on ${date}`);
  }
  return `${out.join('\n')}\n`;
}

/**
 * The ruleset without what legitimately changes in a parse → format → parse trip:
 * source positions (`line` of rules, chains and tables) and `raw` text. With
 * `counters: false` the formatter writes no rule counters and `[0:0]` chain headers,
 * so those are neutralized too.
 */
export function comparable(ruleset: IptablesRuleset, options: { counters: boolean } = { counters: true }): unknown {
  return {
    ...ruleset,
    tables: ruleset.tables.map((t) => ({
      ...t,
      line: 0,
      chains: t.chains.map((c) => ({
        ...plainIptablesChain(c),
        line: 0,
        counters: options.counters || c.counters === null ? c.counters : counters(0, 0),
        rules: c.rules.map((r) => ({ ...plainIptablesRule(r), line: 0, raw: '', counters: options.counters ? r.counters : null })),
      })),
    })),
  };
}

/**
 * One block per iptables quirk of shared/reference/corpus-notes.md (items 1–11), each
 * against the corpus file the note names when there is one, else against builder text.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChain, findMatchOption, statisticProbability, type IptablesRule } from '../../src/model/iptables.js';
import { sameRuleSemantics } from '../../src/model/iptables-semantic.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { kubeNatTable, kubeProxyRestoreText, makeRuleset, makeService, saveBlock } from './builders/iptables.js';
import { formatIptablesSave } from '../../src/parsers/iptables-format.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus/iptables');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping iptables corpus quirk tests: ${corpus} is absent`);
const parseCorpus = (name: string) => parseIptablesSave(readFileSync(path.join(corpus, name), 'utf8'), name);

/** The rule of a one-line fragment (its chain is inferred, nothing else may be reported). */
function oneRule(ruleText: string): IptablesRule {
  const r = parseIptablesSave(`${ruleText}\n`, 'rule');
  expect(r.diagnostics.map((d) => d.code)).toEqual(['chain-inferred']);
  return r.value.tables[0]!.chains[0]!.rules[0]!;
}

describe.skipIf(!haveCorpus)('corpus quirks', () => {
  it('1: counters on built-in chain headers and as [pkts:bytes] rule prefixes; user chains - [0:0]', () => {
    const k3s = parseCorpus('k3s-iptables-save-c-counters.txt').value;
    expect(findChain(k3s, 'raw', 'PREROUTING')!.counters).toEqual({ packets: 8488585n, bytes: 2225268588n });
    expect(findChain(k3s, 'nat', 'KUBE-SERVICES')).toMatchObject({ policy: null, builtin: false, counters: { packets: 0n, bytes: 0n } });
    expect(findChain(k3s, 'nat', 'PREROUTING')!.rules[0]!.counters).toEqual({ packets: 402612n, bytes: 15051273n });
    expect(findChain(k3s, 'filter', 'FORWARD')!.policy).toBe('DROP');
  });

  it('1: without -c, headers keep counters and rules have none', () => {
    const r = parseIptablesSave(saveBlock('filter', [':INPUT ACCEPT [12408:3022585]', '-A INPUT -j ACCEPT']), 'no-c');
    const input = findChain(r.value, 'filter', 'INPUT')!;
    expect(input.counters).toEqual({ packets: 12408n, bytes: 3022585n });
    expect(input.rules[0]!.counters).toBeNull();
  });

  it('2: one header/footer per table block; upstream test data has none', () => {
    const ip6 = parseCorpus('ip6tables-save-nf_tables-kube-truncated.txt').value;
    expect(ip6.generator?.backend).toBe('nf_tables');
    const upstream = parseCorpus('k8s-iptables-proxier-test-overall.txt');
    expect(upstream.value.generator).toBeNull();
    expect(upstream.value.tables.map((t) => [t.name, t.committed])).toEqual([
      ['filter', true],
      ['nat', true],
    ]);
  });

  it('3: bare and quoted comments, several comments per rule (Calico)', () => {
    const upstream = parseCorpus('k8s-iptables-proxier-test-overall.txt').value;
    const sep = findChain(upstream, 'nat', 'KUBE-SEP-C6EBXVWJJZMIWKLZ')!.rules[0]!;
    expect(sep.comment).toBe('ns4/svc4:p80');
    expect(findChain(upstream, 'nat', 'KUBE-SVC-4SW47YFZTEDKD3PK')!.rules[0]!.comment).toBe('ns4/svc4:p80 cluster IP');
    const calico = parseCorpus('calico-iptables-S-filter-cali.txt').value;
    const rule = findChain(calico, 'unknown', 'cali-INPUT')!.rules[0]!;
    expect(rule.comment).toBe('cali:PajejrV4aFdkZojI | Allow IPIP packets from Calico hosts');
    expect(rule.matches.filter((m) => m.module === 'comment')).toHaveLength(2);
  });

  it('4: kube-proxy order and bare addresses vs iptables-save order and /32 compare equal semantically', () => {
    const real = parseCorpus('k3s-iptables-save-c-counters.txt').value;
    const saved = findChain(real, 'nat', 'KUBE-SVC-NPX46M4PTMTKRN6Y')!.rules[0]!;
    const written = oneRule(
      '-A KUBE-X -m comment --comment "default/kubernetes:https cluster IP" -m tcp -p tcp -d 10.43.0.1 --dport 443 ! -s 10.42.0.0/16 -j KUBE-MARK-MASQ',
    );
    expect(written.matches.map((m) => m.module)).toEqual(saved.matches.map((m) => m.module));
    expect(sameRuleSemantics(written, saved, 'ipv4')).toBe(true);
    const otherPort = oneRule(
      '-A KUBE-X -m comment --comment "default/kubernetes:https cluster IP" -m tcp -p tcp -d 10.43.0.1 --dport 444 ! -s 10.42.0.0/16 -j KUBE-MARK-MASQ',
    );
    expect(sameRuleSemantics(otherPort, saved, 'ipv4')).toBe(false);
  });

  it('6: MARK --or-mark/--xor-mark (kube-proxy) equal --set-xmark (iptables-save)', () => {
    const real = parseCorpus('k3s-iptables-save-c-counters.txt').value;
    const upstream = parseCorpus('k8s-iptables-proxier-test-overall.txt').value;
    const pairs = [
      [findChain(upstream, 'nat', 'KUBE-MARK-MASQ')!.rules[0]!, findChain(real, 'nat', 'KUBE-MARK-MASQ')!.rules[0]!],
      [findChain(upstream, 'nat', 'KUBE-POSTROUTING')!.rules[1]!, findChain(real, 'nat', 'KUBE-POSTROUTING')!.rules[1]!],
    ] as const;
    expect(pairs.map(([a, b]) => [a.target!.options[0]!.name, b.target!.options[0]!.values[0]])).toEqual([
      ['or-mark', '0x4000/0x4000'],
      ['xor-mark', '0x4000/0x0'],
    ]);
    for (const [a, b] of pairs) expect(sameRuleSemantics(a, b)).toBe(true);
    expect(sameRuleSemantics(pairs[0][0], pairs[1][1])).toBe(false);
    expect(sameRuleSemantics(oneRule('-A KUBE-X -j MARK --set-mark 0x1'), oneRule('-A KUBE-X -j MARK --set-xmark 0x1/0xffffffff'))).toBe(true);
    expect(sameRuleSemantics(oneRule('-A KUBE-X -j MARK --and-mark 0xffff0000'), oneRule('-A KUBE-X -j MARK --set-xmark 0x0/0xffff'))).toBe(true);
  });

  it('7: statistic probabilities of 11 and 10 digits parse as floats', () => {
    const affinity = parseCorpus('real-sessionaffinity-recent-old-format.txt').value;
    const svc = findChain(affinity, 'unknown', 'KUBE-SVC-TYE23RAXJNHAJ33G')!;
    expect(svc.rules.map(statisticProbability).slice(3, 6)).toEqual([0.33332999982, 0.5, null]);
    const aks = parseCorpus('aks-iptables-save-grep-kube-dns.txt').value;
    expect(statisticProbability(findChain(aks, 'unknown', 'KUBE-SVC-ERIFXISQEP7F7OF4')!.rules[1]!)).toBe(0.5);
    const upstream = parseCorpus('k8s-iptables-proxier-test-overall.txt').value;
    expect(statisticProbability(findChain(upstream, 'nat', 'KUBE-SVC-4SW47YFZTEDKD3PK')!.rules[1]!)).toBe(0.5);
    // The kernel keeps round(P × 2^31): old kube-proxy's 0.33333 comes back as 0.33332999982.
    const written = oneRule('-A KUBE-X -m statistic --mode random --probability 0.33333 -j KUBE-SEP-A');
    const saved = oneRule('-A KUBE-X -m statistic --mode random --probability 0.33332999982 -j KUBE-SEP-A');
    expect(sameRuleSemantics(written, saved)).toBe(true);
    expect(sameRuleSemantics(written, oneRule('-A KUBE-X -m statistic --mode random --probability 0.3334 -j KUBE-SEP-A'))).toBe(false);
  });

  it('8: -m recent options are structured; saved defaults and order do not change the meaning', () => {
    const affinity = parseCorpus('real-sessionaffinity-recent-old-format.txt').value;
    const saved = findChain(affinity, 'unknown', 'KUBE-SVC-TYE23RAXJNHAJ33G')!.rules[0]!;
    expect(saved.matches[1]).toEqual({
      module: 'recent',
      options: [
        { name: 'rcheck', negated: false, values: [] },
        { name: 'seconds', negated: false, values: ['10800'] },
        { name: 'reap', negated: false, values: [] },
        { name: 'name', negated: false, values: ['KUBE-SEP-SRB22U7BNHNW5WLR'] },
        { name: 'mask', negated: false, values: ['255.255.255.255'] },
        { name: 'rsource', negated: false, values: [] },
      ],
    });
    const current = oneRule(
      '-A KUBE-X -m comment --comment "space22pbugsd/yibao-b:yibao-b" -m recent --name KUBE-SEP-SRB22U7BNHNW5WLR --rcheck --seconds 10800 --reap -j KUBE-SEP-SRB22U7BNHNW5WLR',
    );
    expect(sameRuleSemantics(current, saved, 'ipv4')).toBe(true);
    const otherMask = oneRule(
      '-A KUBE-X -m comment --comment "space22pbugsd/yibao-b:yibao-b" -m recent --name KUBE-SEP-SRB22U7BNHNW5WLR --rcheck --seconds 10800 --reap --mask 255.255.0.0 -j KUBE-SEP-SRB22U7BNHNW5WLR',
    );
    expect(sameRuleSemantics(otherMask, saved, 'ipv4')).toBe(false);
  });

  it('9: a rule without target, declared chains without rules, a dump without COMMIT', () => {
    const sort = parseCorpus('k8s-iptables-sorttest-etp-local-svl-fw.txt').value;
    const fw = findChain(sort, 'nat', 'KUBE-FW-GNZBNJ2PO5MGZ6GT')!.rules[1]!;
    expect(fw).toMatchObject({ target: null, comment: 'other traffic to s2/svc2:p80 will be dropped by KUBE-PROXY-FIREWALL', index: 2 });
    const ip6 = parseCorpus('ip6tables-save-nf_tables-kube-truncated.txt');
    expect(findChain(ip6.value, 'filter', 'KUBE-SERVICES')).toMatchObject({ rules: [], inferred: false });
    expect(ip6.value.tables.find((t) => t.name === 'filter')!.committed).toBe(false);
    expect(ip6.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.code)).toEqual(['truncated']);
  });

  it('10: iptables -S uses -N/-P, no table lines, and -g goto', () => {
    const calico = parseIptablesSave(readFileSync(path.join(corpus, 'calico-iptables-S-filter-cali.txt'), 'utf8'), 'calico', {
      table: 'filter',
    }).value;
    expect(calico.dialect).toBe('list-rules');
    expect(calico.tables.map((t) => t.name)).toEqual(['filter']);
    expect(findChain(calico, 'filter', 'cali-wl-to-host')).toMatchObject({ inferred: false, builtin: false, line: 12 });
    expect(findChain(calico, 'filter', 'INPUT')).toMatchObject({ inferred: true, builtin: true, policy: null });
    const goto = findChain(calico, 'filter', 'cali-INPUT')!.rules[2]!;
    expect(goto.target).toEqual({ name: 'cali-wl-to-host', kind: 'goto', options: [] });
    expect(goto.inInterface).toEqual({ value: 'cali+', negated: false });
    const ipencap = findChain(calico, 'filter', 'cali-OUTPUT')!.rules[2]!;
    expect(ipencap.protocol!.value).toBe('ipencap');
    expect(findMatchOption(ipencap, 'set', 'match-set')!.values).toEqual(['cali40all-hosts-net', 'dst']);
  });

  it('11: old and new chain vocabularies, grep fragments without declarations', () => {
    const k3s = parseCorpus('k3s-iptables-save-c-counters.txt').value;
    expect(findChain(k3s, 'nat', 'KUBE-MARK-DROP')!.rules[0]!.target!.options[0]!.values).toEqual(['0x8000/0x8000']);
    const sort = parseCorpus('k8s-iptables-sorttest-etp-local-svl-fw.txt').value;
    expect(findChain(sort, 'nat', 'KUBE-EXT-GNZBNJ2PO5MGZ6GT')!.rules[3]!.target).toMatchObject({ name: 'KUBE-SVL-GNZBNJ2PO5MGZ6GT', kind: 'jump' });
    const aks = parseIptablesSave(readFileSync(path.join(corpus, 'aks-iptables-save-grep-kube-dns.txt'), 'utf8'), 'aks');
    expect(aks.diagnostics.map((d) => [d.severity, d.code])).toEqual([['info', 'chain-inferred']]);
    expect(aks.diagnostics[0]!.message).toContain('7 chain(s)');
    expect(findChain(aks.value, 'unknown', 'KUBE-SEP-222YD7DQOUNKFRLL')!.inferred).toBe(true);
  });
});

describe('quirks without a corpus file', () => {
  it('5: negation before generic options and inside modules', () => {
    const r = oneRule(
      '-A KUBE-X ! -s 10.0.0.0/8 ! -i eth0 ! -o docker0 -p tcp ! -f -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -m mark ! --mark 0x4000/0x4000 -m set ! --match-set cali40all-ipam-pools dst -m addrtype ! --src-type LOCAL -j ACCEPT',
    );
    expect([r.source, r.inInterface, r.outInterface, r.protocol, r.fragment]).toEqual([
      { value: '10.0.0.0/8', negated: true },
      { value: 'eth0', negated: true },
      { value: 'docker0', negated: true },
      { value: 'tcp', negated: false },
      { negated: true },
    ]);
    expect(r.matches.map((m) => [m.module, m.options[0]])).toEqual([
      ['conntrack', { name: 'ctstate', negated: true, values: ['RELATED,ESTABLISHED,DNAT'] }],
      ['mark', { name: 'mark', negated: true, values: ['0x4000/0x4000'] }],
      ['set', { name: 'match-set', negated: true, values: ['cali40all-ipam-pools', 'dst'] }],
      ['addrtype', { name: 'src-type', negated: true, values: ['LOCAL'] }],
    ]);
  });

  it('5: the pre-1.4.3 intrapositioned negation (-s ! X, --opt ! X) means the same', () => {
    const old = oneRule('-A KUBE-X -s ! 10.0.0.0/8 -m conntrack --ctstate ! NEW -j ACCEPT');
    const now = oneRule('-A KUBE-X ! -s 10.0.0.0/8 -m conntrack ! --ctstate NEW -j ACCEPT');
    expect(old.source).toEqual({ value: '10.0.0.0/8', negated: true });
    expect(old.matches).toEqual(now.matches);
  });

  it('11: KUBE-XLB chains (k8s ≤ 1.23) and IPVS-mode ipset matches with several flags', () => {
    const text = saveBlock('nat', [
      ':KUBE-XLB-ABC - [0:0]',
      ':KUBE-NODE-PORT - [0:0]',
      '-A KUBE-XLB-ABC -m comment --comment "Balancing rule 0 for ns/svc:http" -j KUBE-SEP-A',
      '-A KUBE-NODE-PORT -p tcp -m comment --comment "Kubernetes nodeport TCP port for masquerade purpose" -m set --match-set KUBE-NODE-PORT-TCP dst -j KUBE-MARK-MASQ',
      '-A KUBE-NODE-PORT -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT',
      '-A KUBE-NODE-PORT -m set --match-set KUBE-LOOP-BACK dst,dst,src -j MASQUERADE',
    ]);
    const r = parseIptablesSave(text, 'ipvs');
    // KUBE-SEP-A and KUBE-MARK-MASQ are not in this excerpt: unknown jump targets.
    expect(r.diagnostics.map((d) => d.code)).toEqual(['unknown-target', 'unknown-target']);
    const np = findChain(r.value, 'nat', 'KUBE-NODE-PORT')!;
    expect(np.rules.map((x) => findMatchOption(x, 'set', 'match-set')!.values)).toEqual([
      ['KUBE-NODE-PORT-TCP', 'dst'],
      ['KUBE-CLUSTER-IP', 'dst,dst'],
      ['KUBE-LOOP-BACK', 'dst,dst,src'],
    ]);
    expect(np.rules[2]!.target).toEqual({ name: 'MASQUERADE', kind: 'extension', options: [] });
  });

  it('4/6/7: a whole kube-proxy restore input equals the iptables-save form rule for rule', () => {
    const services = [
      makeService(),
      makeService({ name: 'svc2', clusterIP: '172.30.0.42', endpoints: [1, 2, 3].map((i) => ({ ip: `10.180.1.${i}`, port: 8080 })) }),
      makeService({ name: 'dns', portName: 'dns', protocol: 'udp', clusterIP: '172.30.0.10', port: 53, endpoints: [{ ip: '10.180.2.1', port: 53 }] }),
    ];
    const written = parseIptablesSave(kubeProxyRestoreText(services), 'kube-proxy');
    expect(written.diagnostics).toEqual([]);
    const saved = parseIptablesSave(formatIptablesSave(makeRuleset([kubeNatTable(services)]), { counters: false }), 'save').value;
    for (const chain of findChainNames(written.value)) {
      const a = findChain(written.value, 'nat', chain)!.rules;
      const b = findChain(saved, 'nat', chain)!.rules;
      expect(a.length, chain).toBe(b.length);
      a.forEach((rule, i) => expect(sameRuleSemantics(rule, b[i]!, 'ipv4'), `${chain} #${i + 1}: ${rule.raw}`).toBe(true));
    }
  });
});

function findChainNames(rs: ReturnType<typeof parseIptablesSave>['value']): string[] {
  return rs.tables.flatMap((t) => t.chains.map((c) => c.name));
}

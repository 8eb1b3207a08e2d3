/**
 * The iptables-save parser against the real kernel: a kube-proxy-like ruleset is
 * loaded with iptables-restore into a fresh network namespace, UDP datagrams are sent
 * to a ClusterIP (DNAT to an address on the namespace's lo), and the counters parsed
 * from `iptables-save -c` must equal the packets and bytes sent. The saved rules must
 * mean what kube-proxy's text said (corpus-notes items 4, 6, 7), and the formatter's
 * output must load back into the kernel and save to the same model, 64-bit counters included.
 *
 * Needs root, `ip`, `iptables-save` and `iptables-restore`; skips with the reason otherwise.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChain, plainIptablesChain, type IptablesRule, type IptablesRuleset } from '../../src/model/iptables.js';
import { sameRuleSemantics } from '../../src/model/iptables-semantic.js';
import { formatIptablesSave } from '../../src/parsers/iptables-format.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { labAvailable } from '../helpers/lab.js';
import { comparable, kubeProxyRestoreText, makeService, serviceChains } from '../unit/builders/iptables.js';

const canRun = labAvailable(['ip', 'iptables-save', 'iptables-restore']);
const ns = `nsc-ipt-test-${process.pid}`;
const ns2 = `${ns}-b`;

const PACKETS = 3;
const PAYLOAD = 100;
/** IPv4 header 20 + UDP header 8 + payload: what the kernel counts per datagram. */
const PACKET_BYTES = 20 + 8 + PAYLOAD;

const hit = makeService({
  name: 'hit',
  portName: 'dns',
  protocol: 'udp',
  clusterIP: '10.96.0.10',
  port: 53,
  endpoints: [{ ip: '10.244.1.5', port: 5353 }],
});
const spread = makeService({
  name: 'spread',
  clusterIP: '10.96.0.20',
  endpoints: [1, 2, 3].map((i) => ({ ip: `10.244.2.${i}`, port: 8080 })),
});

/** Counting rules in the filter table, on the DNAT-ed destination. */
const FILTER = [
  '*filter',
  '-A OUTPUT -p udp -d 10.244.1.5 -m udp --dport 5353 -m comment --comment "sent to the endpoint" -j ACCEPT',
  '-A INPUT -i lo -p udp -m udp --dport 5353 -m comment --comment "received by the endpoint" -j ACCEPT',
  'COMMIT',
  '',
].join('\n');

function run(argv: string[], input?: string): string {
  return execFileSync(argv[0]!, argv.slice(1), { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

const inNs = (name: string, argv: string[], input?: string) => run(['ip', 'netns', 'exec', name, ...argv], input);

/** Sends PACKETS datagrams from one socket (one conntrack flow) and returns how many arrived. */
const SENDER = `
const dgram = require('node:dgram');
const [n, size] = process.argv.slice(1).map(Number);
const rx = dgram.createSocket('udp4'), tx = dgram.createSocket('udp4');
let got = 0;
const done = () => { console.log(got); rx.close(); tx.close(); };
const timer = setTimeout(done, 3000);
rx.on('message', () => { if (++got === n) { clearTimeout(timer); done(); } });
rx.bind(5353, '10.244.1.5', () => tx.bind(0, () => {
  let sent = 0;
  const next = () => { if (sent++ < n) tx.send(Buffer.alloc(size), 53, '10.96.0.10', next); };
  next();
}));
`;

function deleteNamespace(name: string): void {
  try {
    run(['ip', 'netns', 'del', name]);
  } catch {
    // absent already
  }
}

const byComment = (rs: IptablesRuleset, table: 'filter' | 'nat', chain: string, comment: string): IptablesRule =>
  findChain(rs, table, chain)!.rules.find((r) => r.comment === comment)!;

describe.skipIf(!canRun)('iptables-save -c from the real kernel', () => {
  let saved: IptablesRuleset;
  let received = 0;

  beforeAll(() => {
    run(['ip', 'netns', 'add', ns]);
    run(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
    run(['ip', '-n', ns, 'addr', 'add', '10.244.1.5/32', 'dev', 'lo']);
    run(['ip', '-n', ns, 'route', 'add', '10.96.0.0/12', 'dev', 'lo']);
    inNs(ns, ['iptables-restore'], kubeProxyRestoreText([hit, spread]) + FILTER);
    received = Number(inNs(ns, [process.execPath, '-e', SENDER, String(PACKETS), String(PAYLOAD)]).trim());
    const text = inNs(ns, ['iptables-save', '-c']);
    const parsed = parseIptablesSave(text, `netns:${ns}`);
    expect(parsed.diagnostics).toEqual([]);
    saved = parsed.value;
  });

  afterAll(() => {
    deleteNamespace(ns);
    deleteNamespace(ns2);
  });

  it('the traffic really went through the DNAT', () => {
    expect(received).toBe(PACKETS);
  });

  it('parses per-packet filter counters equal to the datagrams sent', () => {
    const want = { packets: BigInt(PACKETS), bytes: BigInt(PACKETS * PACKET_BYTES) };
    expect(byComment(saved, 'filter', 'OUTPUT', 'sent to the endpoint').counters).toEqual(want);
    expect(byComment(saved, 'filter', 'INPUT', 'received by the endpoint').counters).toEqual(want);
  });

  it('parses nat counters: only the first packet of the flow crosses the nat chains', () => {
    const first = { packets: 1n, bytes: BigInt(PACKET_BYTES) };
    const { spn, svc, seps } = serviceChains(hit);
    expect(byComment(saved, 'nat', 'KUBE-SERVICES', `${spn} cluster IP`).counters).toEqual(first);
    const svcRules = findChain(saved, 'nat', svc)!.rules;
    // Rule 1 masquerades sources outside 10.0.0.0/8; ours is 10.244.1.5, so it stays at zero.
    expect(svcRules.map((r) => r.counters)).toEqual([{ packets: 0n, bytes: 0n }, first]);
    expect(findChain(saved, 'nat', seps[0]!)!.rules.map((r) => r.counters)).toEqual([first, first]);
    const untouched = findChain(saved, 'nat', serviceChains(spread).svc)!.rules;
    expect(untouched.every((r) => r.counters!.packets === 0n)).toBe(true);
  });

  it('records the generator and backend of this iptables', () => {
    const version = run(['iptables', '--version']);
    expect(saved.generator).toMatchObject({ tool: 'iptables-save', backend: version.includes('(nf_tables)') ? 'nf_tables' : 'legacy' });
    expect(version).toContain(`v${saved.generator!.version}`);
  });

  it("every saved rule means what kube-proxy's text said, chain by chain", () => {
    const written = parseIptablesSave(kubeProxyRestoreText([hit, spread]), 'kube-proxy').value;
    let compared = 0;
    for (const chain of written.tables[0]!.chains) {
      const savedRules = findChain(saved, 'nat', chain.name)!.rules;
      expect(savedRules.length, chain.name).toBe(chain.rules.length);
      chain.rules.forEach((rule, i) => {
        expect(sameRuleSemantics(rule, savedRules[i]!, 'ipv4'), `${rule.raw}\n  vs ${savedRules[i]!.raw}`).toBe(true);
        compared++;
      });
    }
    expect(compared).toBeGreaterThan(15);
  });

  it('formatted text loads back with iptables-restore -c and saves to the same model, 2^64−1 counters included', () => {
    const max = 18446744073709551615n;
    const tables = saved.tables.map((t) =>
      t.name !== 'filter'
        ? t
        : // A parsed chain inherits its defaults: spread its plain copy.
          { ...t, chains: t.chains.map((c) => (c.name === 'INPUT' ? { ...plainIptablesChain(c), counters: { packets: max, bytes: max - 2n } } : c)) },
    );
    const edited: IptablesRuleset = { ...saved, tables };
    run(['ip', 'netns', 'add', ns2]);
    inNs(ns2, ['iptables-restore', '-c'], formatIptablesSave(edited, { counters: true }));
    const again = parseIptablesSave(inNs(ns2, ['iptables-save', '-c']), `netns:${ns2}`);
    expect(again.diagnostics).toEqual([]);
    expect(findChain(again.value, 'filter', 'INPUT')!.counters).toEqual({ packets: max, bytes: max - 2n });
    // The header's date is the time of each save; everything else must be identical.
    const norm = (rs: IptablesRuleset) => comparable({ ...rs, generator: null, tables: [...rs.tables].sort((a, b) => a.name.localeCompare(b.name)) });
    expect(norm(again.value)).toEqual(norm(edited));
  });
});

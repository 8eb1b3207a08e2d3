/**
 * The nft parsers against the real kernel and the real nft (1.0.6 on the lab machines): a
 * kube-proxy nftables ruleset (the project's generator: `service-ips` vmap with concatenated
 * keys, `numgen random mod N vmap`, `dnat to`) plus a counting chain, a named counter, an
 * interval set with element comments and an IPv6 table is loaded with `nft -f` into a fresh
 * network namespace; UDP datagrams sent to the DNS ClusterIP must arrive DNATed at the
 * endpoint. Then `nft -j list ruleset`, `nft -a list ruleset` and `nft list ruleset` are
 * parsed: the models must be equal (minus what nft 1.0.6 leaves out of JSON, see
 * `asNft106Json`), hold the expected content and counters, and the formatter's text must
 * load back into a second namespace and list to the same model.
 *
 * Needs root, `ip` and `nft`; skips with the reason otherwise. Deletes its namespaces.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateNftablesRules } from '../../src/analysis/kubeproxy-nftables.js';
import { chainsByHook, findChain, findMap, findSet, findTable, type NftRuleset, type NftTable } from '../../src/model/nftables.js';
import { formatNftText } from '../../src/parsers/nft-format.js';
import { parseNftJsonDocument } from '../../src/parsers/nft-json.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { labAvailable } from '../helpers/lab.js';
import { asNft106Json, kubeProxyInput, kubeService, withoutHandles } from '../unit/nft-builders.js';

const canRun = labAvailable(['ip', 'nft']);
const ns = `nsc-nft-test-${process.pid}`;
const ns2 = `${ns}-b`;

const PACKETS = 4;
const PAYLOAD = 100;
/** IPv4 header 20 + UDP header 8 + payload: what a counter counts per datagram. */
const PACKET_BYTES = 20 + 8 + PAYLOAD;

const dns = kubeService({
  namespace: 'kube-system',
  name: 'kube-dns',
  clusterIP: '10.96.0.10',
  ports: [{ name: 'dns', protocol: 'UDP', port: 53, targetPort: 5353 }],
  endpointIPs: ['10.244.1.5'],
});
const web = kubeService({ name: 'web', clusterIP: '10.96.0.20', endpointIPs: ['10.244.2.1', '10.244.2.2', '10.244.2.3'] });
const V6_ENDPOINT_CHAIN = 'endpoint-ABCDEFGH-ns1/svc1/tcp/p80__fd00.10.180..1/80';

/** kube-proxy's transaction, then what kube-proxy does not write but the model must read. */
const transaction = [
  generateNftablesRules(kubeProxyInput([dns, web])),
  'add chain ip kube-proxy count-output { type filter hook output priority -155 ; }',
  'add counter ip kube-proxy dns-packets { comment "datagrams to the DNS ClusterIP" ; }',
  'add rule ip kube-proxy count-output ip daddr 10.96.0.10 udp dport 53 counter',
  'add rule ip kube-proxy count-output ip daddr 10.96.0.10 udp dport 53 counter name dns-packets',
  'add set ip kube-proxy allowed-sources { type ipv4_addr ; flags interval ; comment "sources allowed in" ; }',
  'add element ip kube-proxy allowed-sources { 10.244.0.0/16 comment "pods", 192.168.49.10-192.168.49.20 comment "node range", 172.16.0.1 }',
  'add table ip6 kube-proxy-v6',
  'add chain ip6 kube-proxy-v6 nat-output { type nat hook output priority -100 ; }',
  `add chain ip6 kube-proxy-v6 ${V6_ENDPOINT_CHAIN}`,
  `add rule ip6 kube-proxy-v6 nat-output ip6 daddr fd00:96::20 tcp dport 80 goto ${V6_ENDPOINT_CHAIN}`,
  `add rule ip6 kube-proxy-v6 ${V6_ENDPOINT_CHAIN} meta l4proto tcp dnat to [fd00:10:180::1]:80`,
  '',
].join('\n');

function run(argv: string[], input?: string): string {
  return execFileSync(argv[0]!, argv.slice(1), { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}
const inNs = (name: string, argv: string[], input?: string) => run(['ip', 'netns', 'exec', name, ...argv], input);

/** Sends PACKETS datagrams to the DNS ClusterIP from one socket; prints how many the endpoint got. */
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

/** Parses one dump, requiring no diagnostics at all. */
function parsedText(text: string, origin: string): NftRuleset {
  const r = parseNftText(text, origin);
  expect(r.diagnostics).toEqual([]);
  return r.value;
}

describe.skipIf(!canRun)('nft list ruleset and nft -j list ruleset from the real kernel', () => {
  let received = 0;
  let json: NftRuleset;
  let nftVersion: string | undefined;
  let withHandles: NftRuleset;
  let plain: NftRuleset;
  const kp = (rs: NftRuleset): NftTable => findTable(rs, 'ip', 'kube-proxy')!;

  beforeAll(() => {
    deleteNamespace(ns);
    run(['ip', 'netns', 'add', ns]);
    run(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
    run(['ip', '-n', ns, 'addr', 'add', '10.244.1.5/32', 'dev', 'lo']);
    run(['ip', '-n', ns, 'route', 'add', '10.96.0.0/12', 'dev', 'lo']);
    inNs(ns, ['nft', '-f', '-'], transaction);
    received = Number(inNs(ns, [process.execPath, '-e', SENDER, String(PACKETS), String(PAYLOAD)]).trim());
    const doc = parseNftJsonDocument(inNs(ns, ['nft', '-j', 'list', 'ruleset']), `netns:${ns} nft -j`);
    expect(doc.diagnostics).toEqual([]);
    json = doc.value.ruleset;
    nftVersion = doc.value.metainfo?.version;
    withHandles = parsedText(inNs(ns, ['nft', '-a', 'list', 'ruleset']), `netns:${ns} nft -a`);
    plain = parsedText(inNs(ns, ['nft', 'list', 'ruleset']), `netns:${ns} nft`);
  });

  afterAll(() => {
    deleteNamespace(ns);
    deleteNamespace(ns2);
  });

  it('the traffic really went through service-ips, numgen and dnat to the endpoint', () => {
    expect(received).toBe(PACKETS);
  });

  it('records the nft version from metainfo', () => {
    expect(run(['nft', '--version'])).toContain(`v${nftVersion}`);
  });

  it('JSON and `nft -a` text give equal models (minus what nft 1.0.6 JSON omits)', () => {
    expect(json).toEqual(asNft106Json(withHandles));
    // What the projection drops is really in the text, so the equality above is not vacuous.
    expect(kp(withHandles).comment).toBe('rules for kube-proxy');
    expect(findChain(kp(withHandles), 'reject-chain')!.comment).toBe('helper for @no-endpoint-services / @no-endpoint-nodeports');
    expect(kp(json).chains.length).toBeGreaterThan(20);
  });

  it('plain `nft list` text gives the same model without handles', () => {
    expect(withoutHandles(json)).toEqual(asNft106Json(plain));
    expect(withoutHandles(withHandles)).toEqual(plain);
  });

  it('holds service-ips with concatenated keys, numgen over three endpoints, and dnat', () => {
    const t = kp(json);
    const serviceIps = findMap(t, 'service-ips')!;
    expect(serviceIps.keyTypes).toEqual(['ipv4_addr', 'inet_proto', 'inet_service']);
    const dnsElement = serviceIps.elements.find((e) => e.key.kind === 'concat' && e.key.items[0]!.kind === 'value' && e.key.items[0]!.value === '10.96.0.10')!;
    expect(dnsElement.key).toEqual({ kind: 'concat', items: [{ kind: 'value', value: '10.96.0.10' }, { kind: 'value', value: 'udp' }, { kind: 'value', value: 53 }] });
    const dnsService = dnsElement.value!.kind === 'verdict' ? dnsElement.value!.target! : '';
    expect(dnsService).toMatch(/^service-[A-Z0-9]{8}-kube-system\/kube-dns\/udp\/dns$/);

    const webElement = serviceIps.elements.find((e) => e !== dnsElement)!;
    const webChain = findChain(t, webElement.value!.kind === 'verdict' ? webElement.value!.target! : '')!;
    const numgen = webChain.rules.map((r) => r.statements[0]!).find((s) => s.kind === 'vmap')!;
    if (numgen.kind !== 'vmap' || numgen.data.kind !== 'set') throw new Error('expected numgen vmap');
    expect(numgen.key).toEqual({ kind: 'numgen', mode: 'random', mod: 3, offset: 0 });
    const endpoints = numgen.data.elements.map((e) => (e.value?.kind === 'verdict' ? e.value.target! : ''));
    expect(endpoints.map((e) => e.split('__')[1])).toEqual(['10.244.2.1/8080', '10.244.2.2/8080', '10.244.2.3/8080']);
    for (const [i, name] of endpoints.entries()) {
      const dnat = findChain(t, name)!.rules.flatMap((r) => r.statements).find((s) => s.kind === 'nat')!;
      expect(dnat).toEqual({ kind: 'nat', type: 'dnat', flags: [], addr: { kind: 'value', value: `10.244.2.${i + 1}` }, port: { kind: 'value', value: 8080 } });
    }
  });

  it('counts every datagram in the rule counter and the named counter, alike in JSON and text', () => {
    const want = { packets: BigInt(PACKETS), bytes: BigInt(PACKETS * PACKET_BYTES) };
    for (const rs of [json, plain]) {
      const rules = findChain(kp(rs), 'count-output')!.rules;
      expect(rules[0]!.counters).toEqual(want);
      expect(rules[1]!.statements.at(-1)).toEqual({ kind: 'counter', name: 'dns-packets' });
      expect(kp(rs).counters).toEqual([expect.objectContaining({ name: 'dns-packets', comment: 'datagrams to the DNS ClusterIP', ...want })]);
    }
  });

  it('holds the interval set with its element comments, prefix and range', () => {
    const set = findSet(kp(json), 'allowed-sources')!;
    expect(set).toMatchObject({ flags: ['interval'], comment: 'sources allowed in' });
    expect(set.elements).toEqual(
      expect.arrayContaining([
        { key: { kind: 'prefix', addr: '10.244.0.0', len: 16 }, comment: 'pods' },
        { key: { kind: 'range', from: { kind: 'value', value: '192.168.49.10' }, to: { kind: 'value', value: '192.168.49.20' } }, comment: 'node range' },
        { key: { kind: 'value', value: '172.16.0.1' } },
      ]),
    );
    expect(set.elements).toHaveLength(3);
  });

  it('orders base chains by hook and priority, with the priority text nft printed', () => {
    const output = chainsByHook(json, { hook: 'output', families: ['ip'] }).map((c) => `${c.chain.name} ${c.base.priorityText}`);
    expect(output).toEqual(['count-output mangle - 5', 'filter-output-pre-dnat -110', 'nat-output -100', 'filter-output filter']);
    const prerouting = chainsByHook(plain, { hook: 'prerouting' }).map((c) => `${c.chain.name} ${c.base.priorityText}`);
    expect(prerouting).toEqual(['filter-prerouting-pre-dnat dstnat - 10', 'nat-prerouting dstnat']);
  });

  it('reads the IPv6 dnat with a bracketed address', () => {
    const v6 = findTable(json, 'ip6', 'kube-proxy-v6')!;
    expect(findChain(v6, V6_ENDPOINT_CHAIN)!.rules[0]).toMatchObject({
      raw: 'meta l4proto tcp dnat to [fd00:10:180::1]:80',
      statements: [{ kind: 'match' }, { kind: 'nat', type: 'dnat', addr: { kind: 'value', value: 'fd00:10:180::1' }, port: { kind: 'value', value: 80 } }],
    });
  });

  it('formatted text loads back with nft -f and lists to the same model, counters included', () => {
    deleteNamespace(ns2);
    run(['ip', 'netns', 'add', ns2]);
    inNs(ns2, ['nft', '-f', '-'], formatNftText(json));
    const again = parseNftJsonDocument(inNs(ns2, ['nft', '-j', 'list', 'ruleset']), `netns:${ns2}`);
    expect(again.diagnostics).toEqual([]);
    expect(withoutHandles(again.value.ruleset)).toEqual(withoutHandles(json));
    expect(findChain(kp(again.value.ruleset), 'count-output')!.rules[0]!.counters!.packets).toBe(BigInt(PACKETS));
  });
});

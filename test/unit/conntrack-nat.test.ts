import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  classifyConntrack,
  conntrackNatView,
  countByReplySource,
  endpointKey,
  type ServiceFrontends,
} from '../../src/analysis/conntrack-nat.js';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { conntrackCorpusDir, makeEntry, makeTuple } from './conntrack-builders.js';

function makeService(over: Partial<ServiceFrontends> = {}): ServiceFrontends {
  return {
    namespace: 'default',
    name: 'web',
    vips: [{ ip: '10.96.12.34', port: 80, protocol: 'TCP' }],
    nodePorts: [],
    endpoints: [{ ip: '10.244.0.31', port: 8080, protocol: 'TCP' }],
    ...over,
  };
}

describe('conntrackNatView', () => {
  it('shows client → VIP ⇒ the endpoint that answers, DNAT without SNAT', () => {
    const v = conntrackNatView(makeEntry());
    expect(v.text).toBe('10.244.0.9:51286 → 10.96.12.34:80 ⇒ 10.244.0.31:8080');
    expect([v.dnat, v.snat]).toEqual([true, false]);
    expect(v.answeredBy).toEqual({ ip: '10.244.0.31', port: 8080 });
  });

  it('detects SNAT / masquerade and shows the translated source', () => {
    const v = conntrackNatView(makeEntry({ seenAs: ['10.224.0.4', 61000] }));
    expect([v.dnat, v.snat]).toEqual([true, true]);
    expect(v.clientAsSeen).toEqual({ ip: '10.224.0.4', port: 61000 });
    expect(v.text).toBe('10.244.0.9:51286 → 10.96.12.34:80 ⇒ 10.244.0.31:8080 (SNAT as 10.224.0.4:61000)');
  });

  it('sees no NAT when the reply mirrors the original, and a port-only DNAT as DNAT', () => {
    const plain = conntrackNatView(makeEntry({ endpoint: ['10.96.12.34', 80] }));
    expect([plain.dnat, plain.snat]).toEqual([false, false]);
    const portOnly = conntrackNatView(makeEntry({ endpoint: ['10.96.12.34', 8080] }));
    expect(portOnly.dnat).toBe(true);
  });

  it('brackets IPv6 and leaves ports out for icmp', () => {
    const v6 = conntrackNatView(makeEntry({ client: ['fd00::9', 40000], vip: ['fd00:10:96::a', 53], endpoint: ['fd00:244::4', 53] }));
    expect(v6.text).toBe('[fd00::9]:40000 → [fd00:10:96::a]:53 ⇒ [fd00:244::4]:53');
    const icmp = conntrackNatView(
      makeEntry({
        proto: 'icmp',
        protoNum: 1,
        state: undefined,
        orig: makeTuple({ src: '10.0.0.1', dst: '10.96.0.1', icmpType: 8, icmpCode: 0, icmpId: 3 }),
        reply: makeTuple({ src: '10.244.0.5', dst: '10.0.0.1', icmpType: 0, icmpCode: 0, icmpId: 3 }),
      }),
    );
    expect(icmp.text).toBe('10.0.0.1 → 10.96.0.1 ⇒ 10.244.0.5');
    expect(icmp.dnat).toBe(true);
  });
});

describe('classifyConntrack', () => {
  it('matches a VIP:port, an endpoint that is current, and counts per endpoint (zeros included)', () => {
    const svc = makeService({ endpoints: [{ ip: '10.244.0.31', port: 8080, protocol: 'TCP' }, { ip: '10.244.0.32', port: 8080, protocol: 'TCP' }] });
    const r = classifyConntrack([makeEntry(), makeEntry({ client: ['10.244.0.9', 51287] })], [svc], []);
    expect(r.matches.map((m) => [m.service?.name, m.via, m.status])).toEqual([
      ['web', 'vip', 'ok'],
      ['web', 'vip', 'ok'],
    ]);
    expect(r.endpointCounts.map((c) => [c.endpoint.ip, c.entries])).toEqual([
      ['10.244.0.31', 2],
      ['10.244.0.32', 0],
    ]);
  });

  it("gives an untranslated flow straight to a current endpoint to that endpoint's Service (Cilium socket LB), not a translated one", () => {
    const svc = makeService();
    const direct = makeEntry({ vip: ['10.244.0.31', 8080], endpoint: ['10.244.0.31', 8080] });
    const viaOther = makeEntry({ vip: ['10.244.0.31', 8080], endpoint: ['10.244.0.77', 8080] }); // DNATed elsewhere: not web's
    const otherPort = makeEntry({ vip: ['10.244.0.31', 22], endpoint: ['10.244.0.31', 22] });
    const r = classifyConntrack([direct, viaOther, otherPort], [svc], []);
    expect(r.matches.map((m) => [m.service?.name ?? null, m.via ?? null, m.status])).toEqual([
      ['web', 'endpoint', 'ok'],
      [null, null, 'no-service'],
      [null, null, 'no-service'],
    ]);
  });

  it('flags an entry still pointing at an endpoint that is gone as stale, with that endpoint', () => {
    const svc = makeService({ endpoints: [{ ip: '10.244.0.40', port: 8080, protocol: 'TCP' }] });
    const [m] = classifyConntrack([makeEntry()], [svc], []).matches;
    expect(m).toMatchObject({ status: 'stale', staleReason: 'endpoint-gone', pointsAt: { ip: '10.244.0.31', port: 8080 } });
  });

  it('flags a VIP entry that was never translated (made while there were no endpoints) as stale', () => {
    const unreplied = makeEntry({ proto: 'udp', protoNum: 17, state: undefined, flags: ['UNREPLIED'], vip: ['10.96.0.10', 53], endpoint: ['10.96.0.10', 53] });
    const dns = makeService({ name: 'kube-dns', vips: [{ ip: '10.96.0.10', port: 53, protocol: 'UDP' }], endpoints: [] });
    const [m] = classifyConntrack([unreplied], [dns], []).matches;
    expect(m).toMatchObject({ service: { name: 'kube-dns' }, status: 'stale', staleReason: 'not-translated' });
  });

  it('matches a NodePort only on a node address, and only for its protocol', () => {
    const svc = makeService({ nodePorts: [{ port: 30080, protocol: 'TCP' }] });
    const toNode = makeEntry({ vip: ['192.168.1.10', 30080], seenAs: ['192.168.1.10', 40000] });
    const toOther = makeEntry({ vip: ['192.168.1.99', 30080] });
    const udp = makeEntry({ proto: 'udp', protoNum: 17, state: undefined, vip: ['192.168.1.10', 30080] });
    const r = classifyConntrack([toNode, toOther, udp], [svc], ['192.168.1.10']);
    expect(r.matches.map((m) => [m.via, m.status])).toEqual([
      ['nodePort', 'ok'],
      [undefined, 'no-service'],
      [undefined, 'no-service'],
    ]);
    expect(r.matches[0]!.nat.snat).toBe(true);
  });

  it('compares IPv6 in any spelling', () => {
    const svc = makeService({
      vips: [{ ip: 'fd00:0010:0096:0000:0000:0000:0000:000a', port: 53, protocol: 'TCP' }],
      endpoints: [{ ip: 'FD00:244::4', port: 53, protocol: 'TCP' }],
    });
    const e = makeEntry({ client: ['fd00::9', 40000], vip: ['fd00:10:96::a', 53], endpoint: ['fd00:244::4', 53] });
    const r = classifyConntrack([e], [svc], []);
    expect(r.matches[0]!.status).toBe('ok');
    expect(r.endpointCounts[0]!.entries).toBe(1);
    expect(endpointKey(svc.endpoints[0]!)).toBe('TCP fd00:244::4 53');
  });

  it('puts protocols a Service cannot have out of any Service', () => {
    const gre = makeEntry({ proto: 'gre', protoNum: 47, state: undefined });
    expect(classifyConntrack([gre], [makeService()], []).matches[0]!.status).toBe('no-service');
    expect(countByReplySource([gre]).size).toBe(0);
  });

  const dir = conntrackCorpusDir();
  it.skipIf(dir === undefined)('on the AKS capture: DNS DNAT to both CoreDNS pods, and a masqueraded egress flow', () => {
    const text = readFileSync(path.join(dir!, 'aks-conntrack-L-dns-dnat-3-nodes.txt'), 'utf8');
    // The first node's block (lines 17–23): the capture's own `conntrack -L | grep` on vmss000002.
    const entries = parseConntrack(text, 'aks').value.entries.filter((e) => e.line >= 17 && e.line <= 23);
    // Objects as the same capture shows them: kube-dns ClusterIP 10.0.0.10, CoreDNS pods, node IPs.
    const kubeDns: ServiceFrontends = {
      namespace: 'kube-system',
      name: 'kube-dns',
      vips: [{ ip: '10.0.0.10', port: 53, protocol: 'UDP' }, { ip: '10.0.0.10', port: 53, protocol: 'TCP' }],
      nodePorts: [],
      endpoints: [{ ip: '10.244.1.4', port: 53, protocol: 'UDP' }, { ip: '10.244.2.3', port: 53, protocol: 'UDP' }],
    };
    const r = classifyConntrack(entries, [kubeDns], ['10.224.0.4', '10.224.0.5', '10.224.0.6']);
    expect(r.matches.map((m) => m.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'no-service']);
    expect(r.matches[0]!.nat.text).toBe('10.244.0.11:35637 → 10.0.0.10:53 ⇒ 10.244.2.3:53');
    const egress = r.matches[5]!.nat;
    expect(egress.snat).toBe(true);
    expect(egress.clientAsSeen).toEqual({ ip: '10.224.0.4', port: 53830 });
    expect(egress.dnat).toBe(false);
    expect(r.endpointCounts.map((c) => [c.endpoint.ip, c.entries])).toEqual([
      ['10.244.1.4', 2],
      ['10.244.2.3', 3],
    ]);
    // One CoreDNS pod replaced: its entries become stale, pointing at the old pod.
    const replaced = { ...kubeDns, endpoints: [kubeDns.endpoints[1]!, { ip: '10.244.1.9', port: 53, protocol: 'UDP' as const }] };
    const stale = classifyConntrack(entries, [replaced], []).matches.filter((m) => m.status === 'stale');
    expect(stale.map((m) => [m.staleReason, m.pointsAt?.ip])).toEqual([
      ['endpoint-gone', '10.244.1.4'],
      ['endpoint-gone', '10.244.1.4'],
    ]);
  });
});

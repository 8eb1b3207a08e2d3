/**
 * A replay whose capture recorded one server (a CoreDNS pod) answers questions asked of
 * the kube-dns ClusterIP: `show dns` (text and JSON) and `dig` (text and JSON) name the
 * recorded server as the one that answered and say it stands in for the one asked; a
 * question the capture never asked prints no WHEN (not the epoch).
 */
import { describe, expect, it } from 'vitest';
import { dig, digOutput } from '../../src/dns/dig.js';
import { ReplayDnsTransport } from '../../src/dns/replay.js';
import { resolveServiceDns } from '../../src/dns/resolve.js';
import { showDns } from '../../src/report/dns.js';
import { makeExchange, makeRecord } from './builders/dns.js';
import { makeService, objectsOf } from './builders/k8s.js';

const POD_DNS = '10.244.0.2';
const CLUSTER_DNS = '10.96.0.10';
const FQDN = 'web.default.svc.cluster.local';
const api = objectsOf(
  makeService({ name: 'web', clusterIP: '10.96.12.34', ports: [{ name: 'http', port: 80 }] }),
  makeService({ name: 'kube-dns', namespace: 'kube-system', clusterIP: CLUSTER_DNS, ports: [{ name: 'dns', port: 53, protocol: 'UDP' }] }),
);
const replayOf = (server: string) =>
  new ReplayDnsTransport({ formatVersion: 1, exchanges: [makeExchange({ server, qname: FQDN, answers: [makeRecord('A', '10.96.12.34', FQDN)] })] }, 'replay:x');

describe('show dns on a replay answered by the capture\'s only server', () => {
  it('names the recorded server and the asked one it stands in for, in text and JSON', async () => {
    const r = await resolveServiceDns({ api, service: 'default/web', dns: replayOf(POD_DNS), shortNames: [] });
    const text = showDns(api, [r], 'text');
    expect(text).toContain(`server ${CLUSTER_DNS}:53 (kube-dns ClusterIP kube-system/kube-dns) via replay:x`);
    expect(text).toContain(`answered by ${POD_DNS}:53 (recorded), standing in for ${CLUSTER_DNS}:53 asked`);
    const doc = JSON.parse(showDns(api, [r], 'json')) as { dns: { server: { address: string }; answeredBy: unknown }[] };
    expect(doc.dns[0]!.server.address).toBe(CLUSTER_DNS);
    expect(doc.dns[0]!.answeredBy).toEqual([{ address: POD_DNS, port: 53, standsInFor: { address: CLUSTER_DNS, port: 53 } }]);
  });

  it('marks no stand-in when the asked server recorded the answer itself', async () => {
    const r = await resolveServiceDns({ api, service: 'default/web', dns: replayOf(CLUSTER_DNS), shortNames: [] });
    expect(showDns(api, [r], 'text')).not.toContain('standing in');
    const doc = JSON.parse(showDns(api, [r], 'json')) as { dns: { answeredBy: unknown }[] };
    expect(doc.dns[0]!.answeredBy).toEqual([{ address: CLUSTER_DNS, port: 53, standsInFor: null }]);
  });
});

describe('dig on a replay', () => {
  it('says on the SERVER line that the recorded server stands in for --server', async () => {
    const r = await dig({ name: FQDN, server: CLUSTER_DNS, dns: replayOf(POD_DNS) });
    const text = digOutput(r, {});
    expect(text).toMatch(new RegExp(`^;; SERVER: ${POD_DNS.replace(/\./g, '\\.')}#53 \\(recorded; stands in for ${CLUSTER_DNS.replace(/\./g, '\\.')}#53, the server asked`, 'm'));
    const doc = JSON.parse(digOutput(r, { format: 'json' })) as Record<string, unknown> & { exchange: { server: string } };
    expect(doc.exchange.server).toBe(POD_DNS);
    expect(doc.askedServer).toEqual({ address: CLUSTER_DNS, port: 53 });
    expect(doc.standsInFor).toEqual({ address: CLUSTER_DNS, port: 53 });
  });

  it('prints a plain SERVER line when the asked server answered', async () => {
    const r = await dig({ name: FQDN, server: POD_DNS, dns: replayOf(POD_DNS) });
    expect(digOutput(r, {})).toContain(`;; SERVER: ${POD_DNS}#53\n`);
    expect(JSON.parse(digOutput(r, { format: 'json' }))).not.toHaveProperty('standsInFor');
  });

  it('prints no WHEN for a question the capture never asked', async () => {
    const r = await dig({ name: 'nope.default.svc.cluster.local', server: CLUSTER_DNS, dns: replayOf(POD_DNS) });
    const text = digOutput(r, {});
    expect(text).toContain(';; no reply: NOT-CAPTURED');
    expect(text).not.toContain(';; WHEN:');
    expect(text).not.toContain('1970');
  });

  it('keeps WHEN for an answered question', async () => {
    const r = await dig({ name: FQDN, server: POD_DNS, dns: replayOf(POD_DNS) });
    expect(digOutput(r, {})).toContain(`;; WHEN: ${r.exchange.startedAt}`);
  });
});

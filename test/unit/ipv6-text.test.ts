/**
 * IPv6 everywhere text is produced: a kube-proxy `table ip6 kube-proxy` dump (nftables mode,
 * the layout of kube-proxy's pkg/proxy/nftables/proxier.go for an IPv6 Service: service-ips
 * vmap, numgen branch, endpoint chain with `dnat to [addr]:port`, `masquerade fully-random`)
 * walked and printed: the table's family in the mode evidence, bracketed `[addr]:port`, no
 * `dport=*` in the conntrack line, the IPv6 forwarding sysctl, and `show compare` setting the
 * node's IPv6 rules apart from the IPv4 prediction.
 */
import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { detectProxyMode } from '../../src/analysis/proxy-mode.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { showCompare } from '../../src/report/compare.js';
import { runTraceCommand } from '../../src/report/trace.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';

function run(id: string, stdout: string): ProbeRun {
  return { id, argv: [id], status: 'ok', result: { argv: [id], stdout, stderr: '', exitCode: 0, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1 } };
}

const EP = 'endpoint-5OJB2KTY-default/web/tcp/http__fd00:10:244:1::5/8080';
export const IP6_KUBE_PROXY = `table ip6 kube-proxy {
	comment "rules for kube-proxy"
	map service-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { fd00:10:96::a . tcp . 80 : goto service-ULMVA6XW-default/web/tcp/http }
	}

	chain mark-for-masquerade {
		meta mark set meta mark | 0x00004000
	}

	chain masquerading {
		meta mark & 0x00004000 == 0x00000000 return
		meta mark set meta mark ^ 0x00004000
		masquerade fully-random
	}

	chain services {
		ip6 daddr . meta l4proto . th dport vmap @service-ips
	}

	chain nat-prerouting {
		type nat hook prerouting priority dstnat; policy accept;
		jump services
	}

	chain nat-output {
		type nat hook output priority -100; policy accept;
		jump services
	}

	chain nat-postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		jump masquerading
	}

	chain service-ULMVA6XW-default/web/tcp/http {
		ip6 daddr fd00:10:96::a tcp dport 80 ip6 saddr != fd00:10:244::/56 jump mark-for-masquerade
		numgen random mod 1 vmap { 0 : goto ${EP} }
	}

	chain ${EP} {
		ip6 saddr fd00:10:244:1::5 jump mark-for-masquerade
		meta l4proto tcp dnat to [fd00:10:244:1::5]:8080
	}
}
`;

const addrs = JSON.stringify([
  { ifindex: 1, ifname: 'lo', flags: ['LOOPBACK', 'UP'], mtu: 65536, operstate: 'UNKNOWN', link_type: 'loopback', addr_info: [{ family: 'inet6', local: '::1', prefixlen: 128, scope: 'host' }] },
  { ifindex: 2, ifname: 'eth0', flags: ['BROADCAST', 'UP'], mtu: 1500, operstate: 'UP', link_type: 'ether', addr_info: [{ family: 'inet6', local: '2001:db8::1', prefixlen: 64, scope: 'global' }] },
]);
const routes = JSON.stringify([
  { dst: 'default', gateway: '2001:db8::fe', dev: 'eth0', metric: 1024, flags: [] },
  { dst: '2001:db8::/64', dev: 'eth0', protocol: 'kernel', metric: 256, flags: [] },
  { dst: 'fd00:10:244:1::/64', gateway: '2001:db8::3', dev: 'eth0', metric: 1024, flags: [] },
  { type: 'local', dst: '2001:db8::1', dev: 'eth0', table: 'local', protocol: 'kernel', flags: [] },
  { type: 'local', dst: '::1', dev: 'lo', table: 'local', protocol: 'kernel', flags: [] },
]);

const snapshot = () => buildSnapshot({ runs: [run('nft-text', IP6_KUBE_PROXY), run('ip-addr', addrs), run('ip-route', routes)], source: { kind: 'replay', label: 't', live: false }, capturedAt: '2026-01-01T00:00:00.000Z' });

describe('an ip6 kube-proxy table, walked and printed', () => {
  it('parses without diagnostics', () => {
    expect(parseNftText(IP6_KUBE_PROXY, 'nft').diagnostics).toEqual([]);
  });

  it('names the table ip6 kube-proxy in the mode evidence', () => {
    const r = detectProxyMode(snapshot());
    expect(r.mode).toBe('nftables');
    expect(r.evidence).toContain('nftables: table ip6 kube-proxy present');
    expect(r.evidence.join('; ')).not.toContain('table ip kube-proxy');
  });

  it('walks a host packet to the IPv6 ClusterIP with bracketed endpoints, conntrack ports and the IPv6 forwarding note', () => {
    const text = runTraceCommand(snapshot(), { from: '2001:db8::1', to: '[fd00:10:96::a]:80/tcp', entry: 'host' });
    expect(text).toContain('[fd00:10:244:1::5]:8080');
    expect(text).toContain('[2001:db8::1]:<random port>');
    expect(text).toContain('leaves as: tcp [2001:db8::1]:<random> → [fd00:10:244:1::5]:8080');
    // never an IPv6 address with a port glued on unbracketed
    expect(text).not.toMatch(/(^|[^[\w:])2001:db8::1:</m);
    expect(text).not.toContain('=*');
    expect(text).toMatch(/conntrack: tcp +6 120 SYN_SENT src=2001:db8::1 dst=fd00:10:96::a sport=\d+ dport=80 \[UNREPLIED\] src=fd00:10:244:1::5 dst=2001:db8::1 sport=8080 dport=<random> /);
    expect(text).not.toContain('net.ipv4.ip_forward');
  });

  it('show compare sets the node\'s IPv6 rules apart, never against the IPv4 prediction', async () => {
    const { compareModes } = await import('../../src/analysis/compare-modes.js');
    const api = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'ClusterIP', clusterIP: 'fd00:10:96::a', clusterIPs: ['fd00:10:96::a'], ipFamilies: ['IPv6'], ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }] } },
    ] });
    const { parseK8sObjects: parseApiObjects } = await import('../../src/parsers/k8s-objects.js');
    const base = snapshot();
    const withApi = { ...base, api: { value: parseApiObjects(api, 'api').value, diagnostics: [], probe: null, error: null } };
    const cmp = compareModes(withApi)!;
    expect(cmp.actual.map((a) => [a.mode, a.family])).toEqual([['nftables', 'ipv6']]);
    const text = showCompare(withApi, 'text');
    expect(text).toMatch(/nftables IPv6 on this node: \d+ \(nft: table ip6 kube-proxy\): not compared, the prediction is IPv4 only/);
    expect(text).not.toMatch(/\(differs by/);
  });

  it('a forwarded IPv6 packet gets the IPv6 forwarding sysctl in its note', () => {
    const text = runTraceCommand(snapshot(), { from: 'fd00:10:244::9', to: '[fd00:10:96::a]:80/tcp', entry: 'external' });
    expect(text).toContain('net.ipv6.conf.all.forwarding=1');
    expect(text).not.toContain('net.ipv4.ip_forward');
  });
});

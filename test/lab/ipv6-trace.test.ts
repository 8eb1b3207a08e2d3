/**
 * An IPv6 Service on the lab's real kernel: the lab node gets IPv6 addresses on its pod veths
 * (added with `nodad`, so no duplicate-address wait), `net.ipv6.conf.all.forwarding=1`, and the
 * rules kube-proxy writes for an IPv6 ClusterIP — `table ip6 kube-proxy` in nftables mode
 * (pkg/proxy/nftables/proxier.go layout) and ip6tables KUBE-SERVICES → KUBE-SVC → KUBE-SEP in
 * iptables mode (pkg/proxy/iptables/proxier.go). One TCP SYN from the client pod to the
 * ClusterIP crosses the node while `nft monitor trace` runs (`--allow-trace`'s probes), and the
 * kernel's walk must equal nodescope's walk of the same packet, printed with IPv6 text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareLiveTrace, liveTraceText } from '../../src/report/trace-live.js';
import type { TraceCommandArgs } from '../../src/trace/choose-engine.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { LocalTransport } from '../../src/sources/local.js';
import { formatKernelEvent } from '../../src/trace/kernel-trace.js';
import { captureKernelTrace, type LiveTraceMatch } from '../../src/collect/live-trace.js';
import { labAvailable } from '../helpers/lab.js';
import { LAB_SCENARIO, labDown, labUp, nsExec, nsExecOk, type LabHandle } from './lab.js';
import { caliName } from './names.js';

const PREFIX = 'nsv6-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'ip6tables-restore', 'curl', 'conntrack', 'timeout']);

const client = LAB_SCENARIO.pods.find((p) => p.key === 'client')!;
const web1 = LAB_SCENARIO.pods.find((p) => p.key === 'web-1')!;
const web = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const PORT = web.ports[0]!.port;
const TARGET = web.ports[0]!.targetPort;

/** The IPv6 side of the lab: pods in fd00:10:244::/64, the Service at fd00:10:96::1234. */
const V6 = {
  client: 'fd00:10:244::9',
  web1: 'fd00:10:244::23',
  clusterIP: 'fd00:10:96::1234',
  podCIDR: 'fd00:10:244::/64',
  gateway: (n: number) => `fd00:ffff::${n}`,
};

// kube-proxy's chain names hold no colon (nft would read it as syntax): the address with dots.
const EP = `endpoint-WEB1V6XX-default/web/tcp/http__${V6.web1.replace(/:/g, '.')}/${TARGET}`;
const SVC = 'service-WEBV6XXX-default/web/tcp/http';

/** What kube-proxy's nftables mode writes for the IPv6 ClusterIP with one endpoint. */
const NFT_IP6 = `table ip6 kube-proxy {
	comment "rules for kube-proxy"
	map service-ips {
		type ipv6_addr . inet_proto . inet_service : verdict
		comment "ClusterIP, ExternalIP and LoadBalancer IP traffic"
		elements = { ${V6.clusterIP} . tcp . ${PORT} : goto ${SVC} }
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
	chain ${SVC} {
		ip6 daddr ${V6.clusterIP} tcp dport ${PORT} ip6 saddr != ${V6.podCIDR} jump mark-for-masquerade
		numgen random mod 1 vmap { 0 : goto ${EP} }
	}
	chain ${EP} {
		ip6 saddr ${V6.web1} jump mark-for-masquerade
		meta l4proto tcp dnat to [${V6.web1}]:${TARGET}
	}
}
`;

/** What kube-proxy's iptables mode writes (ip6tables-restore input) for the same Service. */
const IP6TABLES = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-WEBV6XXXXXXXXXXX - [0:0]
:KUBE-SEP-WEB1V6XXXXXXXXXX - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0
-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully
-A KUBE-SERVICES -d ${V6.clusterIP}/128 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport ${PORT} -j KUBE-SVC-WEBV6XXXXXXXXXXX
-A KUBE-SVC-WEBV6XXXXXXXXXXX ! -s ${V6.podCIDR} -d ${V6.clusterIP}/128 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport ${PORT} -j KUBE-MARK-MASQ
-A KUBE-SVC-WEBV6XXXXXXXXXXX -m comment --comment "default/web:http -> [${V6.web1}]:${TARGET}" -j KUBE-SEP-WEB1V6XXXXXXXXXX
-A KUBE-SEP-WEB1V6XXXXXXXXXX -s ${V6.web1}/128 -m comment --comment "default/web:http" -j KUBE-MARK-MASQ
-A KUBE-SEP-WEB1V6XXXXXXXXXX -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination [${V6.web1}]:${TARGET}
COMMIT
`;

/** IPv6 for one pod: its address, the node-side gateway address on its veth, the routes both ways. */
async function addPodIpv6(lab: LabHandle, key: string, addr: string, n: number): Promise<void> {
  const pod = LAB_SCENARIO.pods.find((p) => p.key === key)!;
  const podNs = lab.podNs(key);
  const node = lab.names.node;
  const cali = caliName(pod);
  await nsExecOk(node, ['ip', '-6', 'addr', 'add', `${V6.gateway(n)}/128`, 'dev', cali, 'nodad']);
  await nsExecOk(node, ['ip', '-6', 'route', 'add', `${addr}/128`, 'dev', cali]);
  await nsExecOk(podNs, ['ip', '-6', 'addr', 'add', `${addr}/128`, 'dev', 'eth0', 'nodad']);
  await nsExecOk(podNs, ['ip', '-6', 'route', 'add', `${V6.gateway(n)}/128`, 'dev', 'eth0']);
  await nsExecOk(podNs, ['ip', '-6', 'route', 'add', 'default', 'via', V6.gateway(n), 'dev', 'eth0']);
}

/** Writes `text` to stdin of `argv` in the node namespace. */
async function load(lab: LabHandle, argv: string[], text: string): Promise<void> {
  const r = await nsExec(lab.names.node, argv, { input: text });
  expect(r.exitCode, r.stderr).toBe(0);
}

/** Traces one SYN from the client to [ClusterIP]:port and compares the kernel's walk with nodescope's. */
async function traceOnce(lab: LabHandle): Promise<ReturnType<typeof compareLiveTrace>> {
  const node = lab.names.node;
  await nsExec(node, ['conntrack', '-F']);
  const transport = new LocalTransport({ netns: node });
  const { snapshot } = await loadSnapshot({ transport, live: true });
  const match: LiveTraceMatch = { l3: 'ip6', src: V6.client, dst: V6.clusterIP, proto: 'tcp', sport: null, dport: PORT };
  const capture = await captureKernelTrace({
    transport, match, allowTrace: true, seconds: 3,
    onListening: async () => {
      // The web server may listen on IPv4 only: the SYN's walk through the node is what counts.
      await nsExec(lab.podNs('client'), ['curl', '-s', '-m', '2', '-o', '/dev/null', `http://[${V6.clusterIP}]:${PORT}/`]);
    },
  });
  expect(capture.removed).toBe(true);
  const args: TraceCommandArgs = { to: `[${V6.clusterIP}]:${PORT}/tcp`, from: V6.client, ...(snapshot.nft?.value ? { nft: snapshot.nft.value } : {}) };
  return compareLiveTrace(snapshot, args, match, capture, 3);
}

describe.skipIf(!canRun)('an IPv6 Service walked on the real kernel equals nft monitor trace', () => {
  let lab: LabHandle;

  beforeAll(async () => {
    lab = await labUp('nftables', { prefix: PREFIX });
    await nsExecOk(lab.names.node, ['sysctl', '-q', '-w', 'net.ipv6.conf.all.forwarding=1']);
    await addPodIpv6(lab, 'client', V6.client, 1);
    await addPodIpv6(lab, 'web-1', V6.web1, 2);
  }, 120_000);
  afterAll(async () => {
    if (canRun) await labDown({ prefix: PREFIX });
  }, 60_000);

  it('nftables mode: table ip6 kube-proxy', async () => {
    await load(lab, ['nft', '-f', '-'], NFT_IP6);
    try {
      const c = await traceOnce(lab);
      const text = liveTraceText(c);
      expect(c.rows.length, text).toBeGreaterThan(3);
      expect(c.differences, text).toEqual([]);
      expect(c.rows.filter((r) => !r.same).map((r) => formatKernelEvent((r.kernel ?? r.nodescope)!)), text).toEqual([]);
      expect(text).toContain('ip6 kube-proxy');
      expect(text).toContain(`[${V6.web1}]:${TARGET}`);
      expect(text).not.toContain('net.ipv4.ip_forward');
      expect(c.walk?.verdict.kind, text).toBe('forwarded');
    } finally {
      await nsExec(lab.names.node, ['nft', 'delete', 'table', 'ip6', 'kube-proxy']);
    }
  }, 60_000);

  it('iptables mode: ip6tables KUBE-SERVICES → KUBE-SVC → KUBE-SEP', async () => {
    await load(lab, ['ip6tables-restore'], IP6TABLES);
    try {
      const c = await traceOnce(lab);
      const text = liveTraceText(c);
      expect(c.rows.length, text).toBeGreaterThan(3);
      expect(c.differences, text).toEqual([]);
      expect(c.rows.filter((r) => !r.same).map((r) => formatKernelEvent((r.kernel ?? r.nodescope)!)), text).toEqual([]);
      expect(text).toContain('KUBE-SEP-WEB1V6XXXXXXXXXX');
      expect(text).toContain(`[${V6.web1}]:${TARGET}`);
      expect(c.walk?.verdict.kind, text).toBe('forwarded');
    } finally {
      await nsExec(lab.names.node, ['ip6tables', '-t', 'nat', '-F']);
      await nsExec(lab.names.node, ['ip6tables', '-t', 'nat', '-X']);
    }
  }, 60_000);
});

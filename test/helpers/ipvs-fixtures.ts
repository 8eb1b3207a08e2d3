/**
 * An IPVS-mode node for the IPVS pane's tests: the lab iptables capture (whose kernel has
 * no IPVS) with the two ipvsadm listings of a kube-proxy IPVS node put in its place — the
 * `ipvsadm -Ln` listing (corpus: ipvs-mode-ipvsadm-ipset-kube-ipvs0.txt, extended with a
 * persistent ClientIP-affinity Service, an `sh` scheduler with flags, an empty Service and
 * an IPv6 one) and the matching `ipvsadm -Ln --stats --exact` counters.
 */
import type { IpvsListing } from '../../src/model/ipvs.js';
import type { NodeSnapshot, Parsed } from '../../src/model/snapshot.js';
import { parseIpvsadm } from '../../src/parsers/ipvsadm.js';
import { snapshotOf } from './fixtures.js';

/** `ipvsadm -Ln` of the IPVS node. */
export const IPVSADM_LN = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port Scheduler Flags
  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn
TCP  10.96.0.1:443 rr
  -> 192.168.191.153:6443         Masq    1      3          0
TCP  10.96.0.10:53 rr
  -> 192.168.185.1:53             Masq    1      0          0
  -> 192.168.185.3:53             Masq    1      0          0
TCP  10.100.49.21:80 rr persistent 10800
  -> 192.168.185.13:80            Masq    1      2          1
  -> 192.168.185.14:80            Masq    1      0          4
  -> 192.168.185.15:80            Masq    0      0          0
TCP  10.101.177.188:443 sh (sh-fallback,sh-port)
  -> 192.168.185.5:5443           Masq    1      1          1
  -> 192.168.185.6:5443           Masq    1      1          0
TCP  10.97.105.36:80 rr
UDP  10.96.0.10:53 rr
  -> 192.168.185.1:53             Masq    1      0          0
  -> 192.168.185.3:53             Masq    1      0          0
TCP  [fd00:10:96::a]:8080 wlc
  -> [fd00:10:244::5]:8080        Masq    1      0          0
`;

/** `ipvsadm -Ln --stats --exact` of the same node. */
export const IPVSADM_STATS = `IP Virtual Server version 1.2.1 (size=4096)
Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes
  -> RemoteAddress:Port
TCP  10.96.0.1:443                      41     9120     8833  1204113  5530211
  -> 192.168.191.153:6443               41     9120     8833  1204113  5530211
TCP  10.96.0.10:53                       0        0        0        0        0
  -> 192.168.185.1:53                    0        0        0        0        0
  -> 192.168.185.3:53                    0        0        0        0        0
TCP  10.100.49.21:80                    12      360      240    24640    21780
  -> 192.168.185.13:80                   6      180      120    12320    10890
  -> 192.168.185.14:80                   6      180      120    12320    10890
  -> 192.168.185.15:80                   0        0        0        0        0
TCP  10.101.177.188:443                  3       36       24     2464     2178
  -> 192.168.185.5:5443                  2       24       16     1642     1452
  -> 192.168.185.6:5443                  1       12        8      822      726
TCP  10.97.105.36:80                     0        0        0        0        0
UDP  10.96.0.10:53                    1523     1523     1523    98112   204811
  -> 192.168.185.1:53                  760      760      760    48960   102200
  -> 192.168.185.3:53                  763      763      763    49152   102611
TCP  [fd00:10:96::a]:8080                0        0        0        0        0
  -> [fd00:10:244::5]:8080               0        0        0        0        0
`;

function parsed(id: string, argv: string[], text: string): Parsed<IpvsListing> {
  const result = parseIpvsadm(text, id);
  const probe = { id, argv, status: 'ok' as const, exitCode: 0, startedAt: '2026-11-29T14:37:42.530Z', durationMs: 12, stderrTail: '', optional: true };
  return { value: result.value, diagnostics: result.diagnostics, probe, error: null };
}

/** The IPVS node: both listings (`list` and `stats` say which to keep; both by default). */
export async function ipvsSnapshot(listings: { list?: boolean; stats?: boolean } = {}): Promise<NodeSnapshot> {
  const base = await snapshotOf('lab-iptables');
  const list = listings.list === false ? null : parsed('ipvsadm', ['ipvsadm', '-Ln'], IPVSADM_LN);
  const stats = listings.stats === false ? null : parsed('ipvsadm-stats', ['ipvsadm', '-Ln', '--stats', '--exact'], IPVSADM_STATS);
  return { ...base, ipvs: stats ?? list, ...(stats && list ? { ipvsList: list } : {}) };
}

/**
 * `conntrack -L -o extended` output for a generated node: `count` flows whose reply
 * tuples come from the generated endpoints, chosen in proportion to the traffic model
 * ({@link generateTraffic}), printed by nodescope's own formatter of that layout
 * (`formatConntrackEntry`, libnetfilter_conntrack `__snprintf_conntrack_default`).
 *
 * Flows (conntrack's view of kube-proxy NAT, nf_conntrack_acct on):
 * - pod → ClusterIP: original `client → clusterIP:port`, reply `endpoint:targetPort → client`;
 * - node → ClusterIP (`fromHost`): the client is the node's address;
 * - outside → NodePort (`viaNodePort`): original `outside → nodeIP:nodePort`, reply to the
 *   node's address on a random port (MASQUERADE --random-fully);
 * - Cilium (`nat: false`): the socket LB rewrote the address before the packet existed, so
 *   conntrack sees `client → endpoint:targetPort` both ways, no NAT.
 * TCP flows are 60 % ESTABLISHED, 35 % TIME_WAIT, 5 % SYN_SENT [UNREPLIED]; UDP flows carry
 * the 30 s / 120 s (ASSURED) timeouts.
 */
import type { ConntrackEntry, ConntrackFlag, ConntrackTuple } from '../../src/model/conntrack.js';
import { formatConntrackEntry } from '../../src/parsers/conntrack-format.js';
import type { LabScenario } from '../../src/analysis/lab-scenario-types.js';
import { Rng } from './rng.js';
import type { PortTraffic } from './traffic.js';

/** Options: how many entries, and whether kube-proxy's NAT shows (false for Cilium's socket LB). */
export interface ConntrackOptions {
  readonly count: number;
  readonly seed: string;
  readonly nat: boolean;
}

interface Pick {
  readonly t: PortTraffic;
  readonly ep: number;
}

/** Cumulative weights over every (port, endpoint) pair, for weighted choice by binary search. */
class Picker {
  private readonly picks: Pick[] = [];
  private readonly cum: number[] = [];
  private total = 0;

  constructor(traffic: readonly PortTraffic[]) {
    for (const t of traffic) {
      t.perEndpoint.forEach((w, ep) => {
        this.total += w;
        this.picks.push({ t, ep });
        this.cum.push(this.total);
      });
    }
  }

  get empty(): boolean {
    return this.picks.length === 0;
  }

  pick(rng: Rng): Pick {
    const x = rng.next() * this.total;
    let lo = 0;
    let hi = this.cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cum[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return this.picks[lo]!;
  }
}

function tuple(src: string, dst: string, sport: number, dport: number, packets: number, bytes: number): ConntrackTuple {
  return { src, dst, sport, dport, packets: BigInt(packets), bytes: BigInt(bytes) };
}

/**
 * The text (one line per flow, newline-terminated; empty when there is no endpoint or
 * `count` is 0). Deterministic in `options.seed`.
 */
export function generateConntrack(scenario: LabScenario, traffic: readonly PortTraffic[], options: ConntrackOptions): string {
  const rng = new Rng(`${options.seed}/conntrack`);
  const picker = new Picker(traffic);
  if (picker.empty || options.count <= 0) return '';
  const clients = scenario.services.flatMap((s) => s.endpoints.map((e) => e.ip));
  const nodeIP = scenario.nodeIPs[0]!;
  const lines: string[] = [];
  for (let i = 0; i < options.count; i++) {
    const { t, ep } = picker.pick(rng);
    const endpoint = t.endpoints[ep]!;
    const via = rng.next() * t.total;
    const kind = via < t.viaNodePort ? 'nodeport' : via < t.viaNodePort + t.fromHost ? 'host' : 'pod';
    const client = kind === 'host' ? nodeIP : kind === 'nodeport' ? `192.168.${rng.int(100, 199)}.${rng.int(1, 254)}` : rng.pick(clients);
    const sport = rng.int(32768, 60999);
    const udp = t.port.protocol === 'udp';
    const roll = rng.next();
    const unreplied = !udp && roll >= 0.95;
    const outPackets = unreplied ? rng.int(1, 3) : rng.heavy(8);
    const backPackets = unreplied ? 0 : Math.max(1, Math.round(outPackets * (0.6 + rng.next())));
    const outBytes = outPackets * (udp ? 73 : 66) + rng.int(0, 400);
    const backBytes = backPackets === 0 ? 0 : backPackets * (udp ? 120 : 300) + rng.int(0, 4000);
    let orig: ConntrackTuple;
    let reply: ConntrackTuple;
    if (!options.nat) {
      orig = tuple(client, endpoint.ip, sport, endpoint.port, outPackets, outBytes);
      reply = tuple(endpoint.ip, client, endpoint.port, sport, backPackets, backBytes);
    } else if (kind === 'nodeport') {
      orig = tuple(client, nodeIP, sport, t.port.nodePort, outPackets, outBytes);
      reply = tuple(endpoint.ip, nodeIP, endpoint.port, rng.int(1024, 65535), backPackets, backBytes);
    } else {
      orig = tuple(client, t.port.clusterIP, sport, t.port.port.port, outPackets, outBytes);
      reply = tuple(endpoint.ip, client, endpoint.port, sport, backPackets, backBytes);
    }
    const flags: ConntrackFlag[] = unreplied ? ['UNREPLIED'] : udp && roll < 0.5 ? [] : ['ASSURED'];
    const entry: ConntrackEntry = {
      line: i + 1,
      raw: '',
      family: 'ipv4',
      proto: udp ? 'udp' : 'tcp',
      protoNum: udp ? 17 : 6,
      ...(udp
        ? { timeout: flags.length ? rng.int(60, 120) : rng.int(1, 30) }
        : unreplied
          ? { timeout: rng.int(1, 120), state: 'SYN_SENT' as const }
          : roll < 0.6
            ? { timeout: rng.int(400000, 431999), state: 'ESTABLISHED' as const }
            : { timeout: rng.int(1, 120), state: 'TIME_WAIT' as const }),
      orig,
      reply,
      flags,
      mark: 0,
      use: 1,
    };
    lines.push(formatConntrackEntry(entry, 'extended'));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Lab helpers for the stale-conntrack test (additive: nothing here changes the lab):
 * traffic whose client source port is known (HTTP with curl's `%{local_port}`, DNS from
 * a chosen UDP port), a DNS sender that keeps one UDP flow alive from a fixed port, the
 * replacement of a CoreDNS pod by one with a new IP in a new namespace, the reload of the
 * kube-proxy rules for the new endpoints WITHOUT touching conntrack (what kube-proxy's
 * stale-UDP-entry bugs leave behind), and reading the node through nodescope's own
 * probes.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import type { LabScenario, ScenarioPod } from '../../src/analysis/lab-scenario-types.js';
import { TransportError, tail } from '../../src/errors.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { LocalTransport } from '../../src/sources/local.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { nsExec, nsExecOk, run, runOk } from './exec.js';
import { caliName, type LabNames } from './names.js';
import { alive, labSpawn, stopProcess, waitUntil } from './processes.js';
import { labRulesText } from './rules.js';
import { endpointsFor } from './scenario.js';
import { dnsmasqArgs } from './servers.js';
import { readState, type LabProcess, type ProxyMode } from './state.js';
import { sysctl } from './topology.js';
import { dnsQuery } from './traffic.js';

/**
 * The UDP client: `node ct-udp.cjs once|loop HOST PORT SPORT HEX [INTERVAL_MS|TIMEOUT_MS]`.
 * Binds SPORT (0: any), sends the DNS query HEX to HOST:PORT.
 * - `once`: prints `{"sport":N,"from":"ip:port","rcode":N}` for the reply (exit 0), or
 *   `{"sport":N,"timeout":true}` (exit 2) after TIMEOUT_MS.
 * - `loop`: sends every INTERVAL_MS until killed; prints `{"bound":N}`, then one
 *   `{"t":ms,"sent":n}` / `{"t":ms,"from":"ip:port","rcode":N}` line per packet.
 */
const UDP_CLIENT_SOURCE = `'use strict';
const dgram = require('node:dgram');
const [, , mode, host, port, sport, hex, arg] = process.argv;
const payload = Buffer.from(hex, 'hex');
const s = dgram.createSocket('udp4');
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
s.on('error', (e) => { process.stderr.write(String(e) + '\\n'); process.exit(3); });
s.bind(Number(sport), () => {
  const bound = s.address().port;
  if (mode === 'once') {
    const timer = setTimeout(() => { out({ sport: bound, timeout: true }); process.exit(2); }, Number(arg || 2000));
    s.on('message', (m, r) => { clearTimeout(timer); out({ sport: bound, from: r.address + ':' + r.port, rcode: m[3] & 15 }); process.exit(0); });
    s.send(payload, Number(port), host);
    return;
  }
  out({ bound });
  let n = 0;
  s.on('message', (m, r) => out({ t: Date.now(), from: r.address + ':' + r.port, rcode: m[3] & 15 }));
  const send = () => { s.send(payload, Number(port), host); out({ t: Date.now(), sent: ++n }); };
  send();
  setInterval(send, Number(arg || 200));
  process.on('SIGTERM', () => process.exit(0));
});
`;

/** Writes the UDP client into the instance's state directory and returns its path. */
export function writeUdpClient(names: LabNames): string {
  const file = path.join(names.stateDir, 'ct-udp.cjs');
  writeFileSync(file, UDP_CLIENT_SOURCE);
  return file;
}

function queryHex(name: string, id: number): string {
  return dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name }] }).toString('hex');
}

/** One answered DNS query: the client's source port, the reply's source and DNS rcode (0 NOERROR, 3 NXDOMAIN). */
export interface UdpExchange {
  readonly sport: number;
  readonly from: string;
  readonly rcode: number;
}

/**
 * Asks `server:53` for `name` (A) from namespace `fromNs`, from UDP port `sport` (0: any).
 * Throws {@link TransportError} when no reply comes within `timeoutMs`.
 */
export async function dnsFromPort(names: LabNames, fromNs: string, server: string, name: string, sport = 0, timeoutMs = 2000): Promise<UdpExchange> {
  const argv = [process.execPath, writeUdpClient(names), 'once', server, '53', String(sport), queryHex(name, (sport || 4242) & 0xffff), String(timeoutMs)];
  const r = await nsExec(fromNs, argv, { timeoutMs: timeoutMs + 5000 });
  if (r.exitCode !== 0) throw new TransportError(`DNS ${name} @${server} from ${fromNs}:${sport}: ${r.stdout.trim() || r.stderr.trim()}`, `netns:${fromNs}`, argv, r.exitCode, tail(r.stderr));
  return JSON.parse(r.stdout) as UdpExchange;
}

/** Starts the `loop` client in `fromNs` from the fixed `sport`, sending every `intervalMs`. */
export async function startFixedPortSender(names: LabNames, fromNs: string, server: string, name: string, sport: number, intervalMs = 200): Promise<LabProcess> {
  const argv = [process.execPath, writeUdpClient(names), 'loop', server, '53', String(sport), queryHex(name, sport), String(intervalMs)];
  return labSpawn(names, 'ct-stale-sender', fromNs, argv);
}

/** What the `loop` client logged: send times and replies (`t`: ms since epoch). */
export interface SenderLog {
  readonly bound: number | null;
  readonly sent: readonly number[];
  readonly replies: readonly { readonly t: number; readonly from: string; readonly rcode: number }[];
}

/** Reads the log of a {@link startFixedPortSender} process. */
export async function senderLog(proc: LabProcess): Promise<SenderLog> {
  const text = (await run(['cat', proc.log])).stdout;
  let bound: number | null = null;
  const sent: number[] = [];
  const replies: { t: number; from: string; rcode: number }[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    const o = JSON.parse(line) as { bound?: number; t?: number; sent?: number; from?: string; rcode?: number };
    if (o.bound !== undefined) bound = o.bound;
    else if (o.sent !== undefined) sent.push(o.t ?? 0);
    else if (o.from !== undefined) replies.push({ t: o.t ?? 0, from: o.from, rcode: o.rcode ?? -1 });
  }
  return { bound, sent, replies };
}

/** One HTTP request as both ends saw it: the client's source port and the pod name the server answered. */
export interface HttpExchange {
  readonly sport: number;
  readonly pod: string;
}

/**
 * Sends `n` GETs to `url` from `fromNs` with one curl, each on a new connection
 * (`Connection: close`), returning per request the local port (curl `%{local_port}`) and
 * the body (a lab web server answers its pod name). Throws when a request failed.
 */
export async function httpExchanges(fromNs: string, url: string, n: number): Promise<HttpExchange[]> {
  const sep = '--ct-end:';
  const argv = ['curl', '-sS', '--max-time', '5', '-H', 'Connection: close', '-w', `${sep}%{local_port}:%{http_code}\n`];
  for (let i = 0; i < n; i++) argv.push(url);
  const r = await nsExecOk(fromNs, argv, { timeoutMs: n * 6000 + 5000 });
  const out: HttpExchange[] = [];
  let rest = r.stdout;
  for (let at = rest.indexOf(sep); at >= 0; at = rest.indexOf(sep)) {
    const end = rest.indexOf('\n', at);
    const [port, status] = rest.slice(at + sep.length, end).split(':');
    if (status !== '200') throw new Error(`GET ${url}: HTTP ${status}`);
    out.push({ sport: Number(port), pod: rest.slice(0, at).trim() });
    rest = rest.slice(end + 1);
  }
  if (out.length !== n) throw new Error(`GET ${url}: ${out.length} of ${n} answered`);
  return out;
}

/** The names a dnsmasq log (`--log-queries`) shows as asked by `client` (`query[A] NAME from IP`). */
export async function queriesSeen(logFile: string, client: string): Promise<string[]> {
  const text = (await run(['cat', logFile])).stdout;
  return [...text.matchAll(/query\[A\] (\S+) from (\S+)/g)].filter((m) => m[2] === client).map((m) => m[1]!);
}

/** The scenario with pod `key` given a new name and IP, and every Service's endpoints recomputed (the EndpointSlice controller's job). */
export function scenarioWithMovedPod(scenario: LabScenario, key: string, ip: string, name: string): LabScenario {
  const pods = scenario.pods.map((p) => (p.key === key ? { ...p, ip, name } : p));
  return {
    ...scenario,
    pods,
    services: scenario.services.map((s) => (s.endpoints.length === 0 ? s : { ...s, endpoints: endpointsFor(s.selector ?? {}, pods) })),
  };
}

/** A pod moved to a namespace of its own, outside the lab's names (so the test removes it). */
export interface MovedPod {
  readonly ns: string;
  readonly pod: ScenarioPod;
  readonly dns: LabProcess;
}

/**
 * Replaces DNS pod `oldPod` by `newPod` (same key, new name and IP) the way a rollout
 * does: its dnsmasq is stopped and its namespace (with its veth and the node's /32
 * route) deleted; a new namespace `ns` gets a Calico-style veth, the new IP and routes,
 * and a dnsmasq serving `scenario` on the new IP. Throws TransportError on failure.
 */
export async function replaceDnsPod(names: LabNames, scenario: LabScenario, oldPod: ScenarioPod, newPod: ScenarioPod, ns: string): Promise<MovedPod> {
  const oldProc = readState(names.stateDir)?.processes.find((p) => p.key === `dns-${oldPod.key}`);
  if (oldProc) await stopProcess(names, oldProc);
  await runOk(['ip', 'netns', 'del', names.pods[oldPod.key] ?? '']);
  const nodeNs = names.nodes[newPod.nodeName] ?? names.node;
  const cali = caliName(newPod);
  await runOk(['ip', 'netns', 'add', ns]);
  await runOk(['ip', '-n', ns, 'link', 'set', 'lo', 'up']);
  await runOk(['ip', '-n', nodeNs, 'link', 'add', cali, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  await runOk(['ip', '-n', nodeNs, 'link', 'set', cali, 'up']);
  await sysctl(nodeNs, { [`net.ipv4.conf.${cali}.proxy_arp`]: 1, [`net.ipv4.neigh.${cali}.proxy_delay`]: 0 });
  await runOk(['ip', '-n', nodeNs, 'route', 'add', `${newPod.ip}/32`, 'dev', cali, 'scope', 'link']);
  await runOk(['ip', '-n', ns, 'addr', 'add', `${newPod.ip}/32`, 'dev', 'eth0']);
  await runOk(['ip', '-n', ns, 'link', 'set', 'eth0', 'up']);
  await runOk(['ip', '-n', ns, 'route', 'add', '169.254.1.1', 'dev', 'eth0', 'scope', 'link']);
  await runOk(['ip', '-n', ns, 'route', 'add', 'default', 'via', '169.254.1.1', 'dev', 'eth0']);
  const dns = await labSpawn(names, `dns-${newPod.key}-moved`, ns, dnsmasqArgs(scenario, newPod.ip));
  await waitUntil(`DNS server of ${newPod.name}`, async () => {
    try {
      return (await dnsQuery(ns, `kube-dns.kube-system.svc.${scenario.clusterDomain}`, newPod.ip, { timeoutMs: 500 })).answers.length > 0;
    } catch {
      return false;
    }
  });
  return { ns, pod: newPod, dns };
}

/**
 * Removes a namespace made by {@link replaceDnsPod}: stops its dnsmasq (by pid, only
 * while that pid still lives in `ns`) and deletes the namespace. Safe when it is gone.
 */
export async function removeMovedPod(ns: string, dnsPid: number | null): Promise<void> {
  if (dnsPid !== null && alive(dnsPid)) {
    const where = await run(['ip', 'netns', 'identify', String(dnsPid)]);
    if (where.stdout.trim() === ns) {
      process.kill(dnsPid, 'SIGTERM');
      for (let i = 0; i < 40 && alive(dnsPid); i++) await new Promise((r) => setTimeout(r, 50));
    }
  }
  const list = await run(['ip', 'netns', 'list']);
  if (list.stdout.split('\n').some((l) => l.split(' ')[0] === ns)) await run(['ip', 'netns', 'del', ns]);
}

/**
 * Loads kube-proxy's rules for `scenario` into the node namespace as a rules sync would
 * — iptables-restore of the nat and filter tables, or one nft transaction replacing
 * `table ip kube-proxy` — and leaves conntrack alone (no `conntrack -F`, no `-D`).
 */
export async function reloadRulesKeepingConntrack(names: LabNames, scenario: LabScenario, mode: ProxyMode): Promise<void> {
  const file = path.join(names.stateDir, mode === 'iptables' ? 'rules-moved.iptables' : 'rules-moved.nft');
  const text = labRulesText(mode, scenario);
  writeFileSync(file, mode === 'iptables' ? text : `delete table ip kube-proxy\n${text}`);
  await nsExecOk(names.node, mode === 'iptables' ? ['iptables-restore', file] : ['nft', '-f', file]);
}

/** The probes the Conntrack pane needs. */
const PROBES = ['uname', 'ip-addr', 'conntrack', 'conntrack-count', 'conntrack-max'];

/**
 * Reads the node namespace with nodescope's own pipeline (LocalTransport in the netns,
 * the catalog's probes, buildSnapshot) with `apiText` as the API objects.
 */
export async function readNode(names: LabNames, apiText: string): Promise<NodeSnapshot> {
  const transport = new LocalTransport({ netns: names.node });
  const runs = await runProbes(transport, { ids: PROBES });
  const failed = runs.filter((r) => r.status !== 'ok');
  if (failed.length) throw new Error(`probes failed: ${failed.map((r) => `${r.id} ${r.status}: ${r.result.stderr.trim()}`).join('; ')}`);
  return buildSnapshot({ runs, apiText, source: { kind: transport.kind, label: transport.label, live: true }, capturedAt: runs[0]!.result.startedAt });
}

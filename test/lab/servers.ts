/**
 * The real servers of the lab's pods: a tiny Node HTTP server in each web pod (answers
 * with its pod name) and dnsmasq in each coredns pod (answers the scenario's
 * `*.svc.cluster.local` names), plus the small wire client the traffic helpers run
 * inside namespaces. Scripts are written to `/run/nodescope-lab/bin/` (no dependency on a
 * build), then started with {@link labSpawn}.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LabScenario, ScenarioPod } from '../../src/analysis/lab-scenario-types.js';
import { nsExec } from './exec.js';
import { LAB_STATE_ROOT, type LabNames } from './names.js';
import { labSpawn, waitUntil } from './processes.js';
import { dnsEndpointRecords, dnsRecords, dnsSrvRecords, type DnsRecord } from './scenario.js';
import type { LabProcess } from './state.js';

/** Directory of the helper scripts shared by all lab instances. */
export const LAB_BIN_DIR = path.join(LAB_STATE_ROOT, 'bin');

/**
 * HTTP server: `node http-server.cjs POD_NAME HOST PORT`. `GET /remote` answers the
 * client address it sees (`ip:port`, shows SNAT); any other path answers `POD_NAME\n`.
 * Every response carries `X-Pod-Name` and `X-Remote-Addr`.
 */
const HTTP_SERVER_SOURCE = `'use strict';
const http = require('node:http');
const [, , podName, host, port] = process.argv;
const server = http.createServer((req, res) => {
  const remote = req.socket.remoteAddress + ':' + req.socket.remotePort;
  res.setHeader('Content-Type', 'text/plain');
  res.setHeader('X-Pod-Name', podName);
  res.setHeader('X-Remote-Addr', remote);
  res.end((req.url === '/remote' ? remote : podName) + '\\n');
});
server.keepAliveTimeout = 1000;
server.listen(Number(port), host, () => console.log('listening on ' + host + ':' + port + ' as ' + podName));
process.on('SIGTERM', () => { server.close(); process.exit(0); });
`;

/**
 * Wire client: `node lab-wire.cjs udp|tcp HOST PORT HEX TIMEOUT_MS` sends the bytes and
 * prints `{"from":"ip:port","hex":"…"}` for the first reply (TCP: one length-prefixed DNS
 * message). Exit 2 on timeout, 3 on a socket error (message on stderr).
 */
const WIRE_CLIENT_SOURCE = `'use strict';
const dgram = require('node:dgram');
const net = require('node:net');
const [, , proto, host, port, hex, timeout] = process.argv;
const payload = Buffer.from(hex, 'hex');
const fail = (code, msg) => { process.stderr.write(msg + '\\n'); process.exit(code); };
const timer = setTimeout(() => fail(2, 'timeout'), Number(timeout || 2000));
const done = (from, buf) => { clearTimeout(timer); process.stdout.write(JSON.stringify({ from, hex: buf.toString('hex') })); process.exit(0); };
if (proto === 'udp') {
  const s = dgram.createSocket('udp4');
  s.on('error', (e) => fail(3, String(e)));
  s.on('message', (m, r) => done(r.address + ':' + r.port, m));
  s.send(payload, Number(port), host);
} else {
  const chunks = [];
  const sock = net.connect(Number(port), host, () => sock.write(payload));
  sock.on('data', (d) => {
    chunks.push(d);
    const b = Buffer.concat(chunks);
    if (b.length >= 2 && b.length >= 2 + b.readUInt16BE(0)) done(host + ':' + port, b);
  });
  sock.on('error', (e) => fail(3, String(e)));
}
`;

/** Writes the helper scripts (idempotent) and returns their paths. */
export function writeLabScripts(): { httpServer: string; wireClient: string } {
  mkdirSync(LAB_BIN_DIR, { recursive: true });
  const httpServer = path.join(LAB_BIN_DIR, 'http-server.cjs');
  const wireClient = path.join(LAB_BIN_DIR, 'lab-wire.cjs');
  writeIfChanged(httpServer, HTTP_SERVER_SOURCE);
  writeIfChanged(wireClient, WIRE_CLIENT_SOURCE);
  return { httpServer, wireClient };
}

/**
 * Removes the helper scripts and the lab root (`/run/nodescope-lab`) once no lab
 * instance is left (no other entry than `bin/` under the root): another prefix's
 * instance may still spawn them. Returns whether the scripts were removed.
 */
export function removeLabScriptsIfUnused(): boolean {
  let entries: string[];
  try {
    entries = readdirSync(LAB_STATE_ROOT);
  } catch {
    return false; // no root: nothing to remove
  }
  if (entries.some((e) => e !== 'bin')) return false;
  rmSync(LAB_BIN_DIR, { recursive: true, force: true });
  try {
    rmdirSync(LAB_STATE_ROOT);
  } catch {
    // An instance started meanwhile: its directory keeps the root.
  }
  return true;
}

// Another lab instance may be running the script right now: never truncate it in place.
function writeIfChanged(file: string, text: string): void {
  if (existsSync(file) && readFileSync(file, 'utf8') === text) return;
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

function podNs(names: LabNames, pod: ScenarioPod): string {
  const ns = names.pods[pod.key];
  if (ns === undefined) throw new Error(`BUG: no namespace for pod ${pod.key}`);
  return ns;
}

/** Starts the HTTP server of a web pod on `pod.ip:httpPort` and waits until it answers. */
export async function startWebServer(names: LabNames, pod: ScenarioPod): Promise<LabProcess> {
  const { httpServer } = writeLabScripts();
  const ns = podNs(names, pod);
  const port = pod.httpPort ?? 8080;
  const proc = await labSpawn(names, `http-${pod.key}`, ns, [process.execPath, httpServer, pod.name, pod.ip, String(port)]);
  await waitUntil(`HTTP server of ${pod.name}`, async () => {
    const r = await nsExec(ns, ['curl', '-sS', '--max-time', '1', `http://${pod.ip}:${port}/`]);
    return r.exitCode === 0 && r.stdout.trim() === pod.name;
  });
  return proc;
}

/**
 * Extra records for the lab's DNS servers (tests that need more than the scenario):
 * `records` are added; `overrides` replace the scenario's addresses of a name (a stale or
 * wrong record); `cnames` are CNAME records (an ExternalName Service; dnsmasq answers a
 * CNAME only when it knows the target, so give the target a record too).
 */
export interface LabDnsExtras {
  readonly records?: readonly DnsRecord[];
  readonly overrides?: readonly DnsRecord[];
  readonly cnames?: readonly { readonly name: string; readonly target: string }[];
}

/**
 * dnsmasq arguments serving the scenario's records: A records for every Service name
 * (headless → endpoint IPs, plus each endpoint's own name), SRV for named ports (CoreDNS's
 * priority and weight), NXDOMAIN for any other name under the cluster domain, TTL 5 s
 * (CoreDNS kubernetes plugin default), queries logged to stderr; then `extras`.
 */
export function dnsmasqArgs(scenario: LabScenario, listenIP: string, extras: LabDnsExtras = {}): string[] {
  const args = [
    'dnsmasq', '--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts',
    '--bind-interfaces', `--listen-address=${listenIP}`, '--port=53',
    `--local=/${scenario.clusterDomain}/`, '--local-ttl=5', '--log-queries', '--log-facility=-',
  ];
  const overridden = new Map((extras.overrides ?? []).map((r) => [r.name, r]));
  const records = [...dnsRecords(scenario), ...dnsEndpointRecords(scenario)].map((r) => overridden.get(r.name) ?? r);
  for (const rec of [...records, ...(extras.records ?? [])]) {
    for (const ip of rec.addresses) args.push(`--host-record=${rec.name},${ip}`);
  }
  for (const srv of dnsSrvRecords(scenario)) args.push(`--srv-host=${srv.name},${srv.target},${srv.port},${srv.priority},${srv.weight}`);
  for (const c of extras.cnames ?? []) args.push(`--cname=${c.name},${c.target}`);
  return args;
}

/** Starts dnsmasq in a dns pod (with `extras`); `ready` resolves once it answers on `pod.ip:53`. */
export async function startDnsServer(
  names: LabNames,
  pod: ScenarioPod,
  scenario: LabScenario,
  ready: (ns: string, ip: string) => Promise<boolean>,
  extras: LabDnsExtras = {},
): Promise<LabProcess> {
  const ns = podNs(names, pod);
  const proc = await labSpawn(names, `dns-${pod.key}`, ns, dnsmasqArgs(scenario, pod.ip, extras));
  await waitUntil(`DNS server of ${pod.name}`, () => ready(ns, pod.ip));
  return proc;
}

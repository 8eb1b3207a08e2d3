/**
 * Finds English words left in a Japanese frame. A word is a run of Latin letters (with
 * `-`, `_`, `'` inside); it is allowed when it is a proper term (the allow-list below:
 * netfilter, nft and iptables words, kube-proxy and Cilium names, conntrack fields,
 * units, product names), when it carries its own marks as an identifier does (a digit,
 * `_`, an inner `-`, or upper case after the first letter: `KUBE-SEP-…`, `cali573a…`,
 * `TIME_WAIT`, `IPv4`), or when the data itself holds it (`dataWords`: every word of the
 * capture's files, so a Service name, a kube-proxy comment or a tool's stderr is data, not
 * a sentence of ours). Everything else is English that reached the screen.
 */

import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fixtureDir } from './fixtures.js';

/** Proper terms that stay as they are in Japanese text. */
export const PROPER_TERMS: ReadonlySet<string> = new Set(
  [
    // netfilter hooks, tables, verdicts, nft/iptables words
    'prerouting', 'input', 'forward', 'output', 'postrouting', 'ingress', 'egress',
    'filter', 'nat', 'mangle', 'raw', 'security', 'ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev',
    'accept', 'drop', 'reject', 'return', 'jump', 'goto', 'continue', 'queue', 'counter', 'log',
    'dnat', 'snat', 'masquerade', 'redirect', 'notrack', 'to', 'meta', 'ct', 'state', 'mark', 'daddr', 'saddr',
    'dport', 'sport', 'th', 'l4proto', 'iif', 'oif', 'iifname', 'oifname', 'fib', 'type', 'numgen', 'random', 'mod',
    'vmap', 'map', 'set', 'table', 'chain', 'hook', 'priority', 'policy', 'comment', 'handle', 'flags', 'elements',
    'fully-random', 'random-fully', 'persistent', 'statistic', 'mode', 'probability', 'nth', 'every', 'packet',
    'tcp', 'udp', 'sctp', 'icmp', 'icmpv6', 'icmpx', 'syn', 'ack', 'fin', 'rst', 'psh', 'urg',
    'new', 'established', 'related', 'invalid', 'untracked', 'ctstate', 'recent', 'physdev', 'addrtype',
    'to-destination', 'to-source', 'to-ports', 'reject-with', 'set-xmark', 'xor-mark', 'or-mark', 'dst-type', 'src-type',
    'port-unreachable', 'icmp-port-unreachable', 'tcp-reset', 'connection', 'refused',
    'iptables', 'ip6tables', 'nftables', 'nft', 'ipvs', 'ipvsadm', 'ipset', 'conntrack', 'bpftool', 'lo', 'eth',
    // conntrack fields (conntrack -L)
    'src', 'dst', 'packets', 'bytes', 'use', 'zone', 'id', 'code',
    // Kubernetes and kube-proxy words
    'kube-proxy', 'kubernetes', 'kubectl', 'pod', 'pods', 'service', 'node', 'endpoint', 'endpoints',
    'ready', 'serving', 'terminating', 'iTP', 'eTP', 'kube-dns', 'kube-system', 'default', 'coredns',
    'cluster', 'local', 'external', 'host', 'none', 'nodescope', 'trace', 'show', 'capture', 'tour', 'dig', 'diagnose',
    'kubelet', 'corefile',
    // Cilium names and struct fields
    'cilium', 'cilium-dbg', 'cilium-agent', 'bpf', 'ebpf', 'xdp', 'tc', 'lxc', 'socket', 'lb', 'kpr',
    'address', 'port', 'proto', 'scope', 'ext', 'int', 'count', 'qcount', 'algorithm', 'undef', 'maglev', 'active',
    'non-routable', 'key', 'backend', 'backends', 'services', 'frontend', 'slot', 'connect', 'sendmsg', 'recvmsg',
    'getpeername', 'cookie', 'envoy', 'dsr', 'socketLB', 'hostNamespaceOnly', 'loadBalancer', 'acceleration',
    // DNS words
    'dev', 'via', 'net', 'netfilter', 'dash', 'list', 'global', 'Proxy', 'ipMode', 'true', 'false', 'status', 'replacement', 'proxy-replacement',
    'dns', 'cname', 'srv', 'nxdomain', 'noerror', 'servfail', 'nodata', 'svc', 'ndots', 'search', 'nameserver', 'options',
    // `ip addr`, the command named in a message
    'addr',
    // units, keys and product names
    'ms', 'kib', 'mib', 'gib', 'tib', 'b', 'k', 'm', 'g', 'pps', 'esc', 'enter', 'space', 'tab', 'shift', 'ctrl',
    'api', 'nat', 'vip', 'cidr', 'ipv4', 'ipv6', 'json', 'yaml', 'kep', 'debian', 'linux',
  ].map((w) => w.toLowerCase()),
);

/** Upper-case words that are names in their field (targets, states, hooks, protocols, acronyms). */
export const CAPS_TERMS: ReadonlySet<string> = new Set([
  'ACCEPT', 'DROP', 'REJECT', 'DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'RETURN', 'MARK', 'NOTRACK', 'CT', 'LOG', 'QUEUE',
  'NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED', 'ASSURED', 'UNREPLIED', 'SEEN_REPLY',
  'PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING', 'LOCAL', 'UNICAST', 'BROADCAST', 'MULTICAST', 'ANY',
  'TCP', 'UDP', 'SCTP', 'ICMP', 'IP', 'SYN', 'ACK', 'FIN', 'RST', 'L4', 'L7',
  'DNS', 'API', 'IPVS', 'LB', 'NAT', 'VIP', 'CIDR', 'BPF', 'XDP', 'ID', 'KPR', 'DSR', 'ICMPX', 'IPSET',
  'A', 'AAAA', 'SRV', 'CNAME', 'PTR', 'NXDOMAIN', 'NOERROR', 'NODATA', 'SERVFAIL', 'REFUSED', 'TTL', 'EHOSTUNREACH', 'ENETUNREACH',
  'KUBE', 'CILIUM', 'EP', 'KEP', 'CPU', 'UTC', 'JSON', 'YAML', 'SSH', 'TUI', 'CLI', 'ICMPV6',
]);

/** True when `word` reads as an identifier rather than an English word (not for all-caps words). */
function identifierLike(word: string): boolean {
  return /[0-9_]/.test(word) || /[A-Za-z]-[A-Za-z]/.test(word) || /^.[a-z]*[A-Z]/.test(word);
}

/** Every word of `text` (Latin letter runs, inner `-_'` kept). */
export function latinWords(text: string): string[] {
  return text.match(/[A-Za-z][A-Za-z0-9_'-]*[A-Za-z0-9_]|[A-Za-z]/g) ?? [];
}

/** Text inside double quotes on a line (a kube-proxy comment, an upstream message quoted as it is). */
function quotedSpans(line: string): [number, number][] {
  const spans: [number, number][] = [];
  for (const m of line.matchAll(/"[^"]*"?/g)) spans.push([m.index, m.index + m[0].length]);
  return spans;
}

/**
 * True when the word at `at` in `line` is part of a command, path, flag or identifier:
 * it stands after `-`, `/`, `.`, `_`, `:`, `{`, `@`, `=` or before `/`, `.x`, `_`, `=`, `(`
 * (`--stats`, `resolv.conf`, `:svc`, `cilium_lb{4,6}_reverse…`, `src=`, `connect()`).
 */
function inIdentifier(line: string, at: number, word: string): boolean {
  const before = line[at - 1] ?? ' ';
  const after = line.slice(at + word.length, at + word.length + 2);
  return /[-/._:{@=]/.test(before) || /^(\/|\.[A-Za-z0-9]|_|=|\()/.test(after);
}

/** Whether `fragment` is the start (or end) of a longer allowed word: a word cut by `…` or by a line's edge. */
function allowedPrefix(fragment: string, pool: readonly string[], side: 'start' | 'end'): boolean {
  const f = fragment.toLowerCase();
  return pool.some((w) => w.length > f.length && (side === 'start' ? w.startsWith(f) : w.endsWith(f)));
}

/**
 * The English words of `frame`, with the line each stands on. Skipped: single letters (keys
 * such as `q`, `n`), hex byte pairs of a map entry, words inside double quotes, words of a
 * command, path or flag ({@link inIdentifier}), and a word cut by `…` that begins (or, after
 * `…`, ends) an allowed word. An all-caps word passes only as one of {@link CAPS_TERMS} or
 * as the data writes it (`dataWords` holds words in their case); any other word passes as a
 * proper term, an identifier, or a word of the data in any case.
 */
export function englishLeft(frame: string, dataWords: ReadonlySet<string>): { word: string; line: string }[] {
  const lowerData = new Set([...dataWords].map((w) => w.toLowerCase()));
  const pool = [...lowerData, ...PROPER_TERMS, ...[...CAPS_TERMS].map((w) => w.toLowerCase())];
  const out: { word: string; line: string }[] = [];
  for (const line of frame.split('\n')) {
    const quoted = quotedSpans(line);
    for (const m of line.matchAll(/[A-Za-z][A-Za-z0-9_'-]*[A-Za-z0-9_]|[A-Za-z]/g)) {
      const word = m[0];
      const at = m.index;
      if (word.length === 1 || /^[0-9a-f]{2}$/.test(word)) continue;
      if (quoted.some(([a, b]) => at > a && at < b)) continue;
      if (inIdentifier(line, at, word)) continue;
      if (line[at + word.length] === '…' && allowedPrefix(word, pool, 'start')) continue;
      if (line[at - 1] === '…' && allowedPrefix(word, pool, 'end')) continue;
      // A raw line wrapped by cells (a conntrack entry) cuts a word at the line's edge.
      if (/[a-z]/.test(word) && line.trimEnd().endsWith(word) && allowedPrefix(word, pool, 'start')) continue;
      if (/[a-z]/.test(word) && line.trimStart().startsWith(word) && allowedPrefix(word, pool, 'end')) continue;
      const caps = /^[A-Z][A-Z-]+$/.test(word) && !/-/.test(word);
      if (caps ? CAPS_TERMS.has(word) || dataWords.has(word) : PROPER_TERMS.has(word.toLowerCase()) || lowerData.has(word.toLowerCase()) || identifierLike(word)) continue;
      out.push({ word, line });
    }
  }
  return out;
}

/** Every word of capture `capture`'s files (api.json, manifest, probes, extra): what the node, the API and the DNS server wrote is data, not our English. */
export function captureWords(capture: string): Set<string> {
  const dir = fixtureDir(capture);
  const files = ['api.json', 'manifest.json', ...readdirSync(path.join(dir, 'probes')).map((f) => path.join('probes', f))];
  if (readdirSync(dir).includes('extra')) files.push(...readdirSync(path.join(dir, 'extra')).map((f) => path.join('extra', f)));
  const out = new Set<string>();
  for (const f of files) for (const w of latinWords(readFileSync(path.join(dir, f), 'utf8'))) out.add(w);
  return out;
}

/** Every word of every file under `dir` (a fleet bundle: its manifest, API objects and each node's bundle). */
export function treeWords(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const f = path.join(d, name);
      if (statSync(f).isDirectory()) walk(f);
      else for (const w of latinWords(readFileSync(f, 'utf8'))) out.add(w);
    }
  };
  walk(dir);
  return out;
}

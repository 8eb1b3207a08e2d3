import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatConntrackEntry, formatConntrackTable, parseConntrack } from '../../src/parsers/conntrack.js';
import { plainConntrackTuple, type ConntrackEntry, type ConntrackStyle } from '../../src/model/conntrack.js';
import { entryStart } from '../../src/parsers/conntrack-line.js';
import { conntrackCorpusDir, content, makeEntry, makeTuple } from './conntrack-builders.js';

/**
 * Real lines printed on this project's lab kernel (6.x, conntrack-tools 1.4.7,
 * nf_conntrack_acct=1, nf_conntrack_timestamp=1) by `conntrack -L -o extended`,
 * `-o extended,id,ktimestamp`, `-E -o timestamp,extended,id` and
 * `cat /proc/net/nf_conntrack`, with their layout.
 */
const LAB_LINES: readonly (readonly [ConntrackStyle, string])[] = [
  ['extended', 'ipv4     2 udp      17 29 src=10.123.0.1 dst=10.96.0.50 sport=36062 dport=53 packets=1 bytes=30 src=10.123.0.2 dst=10.123.0.1 sport=5353 dport=36062 packets=1 bytes=31 mark=0 delta-time=0 use=1'],
  ['extended', 'ipv4     2 tcp      6 119 TIME_WAIT src=10.123.0.1 dst=10.96.0.50 sport=60344 dport=80 packets=5 bytes=268 src=10.123.0.2 dst=10.123.0.1 sport=8080 dport=60344 packets=4 bytes=219 [ASSURED] mark=0 delta-time=0 [start=Sun Nov 29 14:23:31 2026] use=1 id=2037672278'],
  ['proc', 'ipv4     2 tcp      6 119 TIME_WAIT src=10.123.0.1 dst=10.96.0.50 sport=60344 dport=80 packets=5 bytes=268 src=10.123.0.2 dst=10.123.0.1 sport=8080 dport=60344 packets=4 bytes=219 [ASSURED] mark=0 zone=0 delta-time=0 use=2'],
  ['extended', 'ipv6     10 tcp      6 119 TIME_WAIT src=fd00::1 dst=fd00::2 sport=44024 dport=9090 packets=5 bytes=368 src=fd00::2 dst=fd00::1 sport=9090 dport=44024 packets=4 bytes=299 [ASSURED] mark=0 delta-time=0 use=1'],
  ['proc', 'ipv6     10 tcp      6 119 TIME_WAIT src=fd00:0000:0000:0000:0000:0000:0000:0001 dst=fd00:0000:0000:0000:0000:0000:0000:0002 sport=44024 dport=9090 packets=5 bytes=368 src=fd00:0000:0000:0000:0000:0000:0000:0002 dst=fd00:0000:0000:0000:0000:0000:0000:0001 sport=9090 dport=44024 packets=4 bytes=299 [ASSURED] mark=0 zone=0 delta-time=0 use=2'],
  ['extended', '[1795962233.909669]\t    [NEW] ipv4     2 tcp      6 120 SYN_SENT src=10.123.0.1 dst=10.96.0.50 sport=59404 dport=80 [UNREPLIED] src=10.123.0.2 dst=10.123.0.1 sport=8080 dport=59404 id=3146820930'],
  ['extended', '[1795962233.926662]\t[DESTROY] ipv4     2 tcp      6 119 TIME_WAIT src=10.123.0.1 dst=10.96.0.50 sport=59404 dport=80 packets=5 bytes=268 src=10.123.0.2 dst=10.123.0.1 sport=8080 dport=59404 packets=4 bytes=219 [ASSURED] delta-time=0 id=3146820930 [USERSPACE] portid=2634133997'],
  ['conntrack', ' [UPDATE] tcp      6 432000 ESTABLISHED src=10.123.0.1 dst=10.96.0.50 sport=59404 dport=80 src=10.123.0.2 dst=10.123.0.1 sport=8080 dport=59404 [ASSURED]'],
];

const CORPUS_STYLE: Readonly<Record<string, ConntrackStyle>> = {
  'aks-conntrack-L-dns-dnat-3-nodes.txt': 'conntrack',
  'conntrack-E-events-syn-recv.txt': 'conntrack',
  'conntrack-L-tcp-udp-icmp-real.txt': 'conntrack',
  'proc-nf-conntrack-real-lines.txt': 'proc',
};

/** Table entries and `-E` events (kept apart by the parser) in line order. */
function linesOf(r: ReturnType<typeof parseConntrack>): ConntrackEntry[] {
  return [...r.value.entries, ...(r.value.events ?? [])].sort((a, b) => a.line - b.line);
}

function parseOne(text: string): ConntrackEntry {
  const r = parseConntrack(text, 'round-trip');
  expect(r.diagnostics).toEqual([]);
  expect(linesOf(r)).toHaveLength(1);
  return linesOf(r)[0]!;
}

describe('format(parse(line)) is the line, byte for byte', () => {
  it.each(LAB_LINES)('%s: %s', (style, line) => {
    expect(formatConntrackEntry(parseOne(line), style)).toBe(line);
  });

  const dir = conntrackCorpusDir();
  it.skipIf(dir === undefined)('for every entry of the corpus (after a `cat -n` prefix)', () => {
    let checked = 0;
    for (const [file, style] of Object.entries(CORPUS_STYLE)) {
      const r = parseConntrack(readFileSync(path.join(dir!, file), 'utf8'), file);
      for (const e of linesOf(r)) {
        expect(formatConntrackEntry(e, style)).toBe(e.raw.slice(entryStart(e.raw).numbered ? entryStart(e.raw).start : 0));
        checked++;
      }
    }
    expect(checked).toBe(18);
  });
});

/** Entries covering every field; the kernel's /proc layout cannot carry all of them. */
const VARIANTS: readonly (readonly [string, ConntrackEntry, boolean])[] = [
  ['default tcp', makeEntry(), true],
  ['udp unreplied with counters', makeEntry({
    proto: 'udp', protoNum: 17, timeout: 29, state: undefined, flags: ['UNREPLIED'],
    orig: makeTuple({ src: '10.0.0.1', dst: '10.0.0.10', sport: 5000, dport: 53, packets: 1n, bytes: 60n }),
    reply: makeTuple({ src: '10.0.0.10', dst: '10.0.0.1', sport: 53, dport: 5000, packets: 0n, bytes: 0n }),
  }), true],
  ['icmp with id', makeEntry({
    proto: 'icmp', protoNum: 1, state: undefined, id: 77,
    orig: makeTuple({ src: '10.0.0.1', dst: '10.0.0.2', icmpType: 8, icmpCode: 0, icmpId: 9 }),
    reply: makeTuple({ src: '10.0.0.2', dst: '10.0.0.1', icmpType: 0, icmpCode: 0, icmpId: 9 }),
  }), false],
  ['icmpv6 on ipv6', makeEntry({
    family: 'ipv6', proto: 'icmpv6', protoNum: 58, state: undefined, flags: [],
    orig: makeTuple({ src: 'fd00::1', dst: 'fd00:10:96::a', icmpType: 128, icmpCode: 0, icmpId: 1 }),
    reply: makeTuple({ src: 'fd00:10:96::a', dst: 'fd00::1', icmpType: 129, icmpCode: 0, icmpId: 1 }),
  }), true],
  ['gre', makeEntry({
    proto: 'gre', protoNum: 47, state: undefined,
    orig: makeTuple({ src: '10.0.0.1', dst: '10.0.0.2', srcKey: 0, dstKey: 0xabc }),
    reply: makeTuple({ src: '10.0.0.2', dst: '10.0.0.1', srcKey: 0xabc, dstKey: 0 }),
  }), true],
  ['unknown protocol', makeEntry({
    proto: 'unknown', protoNum: 112, state: undefined, flags: [],
    orig: makeTuple({ src: '10.0.0.1', dst: '224.0.0.18' }), reply: makeTuple({ src: '224.0.0.18', dst: '10.0.0.1' }),
  }), true],
  ['sctp with zones', makeEntry({
    proto: 'sctp', protoNum: 132, state: 'COOKIE_ECHOED', zone: 5,
    orig: makeTuple({ src: '10.0.0.1', dst: '10.0.0.2', sport: 1, dport: 2, zone: 1 }),
    reply: makeTuple({ src: '10.0.0.2', dst: '10.0.0.1', sport: 2, dport: 1, zone: 2 }),
  }), true],
  ['offloaded', makeEntry({ timeout: undefined, flags: ['OFFLOAD'] }), true],
  ['hw offloaded, unreplied', makeEntry({ timeout: undefined, flags: ['UNREPLIED', 'HW_OFFLOAD'] }), true],
  ['kernel-side extras', makeEntry({ secctx: 'system_u:object_r:unlabeled_t:s0', deltaTime: 12345, mark: 0x4000, use: 2 }), true],
  ['tool-only fields', makeEntry({
    secmark: 3, helper: 'ftp', id: 4000000000, labels: ['a', 'b'], start: 'Thu Jan  1 00:00:00 1970', stop: 'Thu Jan  1 00:01:00 1970',
  }), false],
  ['event with time and userspace', makeEntry({
    event: 'DESTROY', eventTime: '1795962233.926662', mark: undefined, use: undefined,
    userspace: { portid: 12, progname: 'kube-proxy' },
  }), false],
  ['extra fields', makeEntry({ extra: [{ key: 'Service', value: 'slb.test' }, { key: 'WORD' }, { key: '[ODD]' }] }), true],
];

describe('parse(format(x)) equals x', () => {
  it.each(VARIANTS)('%s, in the conntrack and extended layouts', (_name, entry) => {
    for (const style of ['conntrack', 'extended'] as const) {
      const text = formatConntrackEntry(entry, style);
      const r = parseConntrack(text, 'rt');
      expect(linesOf(r)).toHaveLength(1);
      expect(content(linesOf(r)[0]!)).toEqual(content(entry));
      expect(r.diagnostics.every((d) => d.code === 'unknown-field')).toBe(true);
    }
  });

  it.each(VARIANTS.filter(([, , proc]) => proc))('%s, in the /proc layout', (_name, entry) => {
    const text = formatConntrackEntry(entry, 'proc');
    expect(content(linesOf(parseConntrack(text, 'rt'))[0]!)).toEqual(content(entry));
  });

  it('drops what the kernel never prints when formatting for /proc', () => {
    const tool = VARIANTS.find(([n]) => n === 'tool-only fields')![1];
    const back = parseOne(formatConntrackEntry(tool, 'proc'));
    for (const field of ['secmark', 'helper', 'id', 'labels', 'start', 'stop'] as const) expect(back[field]).toBeUndefined();
    expect(plainConntrackTuple(back.orig)).toEqual(plainConntrackTuple(tool.orig));
  });

  it('a whole table formats and parses back to the same entries', () => {
    const entries = VARIANTS.map(([, e], i) => ({ ...e, line: i + 1 }));
    const table = { entries: entries.filter((e) => e.event === undefined), events: entries.filter((e) => e.event !== undefined), trailers: [] };
    expect(table.events.length).toBeGreaterThan(0);
    const text = formatConntrackTable(table, 'extended');
    const back = linesOf(parseConntrack(text, 'table'));
    expect(back.map(content)).toEqual(entries.map(content));
    expect(back.map((e) => e.line)).toEqual(entries.map((e) => e.line));
  });
});

/**
 * The conntrack fast path (src/parsers/conntrack-fast.ts) changes nothing but speed
 * and memory: on generated captures (bench/gen, what `npm run gen` writes) and on
 * lines built to sit at its edges, `parseConntrack` and `parseConntrackStream` (fast
 * path, compact entries) give exactly the values the general line parser gives
 * (`parseConntrackGeneral`, plain entries) — every field of every entry including
 * `raw`, diagnostics, trailers — the fast path really takes the common lines, and the
 * parsed table holds no part of the capture text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { plainConntrackEntry, type ConntrackTable } from '../../src/model/conntrack.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import { conntrackAddressIds } from '../../src/model/conntrack-ids.js';
import {
  formatConntrackEntry,
  parseConntrack,
  parseConntrackGeneral,
  parseConntrackStream,
} from '../../src/parsers/conntrack.js';
import { CompactConntrackEntry, CompactConntrackEntryWithExtras } from '../../src/parsers/conntrack-compact.js';
import { parseConntrackFast } from '../../src/parsers/conntrack-fast.js';
import { ConntrackInterner } from '../../src/parsers/conntrack-scan.js';
import { cutsInPlace } from '../../src/parsers/conntrack-columns.js';
import { conntrackRows } from '../../src/model/conntrack-ids.js';
import { conntrackCorpusDir, ctLine } from './conntrack-builders.js';

const corpus = conntrackCorpusDir();

/** A parse result with every entry as plain data (`plainConntrackEntry`: all values, `raw` included). */
function plain(r: ParseResult<ConntrackTable>) {
  const events = r.value.events?.map(plainConntrackEntry);
  return { ...r, value: { ...r.value, entries: r.value.entries.map(plainConntrackEntry), ...(events ? { events } : {}) } };
}

/** What the general parser alone gives for `text`, as plain data. */
function reference(text: string) {
  return plain(parseConntrackGeneral(text, 'ct'));
}

/** `text` through the stream parser in line-aligned chunks of about `size` characters (as the staged load feeds it). */
async function streamed(text: string, size: number) {
  const chunks: string[] = [];
  for (let pos = 0; pos < text.length; ) {
    let end = text.indexOf('\n', Math.min(text.length, pos + size));
    end = end < 0 ? text.length : end + 1;
    chunks.push(text.slice(pos, end));
    pos = end;
  }
  return parseConntrackStream(chunks, 'ct');
}

function generated(seed: string, mode: 'iptables' | 'cilium', conntrack: number): string {
  const world = generateWorld({ services: 40, endpoints: 3, seed, modes: [mode], conntrack });
  return modeOutputs(world, mode).get('conntrack')!;
}

describe('conntrack fast path', () => {
  it.each([
    ['s9', 'iptables', 3000],
    ['s9', 'cilium', 3000],
    ['fast-2', 'iptables', 3000],
    // 3,100 of 4,096 slots: the builder cuts its columns as views, not copies (cutsInPlace).
    ['s9', 'iptables', 3100],
  ] as const)('equals the general parser on a generated capture (seed %s, %s, %i flows)', async (seed, mode, flows) => {
    expect(cutsInPlace(flows, 4096)).toBe(flows > 3072);
    const text = generated(seed, mode, flows);
    const fast = parseConntrack(text, 'ct');
    expect(fast.value.entries.length).toBeGreaterThan(0);
    const want = reference(text);
    expect(plain(fast)).toStrictEqual(want);
    // The four address-id columns name each entry's addresses (read before the entries, in place).
    const rows = conntrackRows(fast.value);
    const { addresses, origSrc, origDst, replySrc, replyDst } = rows.ids;
    expect([origSrc.length, origDst.length, replySrc.length, replyDst.length]).toEqual(Array(4).fill(rows.length));
    const named = fast.value.entries.map((e, i) => [addresses[origSrc[i]!], addresses[origDst[i]!], addresses[replySrc[i]!], addresses[replyDst[i]!]]);
    expect(named).toEqual(fast.value.entries.map((e) => [e.orig.src, e.orig.dst, e.reply.src, e.reply.dst]));
    expect(plain(await streamed(text, 4096))).toStrictEqual(want);
    // The round trip through the formatter gives back the printed line.
    for (const e of fast.value.entries.slice(0, 200)) expect(formatConntrackEntry(e, 'extended')).toBe(e.raw);
  });

  it('takes every line of a generated capture, and keeps no text for lines printed as the formatter prints them', () => {
    const lines = generated('s9', 'iptables', 500).split('\n').filter((l) => l !== '');
    const interner = new ConntrackInterner();
    const taken = lines.map((l, i) => parseConntrackFast(l, 0, l.length, i + 1, interner));
    expect(taken.every((e) => e instanceof CompactConntrackEntry)).toBe(true);
    // mark=0 use=1 and a canonical line: nothing beyond the header and the tuples.
    expect(taken.filter((e) => e instanceof CompactConntrackEntryWithExtras)).toEqual([]);
    expect(taken.map((e) => e!.raw)).toEqual(lines);
  });
  // Lines at the edges of what the fast path accepts: each must parse as the general parser does.
  const edges: Record<string, string> = {
    plain: ctLine(),
    extended: ctLine({ l3: 'ipv4     2' }),
    v6: ctLine({ l3: 'ipv6     10', orig: 'src=fd00::9 dst=fd00:0:0:0:0:0:0:34 sport=1 dport=2', reply: 'src=fd00::31 dst=fd00::9 sport=3 dport=1' }),
    'v6 prefix on v4 addresses': ctLine({ l3: 'ipv6     10' }),
    'wrong l3 number': ctLine({ l3: 'ipv4     10' }),
    counters: ctLine({ afterOrig: 'packets=3 bytes=180', afterReply: 'packets=2 bytes=99999999 [ASSURED] mark=0 use=1' }),
    'packets alone': ctLine({ afterOrig: 'packets=3' }),
    'huge counter': ctLine({ afterOrig: 'packets=18446744073709551615 bytes=18446744073709551616' }),
    unreplied: ctLine({ head: 'tcp      6 119 SYN_SENT', afterOrig: '[UNREPLIED]', afterReply: 'mark=0 use=1' }),
    'unreplied late': ctLine({ afterReply: '[UNREPLIED] mark=0 use=1' }),
    'assured early': ctLine({ afterOrig: '[ASSURED]' }),
    'two flags': ctLine({ afterReply: '[ASSURED] [OFFLOAD] mark=0 use=1' }),
    meta: ctLine({ afterReply: '[ASSURED] mark=7 secmark=3 zone=2 delta-time=44 use=1 id=4294967295' }),
    'meta out of order': ctLine({ afterReply: '[ASSURED] use=1 mark=7' }),
    'duplicate mark': ctLine({ afterReply: '[ASSURED] mark=1 mark=2 use=1' }),
    'unknown field': ctLine({ afterReply: '[ASSURED] mark=0 frob=1 use=1' }),
    'mark too big': ctLine({ afterReply: '[ASSURED] mark=4294967296 use=1' }),
    'port too big': ctLine({ orig: 'src=10.244.0.9 dst=10.96.12.34 sport=65536 dport=80' }),
    'port with letters': ctLine({ orig: 'src=10.244.0.9 dst=10.96.12.34 sport=12x dport=80' }),
    'bad address': ctLine({ orig: 'src=10.244.0.256 dst=10.96.12.34 sport=1 dport=80' }),
    'mixed families': ctLine({ orig: 'src=fd00::1 dst=10.96.12.34 sport=1 dport=80' }),
    'proto mismatch': ctLine({ head: 'tcp      17 30 ESTABLISHED' }),
    udp: ctLine({ head: 'udp      17 30', afterReply: 'mark=0 use=1' }),
    icmp: ctLine({ head: 'icmp     1 29', orig: 'src=10.0.0.1 dst=10.0.0.2 type=8 code=0 id=7', reply: 'src=10.0.0.2 dst=10.0.0.1 type=0 code=0 id=7' }),
    'unknown state': ctLine({ head: 'tcp      6 10 WEIRD' }),
    'no timeout': ctLine({ head: 'tcp      6 ESTABLISHED' }),
    zones: ctLine({ afterOrig: 'zone-orig=1', afterReply: 'zone-reply=2 [ASSURED] use=1' }),
    tabs: ctLine().replaceAll(' ', '\t'),
    'trailing blanks': `${ctLine()}  \t`,
    crlf: `${ctLine()}\r`,
    'double cr': `${ctLine()}\r\r`,
    'leading blank': ` ${ctLine()}`,
    numbered: `     7\t${ctLine()}`,
    truncated: ctLine().slice(0, 90),
    'no reply': ctLine({ reply: '', afterReply: '' }),
    'third tuple': `${ctLine()} src=1.1.1.1`,
    event: ctLine({ prefix: '    [NEW]' }),
    labels: ctLine({ afterReply: '[ASSURED] mark=0 use=1 labels=a,b' }),
    'summary inside': `${ctLine().slice(0, 50)}conntrack v1.4.7 (conntrack-tools): 1 flow entries have been shown.\n${ctLine().slice(50)}`,
    nul: `${ctLine()}\u0000`,
    // Not what the formatter prints: the entry keeps its text.
    'two spaces': ctLine().replace(' dst=', '  dst='),
    'short padding': ctLine({ head: 'tcp 6 431999 ESTABLISHED' }),
    'leading zero port': ctLine({ orig: 'src=10.244.0.9 dst=10.96.12.34 sport=051286 dport=80' }),
    'leading zero counter': ctLine({ afterOrig: 'packets=03 bytes=180' }),
    'leading zero timeout': ctLine({ head: 'tcp      6 0431999 ESTABLISHED' }),
    'leading zero octet': ctLine({ orig: 'src=10.244.0.09 dst=10.96.12.34 sport=1 dport=80' }),
    'v6 expanded, no prefix': ctLine({ orig: 'src=fd00:0000:0000:0000:0000:0000:0000:0009 dst=fd00::34 sport=1 dport=2', reply: 'src=fd00::31 dst=fd00::9 sport=3 dport=1' }),
    'v6 upper case': ctLine({ l3: 'ipv6     10', orig: 'src=FD00::9 dst=fd00::34 sport=1 dport=2', reply: 'src=fd00::31 dst=fd00::9 sport=3 dport=1' }),
    'v6 /proc with id': ctLine({ l3: 'ipv6     10', orig: 'src=fd00:0000:0000:0000:0000:0000:0000:0009 dst=fd00:0000:0000:0000:0000:0000:0000:0034 sport=1 dport=2', reply: 'src=fd00:0000:0000:0000:0000:0000:0000:0031 dst=fd00:0000:0000:0000:0000:0000:0000:0009 sport=3 dport=1', afterReply: '[ASSURED] mark=0 use=1 id=9' }),
    // What the formatter prints, with values held outside the header.
    'v6 /proc': ctLine({ l3: 'ipv6     10', orig: 'src=fd00:0000:0000:0000:0000:0000:0000:0009 dst=fd00:0000:0000:0000:0000:0000:0000:0034 sport=1 dport=2', reply: 'src=fd00:0000:0000:0000:0000:0000:0000:0031 dst=fd00:0000:0000:0000:0000:0000:0000:0009 sport=3 dport=1' }),
    'v6 full groups': ctLine({ l3: 'ipv6     10', orig: 'src=fd00:1111:2222:3333:4444:5555:6666:7777 dst=fd00::34 sport=1 dport=2', reply: 'src=fd00::31 dst=fd00:1111:2222:3333:4444:5555:6666:7777 sport=3 dport=1' }),
    'udplite padding': ctLine({ head: 'udplite  136 30', afterReply: 'mark=0 use=1' }),
    'mark and use not inline': ctLine({ afterReply: '[ASSURED] mark=3221225472 use=6' }),
    'no mark, use 5': ctLine({ afterReply: '[ASSURED] use=5' }),
    'bytes above 2^20, packets above 2^11': ctLine({ afterOrig: 'packets=2048 bytes=1048576', afterReply: 'packets=2047 bytes=1048575 [ASSURED] mark=0 use=1' }),
    'counters above 2^53': ctLine({ afterOrig: 'packets=9007199254740993 bytes=18446744073709551615' }),
    'ports at 65535': ctLine({ orig: 'src=10.244.0.9 dst=10.96.12.34 sport=65535 dport=65535', reply: 'src=10.244.0.31 dst=10.244.0.9 sport=32768 dport=0' }),
    'timeout above 2^31': ctLine({ head: 'tcp      6 4294967295 ESTABLISHED' }),
  };

  it.each(Object.entries(edges))('parses the edge case %s as the general parser does', async (_name, line) => {
    const text = `${ctLine()}\n${line}\n${ctLine({ head: 'udp      17 30' , afterReply: 'use=1' })}\n`;
    const want = reference(text);
    expect(plain(parseConntrack(text, 'ct'))).toStrictEqual(want);
    expect(plain(await parseConntrackStream(text.split('\n').slice(0, -1), 'ct'))).toStrictEqual(want);
    expect(plain(await streamed(text, 1))).toStrictEqual(want);
  });

  it('equals the general parser past its table of entry kinds (more than 1024 combinations)', () => {
    const lines: string[] = [];
    for (const [proto, states] of [['tcp      6', ['ESTABLISHED', 'TIME_WAIT', 'SYN_SENT', 'CLOSE', 'FIN_WAIT', 'LAST_ACK']], ['sctp     132', ['ESTABLISHED', 'CLOSED', 'COOKIE_WAIT']], ['dccp     33', ['OPEN', 'REQUEST']]] as const) {
      for (const state of states) {
        for (const flags of ['', '[ASSURED] ', '[OFFLOAD] ', '[HW_OFFLOAD] ']) {
          for (const use of [1, 2, 3, 4, 5]) {
            for (const l3 of ['', 'ipv4     2']) {
              for (const mark of ['mark=0 ', '']) {
                lines.push(ctLine({ l3, head: `${proto} 120 ${state}`, afterReply: `${flags}${mark}use=${use}` }));
                lines.push(ctLine({ l3, head: `${proto} ${state}`, afterOrig: '[UNREPLIED]', afterReply: `${flags}${mark}use=${use}` }));
              }
            }
          }
        }
      }
    }
    // Every line is a different kind (state, flags, mark, use, layout, unreplied or not).
    expect(lines.length).toBeGreaterThan(1024 + 512);
    const text = lines.join('\n');
    const fast = parseConntrack(text, 'ct');
    expect(plain(fast)).toStrictEqual(reference(text));
    // Past the table, the kind is kept with the entry.
    expect(fast.value.entries.filter((e) => e instanceof CompactConntrackEntryWithExtras).length).toBeGreaterThan(512);
  });

  it('keeps the text only of lines the formatter would not print that way', () => {
    const kept = (line: string) => {
      const e = parseConntrackFast(line, 0, line.length, 1, new ConntrackInterner());
      expect(e).toBeInstanceOf(CompactConntrackEntry);
      return e instanceof CompactConntrackEntryWithExtras && (e as unknown as { x: { raw?: string } }).x.raw !== undefined;
    };
    for (const name of ['plain', 'extended', 'counters', 'unreplied', 'meta', 'udp', 'no timeout', 'v6 /proc', 'v6 full groups', 'udplite padding', 'ports at 65535']) {
      expect([name, kept(edges[name]!)]).toEqual([name, false]);
    }
    for (const name of ['v6', 'tabs', 'trailing blanks', 'two spaces', 'short padding', 'leading zero port', 'leading zero counter', 'leading zero timeout', 'leading zero octet', 'v6 expanded, no prefix', 'v6 upper case', 'v6 /proc with id']) {
      expect([name, kept(edges[name]!)]).toEqual([name, true]);
    }
  });

  it('gives tuples a stable identity, shares flag arrays, and serialises as plain data', () => {
    const text = [ctLine(), ctLine({ afterOrig: 'packets=2 bytes=9', afterReply: 'packets=1 bytes=5000000 [ASSURED] mark=7 use=1' })].join('\n');
    const [a, b] = parseConntrack(text, 'ct').value.entries;
    expect(a).toBeInstanceOf(CompactConntrackEntry);
    expect(a!.orig).toBe(a!.orig);
    expect(a!.reply).toBe(a!.reply);
    expect(a!.flags).toBe(b!.flags);
    expect(Object.isFrozen(a!.flags)).toBe(true);
    const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
    for (const e of [a!, b!]) {
      expect(JSON.parse(json(e))).toEqual(JSON.parse(json(plainConntrackEntry(e))));
      expect(JSON.parse(json(e.orig))).toEqual(JSON.parse(json(plainConntrackEntry(e).orig)));
    }
    expect(JSON.parse(json(b)).reply).toEqual({ src: '10.244.0.31', dst: '10.244.0.9', sport: 8080, dport: 51286, packets: '1n', bytes: '5000000n' });
  });

  it('keeps no part of the capture text once parsed', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A capture of ~4 MB read as Node reads a file: an external string outside the JS heap.
    const lines = generated('mem', 'iptables', 16000).split('\n');
    const odd = lines.map((l, i) => (i % 7 === 0 ? l.replace(' dst=', '  dst=') : l)).join('\n');
    const external = () => {
      gc();
      gc();
      return process.memoryUsage().external;
    };
    const parseText = (how: 'string' | 'general') => {
      const text = Buffer.from(odd, 'latin1').toString('latin1');
      return how === 'string' ? parseConntrack(text, 'ct') : parseConntrackGeneral(text, 'ct');
    };
    const before = external();
    const kept = [parseText('string'), parseText('general')];
    const after = external();
    expect(kept.every((r) => r.value.entries.length === 16000)).toBe(true);
    expect(odd.length).toBeGreaterThan(3_000_000);
    // Two captures of 3+ MB each were read; less than one is left (the rest of Node's buffers move a little)
    // beside each table's columns (typed arrays, external memory: src/parsers/conntrack-columns.ts):
    // line, kind, two ports, two counters and four address ids per entry.
    expect(kept.every((r) => conntrackAddressIds(r.value.entries).origSrc.length === 16000)).toBe(true);
    const columns = 2 * 16000 * 10 * 4;
    expect(after - before - columns).toBeLessThan(1_000_000);
  });
});

describe.skipIf(corpus === undefined)('conntrack fast path on shared/corpus/conntrack', () => {
  const files = corpus === undefined ? [] : readdirSync(corpus).filter((f) => f.endsWith('.txt'));
  it.each(files)('%s parses as the general parser reads it', async (file) => {
    const text = readFileSync(path.join(corpus!, file), 'utf8');
    const fast = parseConntrack(text, file);
    expect(fast.value.entries.length + (fast.value.events?.length ?? 0)).toBeGreaterThan(0);
    const want = plain(parseConntrackGeneral(text, file));
    expect(plain(fast)).toStrictEqual(want);
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    expect(plain(await parseConntrackStream(lines, file))).toStrictEqual(want);
  });
});

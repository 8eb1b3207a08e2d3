/**
 * The conntrack fast path (src/parsers/conntrack-fast.ts) changes nothing but speed:
 * on generated captures (bench/gen, what `npm run gen` writes) and on lines built to
 * sit at its edges, `parseConntrack` (fast path) gives exactly what the line-by-line
 * general parser gives (`parseConntrackStream`, which never takes the fast path) —
 * entries, diagnostics, trailers — and the fast path really takes the common lines.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { parseConntrack, parseConntrackStream, formatConntrackEntry } from '../../src/parsers/conntrack.js';
import { parseConntrackFast } from '../../src/parsers/conntrack-fast.js';
import { ConntrackInterner } from '../../src/parsers/conntrack-scan.js';
import { conntrackCorpusDir, ctLine } from './conntrack-builders.js';

const corpus = conntrackCorpusDir();

/** The general parser's result for the same text (one line at a time, no fast path). */
async function reference(text: string) {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return parseConntrackStream(lines, 'ct');
}

function generated(seed: string, mode: 'iptables' | 'cilium', conntrack: number): string {
  const world = generateWorld({ services: 40, endpoints: 3, seed, modes: [mode], conntrack });
  return modeOutputs(world, mode).get('conntrack')!;
}

describe('conntrack fast path', () => {
  it.each([
    ['s9', 'iptables'],
    ['s9', 'cilium'],
    ['fast-2', 'iptables'],
  ] as const)('equals the general parser on a generated capture (seed %s, %s)', async (seed, mode) => {
    const text = generated(seed, mode, 3000);
    const fast = parseConntrack(text, 'ct');
    expect(fast.value.entries.length).toBeGreaterThan(0);
    expect(fast).toStrictEqual(await reference(text));
    // The round trip through the formatter gives back the printed line.
    for (const e of fast.value.entries.slice(0, 200)) expect(formatConntrackEntry(e, 'extended')).toBe(e.raw);
  });

  it('takes every line of a generated capture', () => {
    const lines = generated('s9', 'iptables', 500).split('\n').filter((l) => l !== '');
    const interner = new ConntrackInterner();
    const taken = lines.filter((l, i) => parseConntrackFast(l, 0, l.length, i + 1, interner) !== undefined);
    expect(taken.length).toBe(lines.length);
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
  };

  it.each(Object.entries(edges))('parses the edge case %s as the general parser does', async (_name, line) => {
    const text = `${ctLine()}\n${line}\n${ctLine({ head: 'udp      17 30' , afterReply: 'use=1' })}\n`;
    expect(parseConntrack(text, 'ct')).toStrictEqual(await reference(text));
  });
});

describe.skipIf(corpus === undefined)('conntrack fast path on shared/corpus/conntrack', () => {
  const files = corpus === undefined ? [] : readdirSync(corpus).filter((f) => f.endsWith('.txt'));
  it.each(files)('%s parses as the general parser reads it', async (file) => {
    const text = readFileSync(path.join(corpus!, file), 'utf8');
    const fast = parseConntrack(text, file);
    expect(fast.value.entries.length).toBeGreaterThan(0);
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    expect(fast).toStrictEqual(await parseConntrackStream(lines, file));
  });
});

/**
 * The conntrack parse on bytes (`parseConntrackBytes` over `readFileLineChunks`,
 * src/parsers/conntrack-bytes.ts and conntrack.ts) changes nothing but speed: it gives exactly
 * what `parseConntrackReference` (the string fast path with lookups one by one), today's
 * `parseConntrackStream` over `readFilePieces` (the load's string read) and the general
 * parser give — every entry (`raw` included), diagnostics, trailers, the address list, the
 * four id columns, `idOf` on every address, the JSON text and the classification — on the lab
 * captures, the corpus, generated captures (columns as views and as copies, reserved from the
 * file size or grown), and odd lines and bytes mixed into them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs, writeModeBundle } from '../../bench/gen/capture.js';
import { classifyConntrackRows } from '../../src/analysis/conntrack-classify.js';
import { conntrackTargets } from '../../src/analysis/conntrack-index.js';
import { chunksOfPieces } from '../../src/collect/chunks.js';
import { plainConntrackEntry, type ConntrackTable } from '../../src/model/conntrack.js';
import { conntrackRows } from '../../src/model/conntrack-ids.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import { CONNTRACK_BYTES_ROW, readConntrackBytes } from '../../src/parsers/conntrack-bytes.js';
import { lastConntrackFastLine, lastConntrackFastQueuedIds, readConntrackFast } from '../../src/parsers/conntrack-fast.js';
import { parseConntrackBytes, parseConntrackGeneral, parseConntrackReference, parseConntrackStream, type ConntrackBytesOptions } from '../../src/parsers/conntrack.js';
import { ConntrackInterner } from '../../src/parsers/conntrack-scan.js';
import { readFileLineChunks, readFilePieces } from '../../src/sources/bundle.js';
import { loadSnapshot, Session } from '../../src/collect/session.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { FlowFilteredReplay } from '../../src/sources/replay-flows.js';
import { fixtureDir, snapshotOfDir } from '../helpers/fixtures.js';
import { conntrackCorpusDir, ctLine } from './conntrack-builders.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tmpFile(bytes: Uint8Array): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ct-bytes-'));
  dirs.push(dir);
  const file = path.join(dir, 'conntrack.stdout');
  writeFileSync(file, bytes);
  return file;
}

/** Every value of a parse: entries and events as plain data, the rows' address list and id columns. */
function everything(r: ParseResult<ConntrackTable>) {
  const rows = conntrackRows(r.value);
  const { addresses, origSrc, origDst, replySrc, replyDst } = rows.ids;
  const events = r.value.events?.map(plainConntrackEntry);
  return {
    diagnostics: r.diagnostics,
    value: { ...r.value, entries: r.value.entries.map(plainConntrackEntry), ...(events ? { events } : {}) },
    addresses: [...addresses],
    ids: [[...origSrc], [...origDst], [...replySrc], [...replyDst]],
    idOf: addresses.map((a) => rows.ids.idOf(a)),
  };
}

/** The JSON text of `value`, counters (bigints) as decimal text. */
function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** `bytes` in line-aligned chunks of about `size` bytes (each a view of one reused buffer, as the file reader gives them). */
function* byteChunks(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  const reused = new Uint8Array(bytes.length);
  for (let pos = 0; pos < bytes.length; ) {
    let end = bytes.indexOf(10, Math.min(bytes.length, pos + size));
    end = end < 0 ? bytes.length : end + 1;
    reused.fill(0);
    reused.set(bytes.subarray(pos, end));
    yield reused.subarray(0, end - pos);
    pos = end;
  }
}

/**
 * The byte parse of `bytes` (from the file in small and default chunks, and in memory with and
 * without the size) equals the reference on the text the load's string reader makes of the
 * same file, in every value and the JSON text; the entries equal the general parser's.
 */
async function expectSameAsReference(bytes: Uint8Array, options: ConntrackBytesOptions = {}) {
  const file = tmpFile(bytes);
  const text = [...readFilePieces(file)].join('');
  const ref = parseConntrackReference(text, 'ct');
  const want = everything(ref);
  const got = await parseConntrackBytes(readFileLineChunks(file), 'ct', { totalBytes: bytes.length, ...options });
  expect(everything(got)).toStrictEqual(want);
  expect(jsonText(got.value)).toBe(jsonText(ref.value));
  expect(everything(await parseConntrackBytes(readFileLineChunks(file, 64), 'ct', { totalBytes: bytes.length }))).toStrictEqual(want);
  expect(everything(await parseConntrackBytes(byteChunks(bytes, 4096), 'ct'))).toStrictEqual(want);
  expect(everything(await parseConntrackStream(chunksOfPieces(readFilePieces(file, 4096), 4096), 'ct'))).toStrictEqual(want);
  const general = parseConntrackGeneral(text, 'ct');
  expect(general.value.entries.map(plainConntrackEntry)).toStrictEqual(want.value.entries);
  expect(general.diagnostics).toStrictEqual(want.diagnostics);
  return got;
}

const utf8 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));

function generated(seed: string, mode: 'iptables' | 'cilium', flows: number, services = 40): string {
  const world = generateWorld({ services, endpoints: 3, seed, modes: [mode], conntrack: flows });
  return modeOutputs(world, mode).get('conntrack')!;
}

// Lines the byte path must reject (the string path then reads them as the reference does), or take at an edge.
const ODD = [
  ctLine({ l3: 'ipv6     10', orig: 'src=fd00::9 dst=fd00:0:0:0:0:0:0:34 sport=1 dport=2', reply: 'src=fd00::31 dst=fd00::9 sport=3 dport=1' }),
  ctLine({ l3: 'ipv6     10', orig: 'src=fd00:0000:0000:0000:0000:0000:0000:0009 dst=fd00:0000:0000:0000:0000:0000:0000:0034 sport=1 dport=2', reply: 'src=fd00:0000:0000:0000:0000:0000:0000:0031 dst=fd00:0000:0000:0000:0000:0000:0000:0009 sport=3 dport=1' }),
  ctLine({ head: 'icmp     1 29', orig: 'src=10.77.0.1 dst=10.77.0.2 type=8 code=0 id=7', reply: 'src=10.77.0.2 dst=10.77.0.1 type=0 code=0 id=7' }),
  ctLine({ orig: 'src=10.78.0.1 dst=10.78.0.2 sport=1 dport=80', afterOrig: 'zone-orig=1', afterReply: 'zone-reply=2 [ASSURED] use=1' }),
  ctLine({ afterReply: '[ASSURED] mark=0 use=1 labels=a,b' }),
  ctLine({ afterReply: '[ASSURED] mark=0 zone=3 use=1' }),
  ctLine({ afterReply: '[ASSURED] mark=1 use=1' }),
  ctLine({ afterReply: '[ASSURED] mark=0 use=6' }),
  ctLine({ afterReply: '[ASSURED] mark=0 use=5' }),
  ctLine({ afterReply: '[ASSURED] mark=0 use=0' }),
  ctLine({ afterReply: '[ASSURED] mark=0' }),
  ctLine({ afterReply: '[ASSURED] use=1' }),
  ctLine({ afterReply: '' }),
  ctLine({ afterReply: 'mark=00 use=1' }),
  ctLine({ afterReply: '[ASSURED] mark=0 use=01' }),
  ctLine({ afterOrig: 'packets=18446744073709551615 bytes=9007199254740993', orig: 'src=10.79.0.1 dst=10.79.0.2 sport=1 dport=80' }),
  ctLine({ afterOrig: 'packets=2047 bytes=1048575', reply: 'src=10.79.1.3 dst=10.244.0.9 sport=8080 dport=51286 packets=2048 bytes=1' }),
  ctLine({ afterOrig: 'packets=1 bytes=1048576' }),
  ctLine({ afterOrig: 'packets=0 bytes=0', reply: 'src=10.79.2.3 dst=10.244.0.9 sport=8080 dport=51286 packets=07 bytes=1' }),
  ctLine({ afterOrig: 'packets=999999999999999 bytes=1' }),
  ctLine({ afterOrig: 'packets=1000000000000000 bytes=1' }),
  ctLine({ head: 'tcp      6 119 SYN_SENT', orig: 'src=10.80.0.1 dst=10.80.0.2 sport=1 dport=80', afterOrig: '[UNREPLIED]', reply: 'src=10.80.0.2 dst=10.80.0.1 sport=80 dport=1', afterReply: 'mark=0 use=1' }),
  ctLine({ afterReply: '[UNREPLIED] [ASSURED] mark=0 use=1' }),
  ctLine({ afterReply: '[OFFLOAD] mark=0 use=1' }),
  ctLine({ afterReply: '[HW_OFFLOAD] mark=0 use=1' }),
  ctLine({ afterReply: '[ASSURED] [OFFLOAD] mark=0 use=1' }),
  ctLine({ afterReply: '[BOGUS] mark=0 use=1' }),
  ctLine({ afterOrig: '[ASSURED]' }),
  ctLine({ afterReply: '[ASSURED] [OFFLOAD] mark=7 secmark=3 zone=2 delta-time=44 use=1 id=9' }),
  ctLine({ head: 'udp      17 29', orig: 'src=10.90.0.1 dst=10.90.0.2 sport=53 dport=53', reply: 'src=10.90.0.2 dst=10.90.0.1 sport=53 dport=53', afterReply: 'mark=0 use=1' }),
  ctLine({ head: 'udplite  136 29', orig: 'src=10.90.1.1 dst=10.90.1.2 sport=5 dport=5', reply: 'src=10.90.1.2 dst=10.90.1.1 sport=5 dport=5', afterReply: 'mark=0 use=1' }),
  ctLine({ head: 'sctp     132 10 ESTABLISHED', orig: 'src=10.90.2.1 dst=10.90.2.2 sport=5 dport=5', reply: 'src=10.90.2.2 dst=10.90.2.1 sport=5 dport=5' }),
  ctLine({ head: 'tcp      17 10 ESTABLISHED' }),
  ctLine({ head: 'tcp     6 10 ESTABLISHED' }),
  ctLine({ head: 'tcp      6 010 ESTABLISHED' }),
  ctLine({ head: 'tcp      6 4294967296 ESTABLISHED' }),
  ctLine({ head: 'tcp      6 ESTABLISHED' }),
  ctLine({ head: 'tcp      6 10' }),
  ctLine({ head: 'tcp      6 10 BOGUS' }),
  ctLine({ l3: 'ipv4     2' }),
  ctLine({ l3: 'ipv4 2' }),
  ctLine({ l3: 'ipv4     02' }),
  ctLine({ l3: 'ipv6     10' }),
  ctLine({ orig: 'src=10.244.0.9 dst=10.244.0.9 sport=1 dport=80', reply: 'src=10.244.0.9 dst=10.244.0.9 sport=80 dport=1' }),
  ctLine({ orig: 'src=10.81.0.1 dst=10.81.0.02 sport=1 dport=80', reply: 'src=10.81.0.3 dst=10.81.0.1 sport=80 dport=1' }),
  ctLine({ orig: 'src=10.81.1.1 dst=10.81.1.256 sport=1 dport=80' }),
  ctLine({ orig: 'src=10.82.0.1 dst=10.82.0.2 sport=12x dport=80' }),
  ctLine({ orig: 'src=10.82.1.1 dst=10.82.1.2 sport=080 dport=80' }),
  ctLine({ orig: 'src=10.82.2.1 dst=10.82.2.2 sport=65536 dport=80' }),
  ctLine({ orig: 'src=10.82.3.1  dst=10.82.3.2 sport=1 dport=80' }),
  ctLine({ orig: 'src=10.83.0.1 dst=10.83.0.2 sport=1 dport=80', reply: 'src=fd00::83 dst=10.83.0.1 sport=80 dport=1' }),
  ctLine({ prefix: '    [NEW]', orig: 'src=10.84.0.1 dst=10.84.0.2 sport=1 dport=80' }),
  `     7\t${ctLine({ orig: 'src=10.84.1.1 dst=10.84.1.2 sport=1 dport=80' })}`,
  ctLine().slice(0, 90),
  `${ctLine({ orig: 'src=10.85.0.1 dst=10.85.0.2 sport=1 dport=80' }).slice(0, 50)}conntrack v1.4.7 (conntrack-tools): 1 flow entries have been shown.`,
  ctLine({ orig: 'src=10.85.0.1 dst=10.85.0.2 sport=1 dport=80' }).slice(50),
  `${ctLine({ orig: 'src=10.86.0.1 dst=10.86.0.2 sport=1 dport=80' })}\r`,
  `${ctLine({ orig: 'src=10.86.1.1 dst=10.86.1.2 sport=1 dport=80' })}\r\r`,
  `${ctLine({ orig: 'src=10.86.2.1 dst=10.86.2.2 sport=1 dport=80' })} `,
  `${ctLine({ orig: 'src=10.86.3.1 dst=10.86.3.2 sport=1 dport=80' })}\t`,
  ctLine({ orig: 'src=10.87.0.1 dst=10.87.0.2 sport=1 dport=80' }).replaceAll(' ', '\t'),
  `${ctLine({ orig: 'src=10.88.0.1 dst=10.88.0.2 sport=1 dport=80' })} é`,
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.89.0.1 dst=10.89.0.2 sport=1 dport=80 src=10.89.0.3 dst=10.89.0.1 sport=80 dport=1 [ASSURED] mark=0 use=1 \u00ff',
  'conntrack v1.4.7 (conntrack-tools): 3 flow entries have been shown.',
  'this is not conntrack',
  '',
];

// Bytes that are not UTF-8 (a lone continuation byte, a cut sequence, 0xff) and a NUL, each inside an otherwise common line.
const ODD_BYTES: readonly Uint8Array[] = [
  Buffer.concat([Buffer.from(ctLine({ orig: 'src=10.91.0.1 dst=10.91.0.2 sport=1 dport=80' })), Buffer.from([0x20, 0x80])]),
  Buffer.concat([Buffer.from(ctLine().slice(0, 60)), Buffer.from([0xe2, 0x82]), Buffer.from(ctLine().slice(60))]),
  Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(ctLine({ orig: 'src=10.91.1.1 dst=10.91.1.2 sport=1 dport=80' }))]),
  Buffer.concat([Buffer.from(ctLine().slice(0, 70)), Buffer.from([0]), Buffer.from(ctLine().slice(71))]),
];

/** `text`'s lines with the odd lines (and odd bytes) put in every `every` lines. */
function withOddLines(text: string, every: number, eol = '\n'): Uint8Array {
  const lines = text.split('\n');
  const out: Buffer[] = [];
  const all: readonly (string | Uint8Array)[] = [...ODD, ...ODD_BYTES];
  lines.forEach((l, i) => {
    out.push(Buffer.from(l + (i < lines.length - 1 ? eol : '')));
    if (i % every === every - 1 && i < lines.length - 1) {
      const odd = all[(i / every) % all.length | 0]!;
      out.push(Buffer.from(typeof odd === 'string' ? odd : odd), Buffer.from(eol));
    }
  });
  return new Uint8Array(Buffer.concat(out));
}

describe('conntrack parse on bytes', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('equals the reference on the lab capture %s', async (name) => {
    const bytes = new Uint8Array(readFileSync(path.join('fixtures', name, 'probes', 'conntrack.stdout')));
    const got = await expectSameAsReference(bytes);
    expect(conntrackRows(got.value).length).toBeGreaterThan(0);
  });

  it('equals it on the corpus', async () => {
    const dir = conntrackCorpusDir();
    if (dir === undefined) {
      console.log('skipped: no conntrack corpus (../shared/corpus) on this machine');
      return;
    }
    const files = readdirSync(dir).filter((f) => !f.endsWith('.md'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) await expectSameAsReference(new Uint8Array(readFileSync(path.join(dir, f))));
  });

  it.each([
    ['c1', 'iptables', 3000],
    ['c1', 'cilium', 3000],
    ['c1', 'iptables', 3100],
    // Several batches of queued lookups and several file chunks.
    ['c2', 'iptables', 12_500],
  ] as const)('equals it on a generated capture (seed %s, %s, %i flows)', async (seed, mode, flows) => {
    const bytes = utf8(generated(seed, mode, flows, 400));
    const got = await expectSameAsReference(bytes);
    expect(conntrackRows(got.value).length).toBe(flows);
  });

  it('equals it with the columns reserved too small, far too large, or grown (views and copies)', async () => {
    const bytes = utf8(generated('c3', 'iptables', 5000, 400));
    let counts = { lines: 0, columnAllocations: 0 };
    const onFinish = (c: typeof counts) => (counts = c);
    await expectSameAsReference(bytes, { onFinish });
    // Reserved once from the file's size (after the first chunk), never grown.
    expect(counts.columnAllocations).toBe(1);
    await expectSameAsReference(bytes, { totalBytes: bytes.length / 3, onFinish });
    expect(counts.columnAllocations).toBeGreaterThan(1);
    await expectSameAsReference(bytes, { totalBytes: bytes.length * 3, onFinish });
    expect(counts.columnAllocations).toBe(1);
    // Without the size the columns grow by doubling from 1,024.
    await parseConntrackBytes(readFileLineChunks(tmpFile(bytes)), 'ct', { onFinish });
    expect(counts.columnAllocations).toBe(3);
  });

  it('equals it with odd lines and bytes among the common ones (IPv6, icmp, zones, labels, mark, counters > 2^53, flags, cut lines, CRLF, tabs, non-ASCII, NUL)', async () => {
    const got = await expectSameAsReference(withOddLines(generated('c4', 'iptables', 9000, 400), 29));
    expect(got.diagnostics.length).toBeGreaterThan(0);
    await expectSameAsReference(withOddLines(generated('c5', 'cilium', 2000), 7, '\r\n'));
    // The odd lines alone, the last one cut (no `\n`).
    const alone = Buffer.concat([...ODD, ...ODD_BYTES].flatMap((l) => [Buffer.from(l), Buffer.from('\n')]));
    await expectSameAsReference(new Uint8Array(alone.subarray(0, alone.length - 40)));
  });

  it('equals it on an empty file, a header line alone, and a last line without its newline', async () => {
    await expectSameAsReference(new Uint8Array(0));
    await expectSameAsReference(utf8('conntrack v1.4.7 (conntrack-tools): 0 flow entries have been shown.\n'));
    await expectSameAsReference(utf8('\n\n'));
    await expectSameAsReference(utf8(`${ctLine()}\n${ctLine({ orig: 'src=10.92.0.1 dst=10.92.0.2 sport=1 dport=80' })}`));
  });

  it('reads a line longer than the file reader\'s buffer', async () => {
    const long = `${ctLine()} ${'x'.repeat(300)}\n${ctLine()}\n`;
    const file = tmpFile(utf8(long));
    const want = everything(parseConntrackReference(long, 'ct'));
    expect(everything(await parseConntrackBytes(readFileLineChunks(file, 32), 'ct'))).toStrictEqual(want);
  });

  it('takes the common lines from the bytes, with the string fast path\'s row', () => {
    const text = generated('c6', 'iptables', 2000, 400);
    const lines = text.split('\n').filter((l) => l !== '');
    let taken = 0;
    for (const line of lines) {
      const bytes = utf8(line);
      const a = new ConntrackInterner();
      const b = new ConntrackInterner();
      const ok = readConntrackBytes(bytes, 0, bytes.length, a);
      expect(readConntrackFast(line, 0, line.length, b, true)).toBe(true);
      if (!ok) continue;
      taken++;
      const { k, ports, counters } = lastConntrackFastLine();
      const row = CONNTRACK_BYTES_ROW;
      expect([row[0], row[1], row[2], row[3], row[4]]).toEqual([k, ports[0], ports[1], counters[0] ?? -1, counters[1] ?? -1]);
      expect([...row.subarray(5)]).toEqual([...lastConntrackFastQueuedIds()]);
      a.resolve();
      b.resolve();
      expect(a.texts).toEqual(b.texts);
    }
    // The generated capture's lines are all of the common shape.
    expect(taken).toBe(lines.length);
  });

  it.each(['iptables', 'cilium'] as const)('classifies a generated %s capture as the reference does', { timeout: 120_000 }, async (mode) => {
    const world = generateWorld({ services: 300, endpoints: 4, seed: 'bytes-cls', modes: [mode], conntrack: 8000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-bytes-cls-'));
    dirs.push(dir);
    writeModeBundle(world, mode, dir);
    const { services, nodeAddresses } = conntrackTargets(await snapshotOfDir(dir));
    const text = modeOutputs(world, mode).get('conntrack')!;
    const file = tmpFile(withOddLines(text, 53));
    const ref = [...readFilePieces(file)].join('');
    const got = classifyConntrackRows(conntrackRows((await parseConntrackBytes(readFileLineChunks(file), 'ct')).value), services, nodeAddresses);
    const want = classifyConntrackRows(conntrackRows(parseConntrackReference(ref, 'ct').value), services, nodeAddresses);
    expect(got.staleCount).toBe(want.staleCount);
    expect([...got.serviceOf]).toEqual([...want.serviceOf]);
    expect([...got.codeOf]).toEqual([...want.codeOf]);
    expect([...got.serviceOf].some((s) => s >= 0)).toBe(true);
  });

  it('is what a session over a replay reads: the file as bytes, its pieces never, the one-shot snapshot', async () => {
    const replay = new ReplayTransport(fixtureDir('lab-iptables'));
    const piecesRead: string[] = [];
    const transport = {
      kind: replay.kind,
      label: replay.label,
      exec: (argv: readonly string[], o: Parameters<ReplayTransport['exec']>[1]) => replay.exec(argv, o),
      execInPieces: async (argv: readonly string[], o: Parameters<ReplayTransport['exec']>[1]) => {
        const r = await replay.execInPieces(argv, o);
        const pieces = r.stdoutPieces;
        if (!pieces) return r;
        return { ...r, stdoutPieces: () => (piecesRead.push(argv.join(' ')), pieces()) };
      },
      close: async () => {},
    };
    const options = { transport, live: false, apiText: replay.apiText()! };
    const { snapshot: once } = await loadSnapshot(options);
    const session = new Session(options);
    await session.start();
    expect(piecesRead).not.toContain('conntrack -L -o extended');
    expect(piecesRead.length).toBeGreaterThan(0);
    expect(session.getState().snapshot).toEqual(once);
    expect(session.getState().snapshot?.conntrack?.value?.entries.length).toBeGreaterThan(0);
    await session.stop();
  });

  it('is not given the file of a flow-filtered replay (its pieces hold only the flows kept)', async () => {
    const dir = fixtureDir('lab-iptables');
    const plain = await new ReplayTransport(dir).execInPieces(['conntrack', '-L', '-o', 'extended'], { timeoutMs: 1000 });
    expect(plain.stdoutPath).toBeDefined();
    const filtered = await new FlowFilteredReplay(new ReplayTransport(dir).bundle, '10.244.1.5').execInPieces(['conntrack', '-L', '-o', 'extended'], { timeoutMs: 1000 });
    expect(filtered.stdoutPieces).toBeDefined();
    expect(filtered.stdoutPath).toBeUndefined();
  });
});

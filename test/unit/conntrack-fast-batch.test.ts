/**
 * The conntrack parse's batched address lookups (`ConntrackInterner.defer` / `resolve`,
 * src/parsers/conntrack-scan.ts; the column builder's `resolveIds`) change nothing but
 * speed: `parseConntrack` and `parseConntrackStream` give exactly what
 * `parseConntrackReference` (the fast path with its lookups made one by one, as before)
 * and the general parser give — every entry (`raw` included), diagnostics, trailers, the
 * address list, the four id columns, `idOf` on every address, the JSON text and the
 * classification — on the lab captures, the corpus, generated captures (columns as views
 * and as copies, several batches), and odd lines mixed into them.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs, writeModeBundle } from '../../bench/gen/capture.js';
import { classifyConntrackRows } from '../../src/analysis/conntrack-classify.js';
import { conntrackTargets } from '../../src/analysis/conntrack-index.js';
import { plainConntrackEntry, type ConntrackTable } from '../../src/model/conntrack.js';
import { conntrackRows } from '../../src/model/conntrack-ids.js';
import type { ParseResult } from '../../src/model/diagnostics.js';
import { parseConntrack, parseConntrackGeneral, parseConntrackReference, parseConntrackStream } from '../../src/parsers/conntrack.js';
import { cutsInPlace } from '../../src/parsers/conntrack-columns.js';
import { ConntrackInterner } from '../../src/parsers/conntrack-scan.js';
import { snapshotOfDir } from '../helpers/fixtures.js';
import { conntrackCorpusDir, ctLine } from './conntrack-builders.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

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

/** `text` in line-aligned chunks of about `size` characters, as the staged load feeds the stream parser. */
function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let pos = 0; pos < text.length; ) {
    let end = text.indexOf('\n', Math.min(text.length, pos + size));
    end = end < 0 ? text.length : end + 1;
    out.push(text.slice(pos, end));
    pos = end;
  }
  return out;
}

/** Batched (whole and streamed) equals the one-by-one reference in every value and the JSON text; the entries equal the general parser's. */
async function expectSameAsReference(text: string) {
  const want = everything(parseConntrackReference(text, 'ct'));
  const got = parseConntrack(text, 'ct');
  expect(everything(got)).toStrictEqual(want);
  expect(everything(await parseConntrackStream(chunks(text, 4096), 'ct'))).toStrictEqual(want);
  expect(jsonText(got.value)).toBe(jsonText(parseConntrackReference(text, 'ct').value));
  const general = parseConntrackGeneral(text, 'ct');
  expect(general.value.entries.map(plainConntrackEntry)).toStrictEqual(want.value.entries);
  expect(general.diagnostics).toStrictEqual(want.diagnostics);
  return got;
}

/** The JSON text of `value`, counters (bigints) as decimal text. */
function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

function generated(seed: string, mode: 'iptables' | 'cilium', flows: number, services = 40): string {
  const world = generateWorld({ services, endpoints: 3, seed, modes: [mode], conntrack: flows });
  return modeOutputs(world, mode).get('conntrack')!;
}

// Lines the fast path rejects, or reads with an address interned at once, among queued ones.
const ODD = [
  ctLine({ l3: 'ipv6     10', orig: 'src=fd00::9 dst=fd00:0:0:0:0:0:0:34 sport=1 dport=2', reply: 'src=fd00::31 dst=fd00::9 sport=3 dport=1' }),
  ctLine({ l3: 'ipv6     10', orig: 'src=fd00:0000:0000:0000:0000:0000:0000:0009 dst=fd00:0000:0000:0000:0000:0000:0000:0034 sport=1 dport=2', reply: 'src=fd00:0000:0000:0000:0000:0000:0000:0031 dst=fd00:0000:0000:0000:0000:0000:0000:0009 sport=3 dport=1' }),
  ctLine({ head: 'icmp     1 29', orig: 'src=10.77.0.1 dst=10.77.0.2 type=8 code=0 id=7', reply: 'src=10.77.0.2 dst=10.77.0.1 type=0 code=0 id=7' }),
  ctLine({ orig: 'src=10.78.0.1 dst=10.78.0.2 sport=1 dport=80', afterOrig: 'zone-orig=1', afterReply: 'zone-reply=2 [ASSURED] use=1' }),
  ctLine({ afterReply: '[ASSURED] mark=0 use=1 labels=a,b' }),
  ctLine({ afterOrig: 'packets=18446744073709551615 bytes=9007199254740993', orig: 'src=10.79.0.1 dst=10.79.0.2 sport=1 dport=80' }),
  ctLine({ head: 'tcp      6 119 SYN_SENT', orig: 'src=10.80.0.1 dst=10.80.0.2 sport=1 dport=80', afterOrig: '[UNREPLIED]', reply: 'src=10.80.0.2 dst=10.80.0.1 sport=80 dport=1', afterReply: 'mark=0 use=1' }),
  ctLine({ afterReply: '[UNREPLIED] [ASSURED] mark=0 use=1' }),
  ctLine({ afterReply: '[ASSURED] [OFFLOAD] mark=7 secmark=3 zone=2 delta-time=44 use=1 id=9' }),
  // A canonical address queued, then one with a leading zero numbered at once: order kept.
  ctLine({ orig: 'src=10.81.0.1 dst=10.81.0.02 sport=1 dport=80', reply: 'src=10.81.0.3 dst=10.81.0.1 sport=80 dport=1' }),
  // Rejected after its first addresses were queued (the general parser then reads them).
  ctLine({ orig: 'src=10.82.0.1 dst=10.82.0.2 sport=12x dport=80' }),
  ctLine({ orig: 'src=10.83.0.1 dst=10.83.0.2 sport=1 dport=80', reply: 'src=fd00::83 dst=10.83.0.1 sport=80 dport=1' }),
  ctLine({ prefix: '    [NEW]', orig: 'src=10.84.0.1 dst=10.84.0.2 sport=1 dport=80' }),
  ctLine().slice(0, 90),
  `${ctLine({ orig: 'src=10.85.0.1 dst=10.85.0.2 sport=1 dport=80' }).slice(0, 50)}conntrack v1.4.7 (conntrack-tools): 1 flow entries have been shown.`,
  ctLine({ orig: 'src=10.85.0.1 dst=10.85.0.2 sport=1 dport=80' }).slice(50),
  `${ctLine({ orig: 'src=10.86.0.1 dst=10.86.0.2 sport=1 dport=80' })}\r`,
  ctLine({ orig: 'src=10.87.0.1 dst=10.87.0.2 sport=1 dport=80' }).replaceAll(' ', '\t'),
  `${ctLine({ orig: 'src=10.88.0.1 dst=10.88.0.2 sport=1 dport=80' })} é`,
  'ipv4     2 tcp      6 431999 ESTABLISHED src=10.89.0.1 dst=10.89.0.2 sport=1 dport=80 src=10.89.0.3 dst=10.89.0.1 sport=80 dport=1 [ASSURED] mark=0 use=1 \u00ff',
  'this is not conntrack',
];

/** `text`'s lines with the odd lines put in every `every` lines (so batches span them). */
function withOddLines(text: string, every: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  lines.forEach((l, i) => {
    out.push(l);
    if (i % every === every - 1) out.push(ODD[(i / every) % ODD.length | 0]!);
  });
  return out.join('\n');
}

describe('conntrack parse with batched address lookups', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('equals the one-by-one reference on the lab capture %s', async (name) => {
    const text = readFileSync(path.join('fixtures', name, 'probes', 'conntrack.stdout'), 'utf8');
    const got = await expectSameAsReference(text);
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
    for (const f of files) await expectSameAsReference(readFileSync(path.join(dir, f), 'utf8'));
  });

  it.each([
    ['b1', 'iptables', 3000],
    ['b1', 'cilium', 3000],
    // 3,100 of 4,096 slots: columns cut as views (3,000: copies).
    ['b1', 'iptables', 3100],
    // Several batches of queued lookups (one per ~1,000 lines).
    ['b2', 'iptables', 12_500],
  ] as const)('equals it on a generated capture (seed %s, %s, %i flows)', async (seed, mode, flows) => {
    expect(cutsInPlace(flows, 4096)).toBe(flows > 3072);
    const text = generated(seed, mode, flows, 400);
    const got = await expectSameAsReference(text);
    expect(conntrackRows(got.value).length).toBe(flows);
  });

  it('equals it with odd lines among the common ones (IPv6, icmp, zones, labels, big counters, flags, cut lines, CRLF, tabs, non-ASCII)', async () => {
    const text = withOddLines(generated('b3', 'iptables', 9000, 400), 37);
    const got = await expectSameAsReference(text);
    expect(got.diagnostics.length).toBeGreaterThan(0);
    // And a CRLF capture as a whole.
    await expectSameAsReference(withOddLines(generated('b4', 'cilium', 2000), 11).replaceAll('\n', '\r\n'));
  });

  it.each(['iptables', 'cilium'] as const)('classifies a generated %s capture as the reference does', { timeout: 120_000 }, async (mode) => {
    const world = generateWorld({ services: 300, endpoints: 4, seed: 'batch-cls', modes: [mode], conntrack: 8000 });
    const dir = mkdtempSync(path.join(tmpdir(), 'ct-batch-'));
    dirs.push(dir);
    writeModeBundle(world, mode, dir);
    const { services, nodeAddresses } = conntrackTargets(await snapshotOfDir(dir));
    const text = withOddLines(modeOutputs(world, mode).get('conntrack')!, 53);
    const got = classifyConntrackRows(conntrackRows(parseConntrack(text, 'ct').value), services, nodeAddresses);
    const want = classifyConntrackRows(conntrackRows(parseConntrackReference(text, 'ct').value), services, nodeAddresses);
    expect(got.staleCount).toBe(want.staleCount);
    expect([...got.serviceOf]).toEqual([...want.serviceOf]);
    expect([...got.codeOf]).toEqual([...want.codeOf]);
    expect([...got.serviceOf].some((s) => s >= 0)).toBe(true);
  });

  it('numbers queued lookups in call order, mixed with lookups made at once', () => {
    const s = 'src=10.0.0.1 dst=10.0.0.2 src=010.0.0.3 src=10.0.0.1 src=10.0.0.4';
    const batched = new ConntrackInterner();
    const q1 = batched.defer(s, 4, 12, (10 << 24) | 1);
    const q2 = batched.defer(s, 17, 25, (10 << 24) | 2);
    // A non-canonical spelling is numbered at once: the queue is resolved first.
    expect(batched.ipv4(s, 30, 39, (10 << 24) | 3, false)).toBe('010.0.0.3');
    expect(batched.lastId).toBe(2);
    const q3 = batched.defer(s, 44, 52, (10 << 24) | 1);
    const q4 = batched.defer(s, 57, 65, (10 << 24) | 4);
    expect(batched.queued).toBe(4);
    batched.resolve();
    expect([q1, q2, q3, q4].map((q) => batched.queuedId(q))).toEqual([0, 1, 0, 3]);
    expect(batched.texts).toEqual(['10.0.0.1', '10.0.0.2', '010.0.0.3', '10.0.0.4']);
    batched.clearQueue();
    expect(batched.queued).toBe(0);
    expect(batched.idOf('10.0.0.4')).toBe(3);
  });
});

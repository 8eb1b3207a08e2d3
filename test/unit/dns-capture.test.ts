/**
 * `extra/dns.json`: format/parse round trip, damaged files (garbage lines, truncation,
 * binary), recording a live transport into a bundle and replaying it exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DNS_CAPTURE_FILE, formatDnsCapture, parseDnsCapture } from '../../src/dns/capture.js';
import { DirectDnsTransport } from '../../src/dns/direct.js';
import { parseRawExchange } from '../../src/dns/raw.js';
import { dnsCaptureExtras, RecordingDnsTransport, REPLAY_NOTE, ReplayDnsTransport } from '../../src/dns/replay.js';
import { UserError } from '../../src/errors.js';
import type { DnsCapture } from '../../src/model/dns.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { makeExchange, makeNxdomain, makeRecord, makeTimeout, startTestDnsServer, type TestDnsServer } from './builders/dns.js';

const Z = 'default.svc.cluster.local';
const capture = (...exchanges: DnsCapture['exchanges']): DnsCapture => ({ formatVersion: 1, exchanges });
const sample = capture(
  makeExchange(),
  makeExchange({ qname: `_http._tcp.web.${Z}`, qtype: 'SRV', answers: [makeRecord('SRV', `0 100 80 web.${Z}`, `_http._tcp.web.${Z}`)], additionals: [makeRecord('A', '10.96.0.11', `web.${Z}`, { section: 'additional' })] }),
  makeExchange({ qtype: 'AAAA', outcome: 'nodata', answers: [], authorities: [makeRecord('SOA', 'ns.dns.cluster.local hostmaster.cluster.local 1 7200 1800 86400 30', 'cluster.local', { section: 'authority' })] }),
  makeNxdomain(`nope.${Z}`),
  makeTimeout({ server: '10.96.50.5' }),
  makeExchange({ truncated: true, transport: 'tcp', tries: 2, replyHex: '00ff', error: 'quote " and\nnewline' }),
);

describe('dns.json format', () => {
  it('parses what it formats, exactly', () => {
    const text = formatDnsCapture(sample);
    const parsed = parseDnsCapture(text, 'dns.json');
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.value).toEqual(sample);
    expect(formatDnsCapture(parsed.value)).toBe(text);
    expect(JSON.parse(text)).toEqual(sample); // also plain JSON
    expect(text.split('\n')).toHaveLength(sample.exchanges.length + 3);
  });

  it('keeps every valid exchange and reports each bad line with its number', () => {
    const lines = formatDnsCapture(sample).split('\n');
    lines.splice(2, 0, '{"server":1}', 'not json at all');
    const parsed = parseDnsCapture(lines.join('\n'), 'dns.json');
    expect(parsed.value.exchanges).toEqual(sample.exchanges);
    expect(parsed.diagnostics.map((d) => [d.line, d.code])).toEqual([[3, 'bad-exchange'], [4, 'not-json']]);
    expect(parsed.diagnostics[1]?.text).toBe('not json at all');
  });

  it('keeps the complete exchanges of a truncated file and says it is truncated', () => {
    const text = formatDnsCapture(sample);
    const cut = text.slice(0, text.indexOf('\n', text.indexOf('\n', text.indexOf('\n') + 1) + 1) + 40);
    const parsed = parseDnsCapture(cut, 'dns.json');
    expect(parsed.value.exchanges).toEqual(sample.exchanges.slice(0, 2));
    expect(parsed.diagnostics.map((d) => d.code)).toEqual(['not-json', 'truncated']);
  });

  it.each([
    ['empty', ''],
    ['binary', '\u0000\u0001\u00ff\ufffd{{{\n\u0007'],
    ['a JSON array', '[1,2,3]'],
    ['CRLF line ends', formatDnsCapture(sample).replaceAll('\n', '\r\n')],
  ])('never throws on %s', (_what, text) => {
    const parsed = parseDnsCapture(text, 'dns.json');
    expect(Array.isArray(parsed.value.exchanges)).toBe(true);
    if (text.includes('\r\n')) expect(parsed.value.exchanges).toEqual(sample.exchanges);
    else expect(parsed.diagnostics.length).toBeGreaterThan(0);
  });

  it('reads a raw exchange only when every field is there', () => {
    expect(parseRawExchange('', 'p').diagnostics.map((d) => d.code)).toEqual(['empty']);
    expect(parseRawExchange('{"server":"1.1.1.1"}\n', 'p').diagnostics.map((d) => d.code)).toEqual(['bad-exchange']);
    expect(parseRawExchange('\u0000garbage', 'p').diagnostics.map((d) => d.code)).toEqual(['not-json']);
    const ok = '{"server":"10.96.0.10","port":53,"qname":"web","qtype":"A","id":7,"startedAt":"t","totalMs":1,"attempts":[{"transport":"udp","latencyMs":1,"replyHex":null,"error":"timeout"}]}';
    const r = parseRawExchange(`${ok}\nextra\n`, 'p');
    expect(r.value?.attempts).toHaveLength(1);
    expect(r.diagnostics.map((d) => [d.line, d.code])).toEqual([[2, 'extra-output']]);
    expect(parseRawExchange(ok.replace('null', '"zz"'), 'p').value).toBeNull();
  });
});

describe('recording and replay', () => {
  let server: TestDnsServer;
  let dir: string;
  beforeAll(async () => {
    server = await startTestDnsServer({ records: [{ name: `web.${Z}`, type: 'A', data: '10.96.12.34' }] });
    dir = mkdtempSync(path.join(tmpdir(), 'nodescope-dns-'));
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays from a bundle exactly what the live transport returned, in order', async () => {
    const rec = new RecordingDnsTransport(new DirectDnsTransport());
    const q = (qname: string) => ({ server: '127.0.0.1', port: server.port, qname, qtype: 'A' as const });
    const live = [await rec.query(q(`web.${Z}`)), await rec.query(q(`nope.${Z}`)), await rec.query(q(`web.${Z}`))];
    writeBundle(dir, {
      capturedAt: '2026-01-12T09:00:00.000Z', nodescopeVersion: '0.1.0', node: 'n', source: { kind: 'local', label: 'local' },
      toolVersions: {}, runs: [], extras: dnsCaptureExtras(rec.capture()),
    });
    const replay = ReplayDnsTransport.fromBundle(dir);
    expect(replay.diagnostics).toEqual([]);
    expect(replay.label).toBe(`replay:${dir}`);
    expect(replay.note).toBe(REPLAY_NOTE); // dig prints it as ;; NOTE:, so the recorded via and WHEN are not read as now
    const again = [await replay.query(q(`WEB.${Z}.`)), await replay.query(q(`nope.${Z}`)), await replay.query(q(`web.${Z}`))];
    expect(again).toEqual(live);
    expect(again[0]).not.toBe(again[2]); // the second recording, not the first one again
    const other = await replay.query({ ...q(`web.${Z}`), qtype: 'AAAA' });
    expect(other).toMatchObject({ outcome: 'not-captured', rcode: null, answers: [] });
    await expect(replay.query(q('bad..name'))).rejects.toBeInstanceOf(UserError);
  });

  it('answers not-captured for every question of a bundle without dns.json', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'nodescope-dns-empty-'));
    try {
      const e = await ReplayDnsTransport.fromBundle(empty).query({ server: '10.96.0.10', port: 53, qname: `web.${Z}`, qtype: 'A' });
      expect(e.outcome).toBe('not-captured');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
    expect(Object.keys(dnsCaptureExtras(capture()))).toEqual([DNS_CAPTURE_FILE]);
  });
});

describe('replay of a capture asked of one other server (capture --dns-server POD_IP)', () => {
  const podDns = '10.244.0.2';
  const q = (server: string, qname = 'web.default.svc.cluster.local') => ({ server, port: 53, qname, qtype: 'A' as const });

  it('answers the kube-dns ClusterIP question with the recorded answer, which keeps its real server', async () => {
    const recorded = makeExchange({ server: podDns });
    const replay = new ReplayDnsTransport({ formatVersion: 1, exchanges: [recorded] }, 'replay:x');
    const e = await replay.query(q('10.96.0.10'));
    expect(e).toEqual(recorded);
    expect(e.server).toBe(podDns);
    expect((await replay.query(q('10.96.0.10', 'nope.default.svc.cluster.local'))).outcome).toBe('not-captured');
  });

  it('does not mix servers when the capture asked more than one', async () => {
    const replay = new ReplayDnsTransport({ formatVersion: 1, exchanges: [makeExchange({ server: podDns }), makeExchange({ server: '10.244.1.3' })] }, 'replay:x');
    expect((await replay.query(q('10.96.0.10'))).outcome).toBe('not-captured');
    expect((await replay.query(q(podDns))).server).toBe(podDns);
  });
});

describe('the default capture (fixtures/lab-cilium, what npm start opens)', () => {
  it('answers the kube-dns ClusterIP questions from its recorded CoreDNS-pod answers', async () => {
    const replay = ReplayDnsTransport.fromBundle(path.resolve(import.meta.dirname, '../../fixtures/lab-cilium'));
    expect(replay.diagnostics).toEqual([]);
    const e = await replay.query({ server: '10.96.0.10', port: 53, qname: 'web.default.svc.cluster.local', qtype: 'A' });
    expect(e).toMatchObject({ outcome: 'answer', rcode: 'NOERROR', server: '10.244.0.2' });
    expect(e.answers.map((a) => a.data)).toEqual(['10.96.12.34']);
  });
});

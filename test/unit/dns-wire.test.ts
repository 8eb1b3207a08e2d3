/**
 * Wire-level pieces: the query message, decoding replies into presentation text for
 * every section and record type, the answer-to-this-query check, the raw exchange
 * decoding (truncation, mismatched replies), and garbage that must never throw.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { decodeExchange, type RawExchange } from '../../src/dns/raw.js';
import { readNodeResolvConf } from '../../src/dns/resolve.js';
import { answersQuery, canonicalAddress, decodeReply, encodeQuery } from '../../src/dns/wire.js';
import { writeBundle } from '../../src/sources/bundle.js';
import { ReplayTransport } from '../../src/sources/replay.js';

const Z = 'default.svc.cluster.local';

/** A reply to `id` for `name`/`type` with the given sections, as bytes. */
function replyBytes(id: number, name: string, type: dnsPacket.RecordType, sections: Partial<Pick<dnsPacket.Packet, 'answers' | 'authorities' | 'additionals'>>, flags = 0): Buffer {
  return dnsPacket.encode({ type: 'response', id, flags: dnsPacket.RECURSION_DESIRED | flags, questions: [{ type, name }], ...sections });
}

function raw(id: number, attempts: RawExchange['attempts'], qtype: RawExchange['qtype'] = 'A', qname = `web.${Z}`): RawExchange {
  return { server: '10.96.0.10', port: 53, qname, qtype, id, startedAt: '2026-01-12T09:00:00.000Z', totalMs: 4.5, attempts };
}

describe('query and reply messages', () => {
  it('asks one question with recursion desired, length-prefixed over TCP', () => {
    const udp = encodeQuery(4242, `web.${Z}.`, 'SRV', 'udp');
    const q = dnsPacket.decode(udp);
    expect([q.id, q.flag_rd, q.flag_qr, q.questions]).toEqual([4242, true, false, [{ name: `web.${Z}`, type: 'SRV', class: 'IN' }]]);
    const tcp = encodeQuery(4242, `web.${Z}`, 'SRV', 'tcp');
    expect(tcp.readUInt16BE(0)).toBe(udp.length);
    expect(tcp.subarray(2)).toEqual(udp);
  });

  it('decodes every section into presentation text', () => {
    const bytes = replyBytes(7, `_http._tcp.web.${Z}`, 'SRV', {
      answers: [{ name: `_http._tcp.web.${Z}`, type: 'SRV', ttl: 5, data: { priority: 0, weight: 100, port: 80, target: `web.${Z}` } }],
      authorities: [{ name: 'cluster.local', type: 'SOA', ttl: 30, data: { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local', serial: 1, refresh: 7200, retry: 1800, expire: 86400, minimum: 30 } }],
      additionals: [
        { name: `web.${Z}`, type: 'A', ttl: 5, data: '10.96.12.34' },
        { name: `web.${Z}`, type: 'AAAA', ttl: 5, data: 'fd00:0:0:0:0:0:0:20' },
        { name: 'txt.example', type: 'TXT', ttl: 1, data: ['a "q"', 'b'] },
        { name: '.', type: 'OPT', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] } as unknown as dnsPacket.Answer,
      ],
    }, dnsPacket.AUTHORITATIVE_ANSWER);
    const r = decodeReply(bytes);
    if ('error' in r) throw new Error(r.error);
    expect([r.id, r.rcode, r.flags]).toEqual([7, 'NOERROR', { aa: true, tc: false, rd: true, ra: false }]);
    expect([...r.answers, ...r.authorities, ...r.additionals].map((x) => `${x.section} ${x.name} ${x.ttl} ${x.type} ${x.data}`)).toEqual([
      `answer _http._tcp.web.${Z} 5 SRV 0 100 80 web.${Z}`,
      'authority cluster.local 30 SOA ns.dns.cluster.local hostmaster.cluster.local 1 7200 1800 86400 30',
      `additional web.${Z} 5 A 10.96.12.34`,
      `additional web.${Z} 5 AAAA fd00::20`,
      'additional txt.example 1 TXT "a \\"q\\"" "b"',
    ]);
    expect(answersQuery(r, 7, `_http._tcp.WEB.${Z}.`, 'SRV')).toBe(true);
    expect(answersQuery(r, 8, `_http._tcp.web.${Z}`, 'SRV')).toBe(false);
    expect(answersQuery(r, 7, `_http._tcp.web.${Z}`, 'A')).toBe(false);
  });

  it('writes IPv6 addresses in canonical form and leaves others alone', () => {
    expect(['FD00:0:0::20', '::ffff:10.0.0.1', '10.96.0.10', 'not-an-ip'].map(canonicalAddress)).toEqual(['fd00::20', '::ffff:a00:1', '10.96.0.10', 'not-an-ip']);
  });
});

describe('decodeExchange', () => {
  const hex = (b: Buffer) => b.toString('hex');

  it('marks a UDP reply with TC followed by TCP as truncated and keeps the TCP records', () => {
    const tc = replyBytes(9, `web.${Z}`, 'A', {}, dnsPacket.TRUNCATED_RESPONSE);
    const full = replyBytes(9, `web.${Z}`, 'A', { answers: [{ name: `web.${Z}`, type: 'A', ttl: 5, data: '10.96.12.34' }] });
    const e = decodeExchange(raw(9, [
      { transport: 'udp', latencyMs: 1, replyHex: hex(tc), error: null },
      { transport: 'tcp', latencyMs: 2, replyHex: hex(full), error: null },
    ]), 'direct');
    expect(e).toMatchObject({ truncated: true, transport: 'tcp', tries: 2, outcome: 'answer', latencyMs: 4.5, error: null });
    expect(e.answers.map((a) => a.data)).toEqual(['10.96.12.34']);
  });

  it.each([
    ['no attempt', [], 'failed'],
    ['a timeout', [{ transport: 'udp', latencyMs: 1500, replyHex: null, error: 'timeout' }], 'timeout'],
    ['a socket error', [{ transport: 'udp', latencyMs: 1, replyHex: null, error: 'ECONNREFUSED connect' }], 'network-error'],
    ['garbage bytes', [{ transport: 'tcp', latencyMs: 1, replyHex: 'ff00ff', error: null }], 'bad-reply'],
    ['a reply to another question', [{ transport: 'tcp', latencyMs: 1, replyHex: replyBytes(9, `other.${Z}`, 'A', {}).toString('hex'), error: null }], 'bad-reply'],
    ['REFUSED', [{ transport: 'udp', latencyMs: 1, replyHex: replyBytes(9, `web.${Z}`, 'A', {}, 5).toString('hex'), error: null }], 'refused'],
    ['NOTIMP', [{ transport: 'udp', latencyMs: 1, replyHex: replyBytes(9, `web.${Z}`, 'A', {}, 4).toString('hex'), error: null }], 'other-rcode'],
  ] as const)('gives the outcome of %s', (_what, attempts, outcome) => {
    expect(decodeExchange(raw(9, attempts), 'direct').outcome).toBe(outcome);
  });

  it('never throws on random reply bytes', () => {
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 500; i++) {
      const bytes = Buffer.from(Array.from({ length: next() % 80 }, () => next() % 256));
      const e = decodeExchange(raw(9, [{ transport: 'udp', latencyMs: 1, replyHex: bytes.toString('hex'), error: null }]), 'direct');
      expect(['bad-reply', 'answer', 'nodata', 'nxdomain', 'servfail', 'refused', 'other-rcode']).toContain(e.outcome);
    }
  });
});

describe('readNodeResolvConf', () => {
  it('reads the node resolv.conf from a capture, and null when it was not captured', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-dns-resolv-'));
    try {
      const text = 'search localdomain\nnameserver 192.168.49.1\noptions ndots:2\n';
      const result = { argv: ['cat', '/etc/resolv.conf'], stdout: text, stderr: '', exitCode: 0, startedAt: 't', durationMs: 1 };
      writeBundle(dir, { capturedAt: 't', nodescopeVersion: '0', node: 'n', source: { kind: 'local', label: 'local' }, toolVersions: {}, runs: [{ id: 'resolv-conf', argv: result.argv, status: 'ok', result }] });
      const r = await readNodeResolvConf(new ReplayTransport(dir));
      expect([r?.conf.search, r?.conf.options.ndots, r?.conf.nameservers.map((n) => n.address)]).toEqual([['localdomain'], 2, ['192.168.49.1']]);
      writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ formatVersion: 1, probes: [], api: null }));
      expect(await readNodeResolvConf(new ReplayTransport(dir))).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

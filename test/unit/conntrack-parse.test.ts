import { describe, expect, it } from 'vitest';
import { parseConntrack } from '../../src/parsers/conntrack.js';
import { canonicalIp, expandIpv6, formatIpv6Groups, parseIpv6Groups } from '../../src/model/conntrack.js';
import { content, ctLine } from './conntrack-builders.js';

const ORIGIN = 'test';

function one(line: string) {
  const r = parseConntrack(line, ORIGIN);
  // One line: one table entry, or one event (never both).
  const all = [...r.value.entries, ...(r.value.events ?? [])];
  expect(all).toHaveLength(1);
  return { entry: all[0]!, diagnostics: r.diagnostics };
}

function codes(text: string): string[] {
  return parseConntrack(text, ORIGIN).diagnostics.map((d) => d.code);
}

describe('conntrack -L lines', () => {
  it('reads protocol, timeout, state, both tuples, flags, mark and use', () => {
    const { entry, diagnostics } = one(ctLine());
    expect(diagnostics).toEqual([]);
    expect(entry).toMatchObject({
      line: 1,
      family: 'ipv4',
      proto: 'tcp',
      protoNum: 6,
      timeout: 431999,
      state: 'ESTABLISHED',
      orig: { src: '10.244.0.9', dst: '10.96.12.34', sport: 51286, dport: 80 },
      reply: { src: '10.244.0.31', dst: '10.244.0.9', sport: 8080, dport: 51286 },
      flags: ['ASSURED'],
      mark: 0,
      use: 1,
    });
    expect(entry.raw).toBe(ctLine());
    expect(entry.orig.packets).toBeUndefined();
  });

  it('gives the same entry with the -o extended layer-3 prefix', () => {
    const plain = one(ctLine()).entry;
    const extended = one(ctLine({ l3: 'ipv4     2' })).entry;
    expect(content(extended)).toEqual(content(plain));
  });

  it('reads a udp entry without a state word, [UNREPLIED] after the original tuple', () => {
    const { entry } = one(
      ctLine({
        head: 'udp      17 29',
        orig: 'src=10.244.0.11 dst=10.0.0.10 sport=35637 dport=53',
        afterOrig: '[UNREPLIED]',
        reply: 'src=10.0.0.10 dst=10.244.0.11 sport=53 dport=35637',
        afterReply: 'mark=0 use=1',
      }),
    );
    expect(entry.state).toBeUndefined();
    expect(entry.timeout).toBe(29);
    expect(entry.flags).toEqual(['UNREPLIED']);
  });

  it('reads icmp type/code/id per tuple and a later id= as the conntrack id', () => {
    const { entry } = one(
      ctLine({
        head: 'icmp     1 29',
        orig: 'src=10.1.0.1 dst=10.1.0.2 type=8 code=0 id=4711',
        reply: 'src=10.1.0.2 dst=10.1.0.1 type=0 code=0 id=4711',
        afterReply: 'mark=0 use=1 id=3146820930',
      }),
    );
    expect(entry.orig).toMatchObject({ icmpType: 8, icmpCode: 0, icmpId: 4711 });
    expect(entry.orig.sport).toBeUndefined();
    expect(entry.reply).toMatchObject({ icmpType: 0, icmpCode: 0, icmpId: 4711 });
    expect(entry.id).toBe(3146820930);
  });

  it.each([
    ['sctp     132 210 ESTABLISHED', 'sctp', 132, 'ESTABLISHED'],
    ['sctp     132 3 HEARTBEAT_SENT', 'sctp', 132, 'HEARTBEAT_SENT'],
    ['dccp     33 43190 OPEN', 'dccp', 33, 'OPEN'],
    ['udplite  136 30', 'udplite', 136, undefined],
    ['tcp      6 7 SYN_SENT2', 'tcp', 6, 'SYN_SENT2'],
  ] as const)('reads %s', (head, proto, num, state) => {
    const { entry, diagnostics } = one(ctLine({ head }));
    expect(diagnostics).toEqual([]);
    expect(entry).toMatchObject({ proto, protoNum: num, state });
  });

  it('reads gre keys (hex) and an unknown protocol (number only, addresses only)', () => {
    const gre = one(
      ctLine({
        head: 'gre      47 179',
        orig: 'src=10.0.0.1 dst=10.0.0.2 srckey=0x0 dstkey=0x1f',
        reply: 'src=10.0.0.2 dst=10.0.0.1 srckey=0x1f dstkey=0x0',
        afterReply: 'mark=0 use=1',
      }),
    ).entry;
    expect(gre.orig).toMatchObject({ srcKey: 0, dstKey: 31 });
    expect(gre.reply).toMatchObject({ srcKey: 31, dstKey: 0 });
    const vrrp = one(
      ctLine({ head: 'unknown  112 599', orig: 'src=10.0.0.1 dst=224.0.0.18', reply: 'src=224.0.0.18 dst=10.0.0.1', afterReply: 'mark=0 use=1' }),
    ).entry;
    expect(vrrp).toMatchObject({ proto: 'unknown', protoNum: 112, timeout: 599 });
  });

  it('keeps per-direction counters as bigint, up to 2^64-1', () => {
    const { entry } = one(
      ctLine({
        afterOrig: 'packets=18446744073709551615 bytes=9007199254740993',
        afterReply: 'packets=4 bytes=123456789012 [ASSURED] mark=0 use=1',
      }),
    );
    expect(entry.orig.packets).toBe(18446744073709551615n);
    expect(entry.orig.bytes).toBe(9007199254740993n);
    expect(entry.reply.packets).toBe(4n);
    expect(entry.reply.bytes).toBe(123456789012n);
    expect(codes(ctLine({ afterOrig: 'packets=18446744073709551616 bytes=1' }))).toEqual(['bad-value']);
  });

  it('reads an offloaded flow without timeout, and [HW_OFFLOAD]', () => {
    const sw = one(ctLine({ head: 'tcp      6', afterReply: '[OFFLOAD] mark=0 use=2' })).entry;
    expect(sw.timeout).toBeUndefined();
    expect(sw.state).toBeUndefined();
    expect(sw.flags).toEqual(['OFFLOAD']);
    const hw = one(ctLine({ head: 'tcp      6 ESTABLISHED', afterReply: '[HW_OFFLOAD] mark=0 use=2' })).entry;
    expect(hw).toMatchObject({ timeout: undefined, state: 'ESTABLISHED', flags: ['HW_OFFLOAD'] });
  });

  it('reads mark, secmark, secctx, zone, per-direction zones, delta-time, start/stop, helper, use, id, labels', () => {
    const { entry, diagnostics } = one(
      ctLine({
        afterOrig: 'zone-orig=3 packets=1 bytes=60',
        afterReply:
          'zone-reply=4 packets=2 bytes=120 [ASSURED] mark=16384 secmark=7 secctx=system_u:object_r:unlabeled_t:s0 zone=9 ' +
          'delta-time=42 [start=Sun Nov 29 14:23:31 2026] [stop=Sun Nov 29 14:24:01 2026] helper=ftp use=1 id=2037672278 labels=eth0-in,svc',
      }),
    );
    expect(diagnostics).toEqual([]);
    expect(entry).toMatchObject({
      mark: 16384,
      secmark: 7,
      secctx: 'system_u:object_r:unlabeled_t:s0',
      zone: 9,
      deltaTime: 42,
      start: 'Sun Nov 29 14:23:31 2026',
      stop: 'Sun Nov 29 14:24:01 2026',
      helper: 'ftp',
      use: 1,
      id: 2037672278,
      labels: ['eth0-in', 'svc'],
    });
    expect(entry.orig.zone).toBe(3);
    expect(entry.reply.zone).toBe(4);
  });

  it('keeps unknown key=value fields in extra, with a warning each', () => {
    // Vendor-patched conntrack output (an SLB appliance) appends its own fields.
    const r = parseConntrack(ctLine({ afterReply: '[ASSURED] mark=0 use=1 Service=slb.test Dest=1' }), ORIGIN);
    expect(r.value.entries[0]!.extra).toEqual([
      { key: 'Service', value: 'slb.test' },
      { key: 'Dest', value: '1' },
    ]);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual([
      ['warning', 'unknown-field', 1],
      ['warning', 'unknown-field', 1],
    ]);
  });

  it('warns about a protocol name that disagrees with its number and an unknown state', () => {
    expect(codes(ctLine({ head: 'tcp      17 30 ESTABLISHED' }))).toEqual(['proto-mismatch']);
    const r = parseConntrack(ctLine({ head: 'tcp      6 30 BOGUS_STATE' }), ORIGIN);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['unknown-state']);
    expect(r.value.entries[0]!.extra).toEqual([{ key: 'BOGUS_STATE' }]);
  });

  it('accepts CRLF line ends', () => {
    const r = parseConntrack(`${ctLine()}\r\n${ctLine({ head: 'udp      17 3' })}\r\n`, ORIGIN);
    expect(r.diagnostics).toEqual([]);
    expect(r.value.entries.map((e) => e.raw.endsWith('\r'))).toEqual([false, false]);
    expect(r.value.entries.map((e) => e.line)).toEqual([1, 2]);
  });
});

describe('IPv6 addresses', () => {
  const expanded = 'fd02:0000:0000:0000:0000:0000:0000:0020';

  it('normalises the kernel %pI6 form and the compressed form to the same text, keeping raw', () => {
    const proc = one(
      ctLine({
        l3: 'ipv6     10',
        orig: `src=fd00:0000:0000:0000:0000:0000:0000:0001 dst=${expanded} sport=44024 dport=9090`,
        reply: 'src=FD00:0:0:0:0:0:0:2 dst=fd00::1 sport=9090 dport=44024',
      }),
    ).entry;
    expect(proc.family).toBe('ipv6');
    expect(proc.orig).toMatchObject({ src: 'fd00::1', dst: 'fd02::20' });
    expect(proc.reply).toMatchObject({ src: 'fd00::2', dst: 'fd00::1' });
    expect(proc.raw).toContain(expanded);
  });

  it.each([
    ['0000:0000:0000:0000:0000:0000:0000:0001', '::1'],
    ['0000:0000:0000:0000:0000:0000:0000:0000', '::'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
    ['0000:0000:0000:0000:0000:ffff:0a00:0001', '::ffff:10.0.0.1'],
    ['::ffff:10.0.0.1', '::ffff:10.0.0.1'],
    ['fe80:0000:0000:0000:0000:0000:0000:0000', 'fe80::'],
  ])('canonical form of %s is %s (glibc inet_ntop)', (text, canonical) => {
    expect(canonicalIp(text)).toBe(canonical);
    expect(canonicalIp(expandIpv6(text)!)).toBe(canonical);
    expect(formatIpv6Groups(parseIpv6Groups(canonical)!)).toBe(canonical);
  });

  it.each(['1::2::3', ':1', '1:', '12345::', '1:2:3:4:5:6:7:8:9', 'g::1', '::ffff:300.0.0.1', '1:2:3:4:5:6:7'])(
    'rejects %s',
    (bad) => {
      expect(canonicalIp(bad)).toBeUndefined();
      expect(codes(ctLine({ orig: `src=${bad} dst=fd00::1 sport=1 dport=2` }))).toEqual(['bad-address']);
    },
  );

  it('rejects IPv4 and IPv6 mixed in one entry, and a family prefix that disagrees', () => {
    expect(codes(ctLine({ reply: 'src=fd00::2 dst=fd00::1 sport=8080 dport=51286' }))).toEqual(['malformed']);
    expect(codes(ctLine({ l3: 'ipv6     10' }))).toEqual(['malformed']);
  });
});

describe('conntrack -E events', () => {
  it('reads the right-aligned tags and the event kind', () => {
    const text = [
      ctLine({ prefix: '    [NEW]', head: 'tcp      6 120 SYN_SENT', afterOrig: '[UNREPLIED]', afterReply: '' }),
      ctLine({ prefix: ' [UPDATE]', head: 'tcp      6 60 SYN_RECV', afterReply: '' }),
      ctLine({ prefix: '[DESTROY]', afterReply: '[ASSURED]' }),
    ].join('\n');
    const r = parseConntrack(text, ORIGIN);
    expect(r.diagnostics).toEqual([]);
    // Events are changes to flows, never table rows.
    expect(r.value.entries).toEqual([]);
    expect(r.value.events!.map((e) => [e.event, e.state, e.flags])).toEqual([
      ['NEW', 'SYN_SENT', ['UNREPLIED']],
      ['UPDATE', 'SYN_RECV', []],
      ['DESTROY', 'ESTABLISHED', ['ASSURED']],
    ]);
  });

  it('reads the -o timestamp prefix and the [USERSPACE] suffix (conntrack 1.4.7, captured on this kernel)', () => {
    const line =
      '[1795962233.926662]\t[DESTROY] ipv4     2 tcp      6 119 TIME_WAIT src=10.123.0.1 dst=10.96.0.50 sport=59404 dport=80 ' +
      'packets=5 bytes=268 src=10.123.0.2 dst=10.123.0.1 sport=8080 dport=59404 packets=4 bytes=219 [ASSURED] delta-time=0 ' +
      'id=3146820930 [USERSPACE] portid=2634133997 progname=conntrack';
    const { entry, diagnostics } = one(line);
    expect(diagnostics).toEqual([]);
    expect(entry).toMatchObject({
      eventTime: '1795962233.926662',
      event: 'DESTROY',
      deltaTime: 0,
      id: 3146820930,
      userspace: { portid: 2634133997, progname: 'conntrack' },
    });
    expect(entry.reply.packets).toBe(4n);
  });
});

describe('the conntrack-tools summary line', () => {
  const trailer = (n: number, what = 'flow entries have been shown.') => `conntrack v1.4.6 (conntrack-tools): ${n} ${what}`;

  it('is recorded as the reported count, not an entry, even in the middle of the output', () => {
    const text = [ctLine(), trailer(296), ctLine({ head: 'udp      17 24' }), ''].join('\n');
    const r = parseConntrack(text, ORIGIN);
    expect(r.diagnostics).toEqual([]);
    expect(r.value.entries.map((e) => e.line)).toEqual([1, 3]);
    expect(r.value.reportedCount).toBe(296);
    expect(r.value.trailers).toEqual([{ line: 2, version: '1.4.6', count: 296, unit: 'flow entries', action: 'shown' }]);
  });

  it('reads event, delete and expectation summaries; reportedEvents is the events count shown, reportedCount only a table count', () => {
    const text = [
      `^C${trailer(3, 'flow events have been shown.')}`,
      trailer(2, 'flow entries have been deleted.'),
      trailer(0, 'expectation entries have been shown.'),
    ].join('\n');
    const r = parseConntrack(text, ORIGIN);
    expect(r.diagnostics).toEqual([]);
    expect(r.value.trailers.map((t) => [t.unit, t.action, t.count])).toEqual([
      ['flow events', 'shown', 3],
      ['flow entries', 'deleted', 2],
      ['expectation entries', 'shown', 0],
    ]);
    expect(r.value.reportedEvents).toBe(3);
    expect(r.value.reportedCount).toBeUndefined();
  });

  it('rejoins an entry line that the summary cut in two', () => {
    const full = ctLine({ head: 'udp      17 24' });
    const cut = full.indexOf('dport=51286') + 3; // inside the word dport
    const text = `${full.slice(0, cut)}${trailer(5)}\n${full.slice(cut)}\n${ctLine()}\n`;
    const r = parseConntrack(text, ORIGIN);
    expect(r.value.entries.map((e) => [e.line, e.raw])).toEqual([
      [1, full],
      [3, ctLine()],
    ]);
    expect(r.value.reportedCount).toBe(5);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['stderr-interleaved', 1]]);
  });

  it('keeps an entry printed right before the summary without a newline (stdout not newline-terminated)', () => {
    const text = `${ctLine()}${trailer(2)}\nnfct_labelmap_new: No such file or directory\n`;
    const r = parseConntrack(text, ORIGIN);
    expect(r.value.entries.map((e) => e.raw)).toEqual([ctLine()]);
    expect(r.value.reportedCount).toBe(2);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['unrecognized-line', 2]]);
  });

  it('is not taken from look-alike text', () => {
    const r = parseConntrack('conntrack v1.4.6 (conntrack-tools): many flow entries have been shown.', ORIGIN);
    expect(r.value.trailers).toEqual([]);
    expect(r.diagnostics.map((d) => d.code)).toEqual(['unrecognized-line']);
  });
});

describe('cat -n line numbers', () => {
  it('skips the prefix, notes it once, and keeps it in raw', () => {
    const text = [`   853\t${ctLine({ l3: 'ipv4     2' })}`, `   854  ${ctLine()}`].join('\n');
    const r = parseConntrack(text, ORIGIN);
    expect(r.value.entries).toHaveLength(2);
    expect(content(r.value.entries[0]!)).toEqual(content(r.value.entries[1]!));
    expect(r.value.entries[0]!.raw.startsWith('   853\t')).toBe(true);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual([['info', 'line-number-prefix', 1]]);
  });
});

describe('garbage, binary and truncated input', () => {
  it('reports lines that are not conntrack output as warnings and keeps the rest', () => {
    const text = ['$ sudo conntrack -L', ctLine(), 'Segmentation fault', '', '   ', ctLine()].join('\n');
    const r = parseConntrack(text, ORIGIN);
    expect(r.value.entries.map((e) => e.line)).toEqual([2, 6]);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line, d.text])).toEqual([
      ['warning', 'unrecognized-line', 1, '$ sudo conntrack -L'],
      ['warning', 'unrecognized-line', 3, 'Segmentation fault'],
    ]);
  });

  it.each([
    ['a port above 65535', ctLine({ orig: 'src=10.0.0.1 dst=10.0.0.2 sport=70000 dport=80' }), 'bad-value'],
    ['a non-numeric mark', ctLine({ afterReply: 'mark=0x10 use=1' }), 'bad-value'],
    ['two lines run together', `${ctLine()} ${ctLine()}`, 'malformed'],
    ['a missing reply tuple', ctLine({ reply: '', afterReply: '' }), 'truncated'],
    ['a reply tuple without ports', ctLine({ reply: 'src=10.244.0.31 dst=10.244.0.9' }), 'truncated'],
    ['a bad IPv4 address', ctLine({ orig: 'src=10.0.0.256 dst=10.0.0.2 sport=1 dport=80' }), 'bad-address'],
    ['an unknown protocol word after ipv4 2', 'ipv4     2 quic     17 30 src=1.1.1.1', 'malformed'],
    ['NUL bytes', `tcp\u00006 ${ctLine()}`, 'binary'],
  ])('rejects %s with one error', (_what, line, code) => {
    const r = parseConntrack(line, ORIGIN);
    expect(r.value.entries).toEqual([]);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual([['error', code, 1]]);
  });

  it('never yields a half entry when a line is cut anywhere', () => {
    const line = ctLine({ afterOrig: 'packets=5 bytes=268', afterReply: 'packets=4 bytes=219 [ASSURED] mark=0 zone=0 use=2' });
    // A cut inside the last number of the reply tuple still reads as a (shorter) port.
    const replyComplete = line.indexOf('dport=51286') + 'dport=5'.length;
    for (let cut = 1; cut < line.length; cut++) {
      const r = parseConntrack(line.slice(0, cut), ORIGIN);
      const entries = r.value.entries.length;
      expect(entries + r.diagnostics.filter((d) => d.severity !== 'info').length).toBeGreaterThanOrEqual(1);
      if (cut < replyComplete) expect(entries, `cut at ${cut}`).toBe(0);
      if (entries === 0) expect(r.diagnostics).toHaveLength(1);
    }
  });

  it('survives random bytes (seeded) with diagnostics only', () => {
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    for (let round = 0; round < 50; round++) {
      const bytes = Buffer.from(Array.from({ length: 2000 }, rand));
      const r = parseConntrack(bytes.toString('latin1'), ORIGIN);
      expect(r.value.entries).toEqual([]);
      for (const d of r.diagnostics) {
        expect(d.line).toBeGreaterThan(0);
        expect(d.text.length).toBeLessThanOrEqual(201);
      }
    }
  });

  it('stops listing diagnostics after 10,000 and says how many more there were', () => {
    const r = parseConntrack('x\n'.repeat(10_005), ORIGIN);
    expect(r.diagnostics).toHaveLength(10_001);
    expect(r.diagnostics.at(-1)).toMatchObject({ code: 'too-many-diagnostics', line: 0 });
    expect(r.diagnostics.at(-1)!.message).toContain('5 more');
  });
});

/**
 * Every file of shared/corpus/conntrack parses, with exactly the diagnostics
 * listed here (each with the reason), and the conntrack quirks 23–25 of
 * shared/reference/corpus-notes.md hold.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConntrack, formatConntrackEntry } from '../../src/parsers/conntrack.js';
import { plainConntrackEntry, plainConntrackTuple, type ConntrackTable } from '../../src/model/conntrack.js';
import type { Diagnostic, ParseResult } from '../../src/model/diagnostics.js';
import { conntrackCorpusDir, content } from './conntrack-builders.js';

const dir = conntrackCorpusDir();

interface Expected {
  readonly entries: number;
  readonly reportedCount: number | undefined;
  /** Diagnostics the file must produce: [line, severity, code], with why. */
  readonly events?: number;
  readonly reportedEvents?: number;
  readonly diagnostics: readonly { lines: readonly number[]; severity: Diagnostic['severity']; code: string; why: string }[];
}

const EXPECTED: Readonly<Record<string, Expected>> = {
  'aks-conntrack-L-dns-dnat-3-nodes.txt': {
    entries: 10,
    reportedCount: 296,
    diagnostics: [
      { lines: [1, 2, 3, 4, 5, 6], severity: 'warning', code: 'unrecognized-line', why: '`kubectl get no -owide` and its table' },
      { lines: [8, 9, 10, 11, 12], severity: 'warning', code: 'unrecognized-line', why: '`kubectl get po` and its rows' },
      { lines: [14], severity: 'warning', code: 'unrecognized-line', why: 'the `kubectl exec … curl` command' },
      { lines: [16, 25, 29], severity: 'warning', code: 'unrecognized-line', why: 'node shell prompts with `conntrack -L | grep`' },
    ],
  },
  'conntrack-E-events-syn-recv.txt': {
    entries: 0,
    events: 3,
    reportedCount: undefined,
    reportedEvents: 3,
    diagnostics: [{ lines: [1], severity: 'warning', code: 'unrecognized-line', why: 'the shell prompt `[root@server1 ~]# conntrack -E`' }],
  },
  'conntrack-L-tcp-udp-icmp-real.txt': {
    entries: 3,
    reportedCount: undefined,
    diagnostics: [{ lines: [1, 3, 5], severity: 'warning', code: 'unrecognized-line', why: 'shell prompts, one per command' }],
  },
  'proc-nf-conntrack-real-lines.txt': {
    entries: 2,
    reportedCount: undefined,
    diagnostics: [
      { lines: [1, 4], severity: 'warning', code: 'unrecognized-line', why: "the corpus's `# source` comment lines" },
      { lines: [2, 5], severity: 'warning', code: 'unrecognized-line', why: 'the `cat` commands' },
      { lines: [3], severity: 'info', code: 'line-number-prefix', why: 'source A was captured with `cat -n`' },
    ],
  },
};

function load(name: string): ParseResult<ConntrackTable> {
  return parseConntrack(readFileSync(path.join(dir!, name), 'utf8'), name);
}

function entriesOf(name: string) {
  return load(name).value.entries;
}

describe.skipIf(dir === undefined)('shared/corpus/conntrack', () => {
  it('has an expectation for every file', () => {
    expect(readdirSync(dir!).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s parses with only the documented diagnostics', (name, exp) => {
    const r = load(name);
    expect(r.value.entries).toHaveLength(exp.entries);
    expect(r.value.reportedCount).toBe(exp.reportedCount);
    expect(r.value.events?.length ?? 0).toBe(exp.events ?? 0);
    expect(r.value.reportedEvents).toBe(exp.reportedEvents);
    const got = r.diagnostics.map((d) => [d.line, d.severity, d.code]).sort((a, b) => Number(a[0]) - Number(b[0]));
    const want = exp.diagnostics
      .flatMap((d) => d.lines.map((line) => [line, d.severity, d.code]))
      .sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(got).toEqual(want);
    for (const d of r.diagnostics) expect(d.origin).toBe(name);
  });

  describe('quirk 23: the column layout depends on the source', () => {
    it('/proc lines (ipv4 2 prefix, zone=, use=2, secctx=) read like conntrack -L lines', () => {
      const [a, b] = entriesOf('proc-nf-conntrack-real-lines.txt');
      expect(a).toMatchObject({
        line: 3,
        proto: 'tcp',
        state: 'ESTABLISHED',
        timeout: 299,
        secctx: 'system_u:object_r:unlabeled_t:s0',
        zone: 0,
        use: 2,
        flags: ['ASSURED'],
      });
      expect(b).toMatchObject({ line: 6, zone: 0, use: 2, mark: 0 });
      expect(b!.secctx).toBeUndefined();
      // The same entry printed by `conntrack -L` (no prefix, no zone) parses to the same tuples.
      const asTool = parseConntrack(formatConntrackEntry({ ...plainConntrackEntry(b!), zone: undefined, use: 1 }, 'conntrack'), 't').value.entries[0]!;
      expect(plainConntrackTuple(asTool.orig)).toEqual(plainConntrackTuple(b!.orig));
      expect(plainConntrackTuple(asTool.reply)).toEqual(plainConntrackTuple(b!.reply));
      expect(asTool.raw.startsWith('tcp      6 ')).toBe(true);
    });

    it('udp and icmp lines have no state; icmp has type/code/id; [UNREPLIED] follows the original tuple', () => {
      const [tcp, udp, icmp] = entriesOf('conntrack-L-tcp-udp-icmp-real.txt');
      expect(tcp).toMatchObject({ state: 'ESTABLISHED', timeout: 431915, flags: ['ASSURED'] });
      expect(udp).toMatchObject({ proto: 'udp', state: undefined, timeout: 5, flags: ['UNREPLIED'] });
      expect(udp!.orig).toMatchObject({ dst: '255.255.255.255', dport: 1947 });
      expect(udp!.raw.indexOf('[UNREPLIED]')).toBeLessThan(udp!.raw.indexOf('src=255.255.255.255'));
      expect(icmp).toMatchObject({ proto: 'icmp', protoNum: 1 });
      expect([icmp!.state, icmp!.id]).toEqual([undefined, undefined]);
      expect(icmp!.orig).toMatchObject({ icmpType: 8, icmpCode: 0, icmpId: 3 });
      expect(icmp!.reply).toMatchObject({ icmpType: 0, icmpCode: 0, icmpId: 3 });
    });

    it('[ASSURED] follows the reply tuple, and a SNAT reply tuple is kept as printed', () => {
      const [a] = entriesOf('proc-nf-conntrack-real-lines.txt');
      expect(a!.raw.indexOf('[ASSURED]')).toBeGreaterThan(a!.raw.indexOf('dst=154.186.196.59'));
      expect(a!.reply.dst).toBe('154.186.196.59');
      expect(a!.orig.src).toBe('192.168.1.138');
    });
  });

  describe('quirk 24: stderr in stdout, right-aligned event tags', () => {
    it('the summary in the middle of the AKS output is a count, and the entries around it all parse', () => {
      const r = load('aks-conntrack-L-dns-dnat-3-nodes.txt');
      expect(r.value.trailers).toEqual([{ line: 20, version: '1.4.6', count: 296, unit: 'flow entries', action: 'shown' }]);
      const lines = r.value.entries.map((e) => e.line);
      expect(lines).toContain(19);
      expect(lines).toContain(21);
      // `| grep` kept 10 of the 296 entries conntrack reported.
      expect(r.value.entries.length).toBeLessThan(r.value.reportedCount!);
    });

    it('events keep their kind and the ^C-prefixed summary counts events', () => {
      const r = load('conntrack-E-events-syn-recv.txt');
      expect(r.value.entries).toEqual([]);
      expect(r.value.events!.map((e) => [e.event, e.state, e.flags.join()])).toEqual([
        ['NEW', 'SYN_SENT', 'UNREPLIED'],
        ['UPDATE', 'SYN_RECV', ''],
        ['UPDATE', 'ESTABLISHED', 'ASSURED'],
      ]);
      expect(r.value.trailers[0]).toMatchObject({ version: '1.4.4', unit: 'flow events', count: 3 });
    });
  });

  describe('quirk 25: IPv6 is expanded in /proc and compressed by the tool', () => {
    it('a corpus entry moved to IPv4-mapped IPv6 reads the same from both layouts', () => {
      const b = plainConntrackEntry(entriesOf('proc-nf-conntrack-real-lines.txt')[1]!);
      const v6 = (ip: string) => `::ffff:${ip}`;
      const moved = {
        ...b,
        family: 'ipv6' as const,
        orig: { ...b.orig, src: v6(b.orig.src), dst: v6(b.orig.dst) },
        reply: { ...b.reply, src: v6(b.reply.src), dst: v6(b.reply.dst) },
      };
      const procLine = formatConntrackEntry(moved, 'proc');
      expect(procLine).toContain('src=0000:0000:0000:0000:0000:ffff:0a00:0c0c');
      const toolLine = formatConntrackEntry(moved, 'extended');
      expect(toolLine).toContain('src=::ffff:10.0.12.12');
      const fromProc = parseConntrack(procLine, 'p').value.entries[0]!;
      const fromTool = parseConntrack(toolLine, 't').value.entries[0]!;
      expect(content(fromProc)).toEqual(content(fromTool));
      expect(fromProc.orig.src).toBe('::ffff:10.0.12.12');
    });
  });
});

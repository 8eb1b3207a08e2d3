/**
 * `trace` on a replay reads only the conntrack flows that hold its destination address
 * (src/sources/replay-flows.ts, src/cli/trace-load.ts): the walk and its document are the
 * same as over the whole table, on the fixtures and on a generated capture (issue 23).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { plainIpv4Destination, traceRead } from '../../src/cli/trace-load.js';
import { FlowFilteredReplay, flowLinesOfBytes, flowLinesWith, isPlainIpv4 } from '../../src/sources/replay-flows.js';
import { readTextFile } from '../../src/sources/read-text.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

function generatedIptablesBundle(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-trace-lean-'));
  tmp.push(dir);
  writeGeneratedBundles(dir, { services: 40, endpoints: 3, seed: 'lean', modes: ['iptables'], conntrack: 600 });
  return path.join(dir, 'iptables');
}

async function load(transport: ReplayTransport) {
  const apiText = transport.apiText();
  return (await loadSnapshot({ transport, live: false, ...(apiText !== undefined ? { apiText } : {}) })).snapshot;
}

/** Packets of the capture's own TCP/UDP flows, in both directions, and one that has none. */
function packetsOf(dir: string): { from: string; to: string; flags?: string }[] {
  const text = readFileSync(path.join(dir, 'probes', 'conntrack.stdout'), 'utf8');
  const out: { from: string; to: string; flags?: string }[] = [];
  for (const line of text.split('\n').filter((l) => /^ipv4\s+2 (tcp|udp) /.test(l)).slice(0, 4)) {
    const proto = /^ipv4\s+2 (tcp|udp)/.exec(line)![1]!;
    const t = [...line.matchAll(/src=(\S+) dst=(\S+) sport=(\d+) dport=(\d+)/g)].map((m) => m.slice(1));
    const flags = proto === 'tcp' ? { flags: 'ack' } : {};
    out.push({ from: `${t[0]![0]}:${t[0]![2]}`, to: `${t[0]![1]}:${t[0]![3]}/${proto}`, ...flags });
    out.push({ from: `${t[1]![0]}:${t[1]![2]}`, to: `${t[1]![1]}:${t[1]![3]}/${proto}`, ...flags });
  }
  out.push({ from: '10.244.0.9:41000', to: '10.96.0.1:443/tcp' });
  return out;
}

describe('trace reads only its destination\'s flows', () => {
  it.each([['lab-iptables', () => fixtureDir('lab-iptables')], ['a generated iptables capture', generatedIptablesBundle]])('%s: the same document as over the whole table', async (_name, dirOf) => {
    const dir = dirOf();
    const full = await load(new ReplayTransport(dir));
    const packets = packetsOf(dir);
    expect(packets.length).toBeGreaterThan(4);
    let known = 0;
    for (const p of packets) {
      // traceRead's read: only the flows (and API objects) are narrowed.
      const transport = new ReplayTransport(dir);
      const read = traceRead(p.to, false)!({ transport, live: false, apiText: transport.apiText(), apiOrigin: undefined });
      expect(read.transport).toBeInstanceOf(FlowFilteredReplay);
      const lean = (await loadSnapshot({ transport: read.transport, live: false, ...(read.apiText !== undefined ? { apiText: read.apiText } : {}) })).snapshot;
      expect(lean.conntrack!.value!.entries.length).toBeLessThan(full.conntrack!.value!.entries.length);
      const args = { ...p, output: 'json' as const };
      const leanDoc = runTraceCommand(lean, args);
      expect(leanDoc).toBe(runTraceCommand(full, args));
      expect(runTraceCommand(lean, { ...p })).toBe(runTraceCommand(full, { ...p }));
      if (leanDoc.includes('"existing": true')) known++;
    }
    // The capture's own flows are found (not just missed alike by both loads).
    expect(known).toBeGreaterThan(1);
  });

  it('keeps every line holding the address as a field value, in order, across pieces cut inside a line', () => {
    const text = 'a src=10.0.0.1 dst=10.96.0.10 x\nb src=10.0.0.2 dst=10.96.0.1 y\nc src=10.96.0.1 dst=10.0.0.3 z\nd dst=110.96.0.1 w\ne';
    expect(flowLinesWith(text, '10.96.0.1')).toBe('b src=10.0.0.2 dst=10.96.0.1 y\nc src=10.96.0.1 dst=10.0.0.3 z\n');
    expect(flowLinesWith('x dst=10.96.0.1 ', '10.96.0.1')).toBe('x dst=10.96.0.1 ');
  });

  it.each([['lab-iptables', () => fixtureDir('lab-iptables')], ['a generated iptables capture', generatedIptablesBundle]])('%s: the lines found in the bytes are those found in the decoded text', (_name, dirOf) => {
    const file = path.join(dirOf(), 'probes', 'conntrack.stdout');
    const addresses = packetsOf(path.dirname(path.dirname(file))).map((p) => plainIpv4Destination(p.to)!);
    let found = 0;
    for (const a of addresses) {
      const lines = flowLinesOfBytes(readFileSync(file), a);
      expect(lines).toBe(flowLinesWith(readTextFile(file), a));
      if (lines !== '') found++;
    }
    expect(found).toBeGreaterThan(1);
    // Not ASCII: a BOM, a UTF-8 name, a cut sequence before a newline, no newline at the end.
    const text = '\uFEFFa src=10.0.0.1 dst=10.96.0.1 é\nb src=10.0.0.2 dst=10.0.0.3\nc dst=10.96.0.1 ü';
    const bytes = Buffer.concat([Buffer.from(text, 'utf8'), Buffer.from([0xc3, 0x0a]), Buffer.from('d src=10.96.0.1 x\xff', 'latin1')]);
    const f = path.join(mkdtempSync(path.join(os.tmpdir(), 'nodescope-flow-bytes-')), 'ct');
    tmp.push(path.dirname(f));
    writeFileSync(f, bytes);
    expect(flowLinesOfBytes(bytes, '10.96.0.1')).toBe(flowLinesWith(readTextFile(f), '10.96.0.1'));
    expect(flowLinesOfBytes(bytes, '10.96.0.1')).toContain('é');
  });

  it('narrows only a replay, only for a dotted-quad IPv4 destination, never with --allow-trace', () => {
    expect(plainIpv4Destination('10.96.0.1:443/tcp')).toBe('10.96.0.1');
    expect(plainIpv4Destination(' 10.96.0.1/icmp ')).toBe('10.96.0.1');
    expect(plainIpv4Destination('010.96.0.1:443/tcp')).toBeNull();
    expect(plainIpv4Destination('[fd00::1]:443/tcp')).toBeNull();
    expect(plainIpv4Destination('fd00::1/icmpv6')).toBeNull();
    expect(plainIpv4Destination(undefined)).toBeNull();
    expect(isPlainIpv4('10.96.0.256')).toBe(false);
    expect(traceRead('10.96.0.1:443/tcp', true)).toBeUndefined();
    expect(traceRead('fd00::1/icmpv6', false)).toBeUndefined();
    expect(traceRead('10.96.0.1:443/tcp', false)).toBeDefined();
    expect(() => new FlowFilteredReplay(new ReplayTransport(fixtureDir('lab-iptables')).bundle, 'fd00::1')).toThrow();
  });
});

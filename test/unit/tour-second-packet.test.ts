/**
 * The second-packet tour tells one connection (issue 22 item 7): the flow it shows, the
 * first packet (SYN) and the next one (ACK) have the same ports; the SYN walks the nat
 * chains to the endpoint the captured entry names, the ACK matches that entry and reaches
 * the same endpoint; and a SYN on a TIME_WAIT entry starts a NEW flow, as the kernel
 * reopens a closed connection (nf_conntrack_proto_tcp.c).
 */
import { describe, expect, it } from 'vitest';
import { loadTour } from '../../src/tour/load.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { snapshotOf } from '../helpers/fixtures.js';

const tour = loadTour('second-packet');
const packets = tour.steps.flatMap((s) => (s.target.kind === 'packet' ? [{ capture: s.capture, ...s.target }] : []));
const flow = tour.steps.find((s) => s.target.kind === 'flow' && s.target.service === 'default/web')!;

describe('the second-packet tour', () => {
  it('shows one connection: the flow and both packets have the same source and destination', () => {
    expect(flow.target.kind).toBe('flow');
    const words = flow.target.kind === 'flow' ? flow.target.words : '';
    expect(packets.map((p) => p.flags)).toEqual(['syn', 'ack']);
    for (const p of packets) {
      expect(p.from).toBe(words);
      expect(p.to).toBe(packets[0]!.to);
      expect(p.capture).toBe(flow.capture);
    }
  });

  it('walks the SYN through the nat chains and the ACK through the entry, to the endpoint the entry names', async () => {
    const snapshot = await snapshotOf(flow.capture);
    const [syn, ack] = packets.map((p) => traceFromSnapshot(snapshot, { from: p.from, to: p.to, ...(p.flags ? { flags: p.flags } : {}) }));
    const entry = snapshot.conntrack!.value!.entries.find((e) => e.orig.src === '10.244.0.9' && e.orig.sport === 32982)!;
    expect(entry.state).toBe('TIME_WAIT');
    const answered = `${entry.reply.src}:${entry.reply.sport}`;
    expect(syn!.steps.some((s) => s.kind === 'rule' && /^KUBE-SEP-/.test(s.chain ?? '') && s.matched)).toBe(true);
    expect(syn!.steps[0]!.reason).toMatch(/TIME_WAIT \(a closed connection\); a SYN reopens it/);
    expect(syn!.verdict.endpoint).toBe(answered);
    expect(ack!.steps[0]!.reason).toMatch(/belongs to a known flow/);
    expect(ack!.steps.some((s) => /^KUBE-SEP-/.test(s.chain ?? ''))).toBe(false);
    expect(ack!.verdict.endpoint).toBe(answered);
  });
});

/**
 * The packet header as `trace -o text` and the Step pane print it: before the conntrack
 * hook the walk's ct is `invalid` (nft's `ct state` reads invalid there) and the text says
 * the packet is not tracked yet instead, so it agrees with the conntrack step that follows.
 */
import { describe, expect, it } from 'vitest';
import { traceText } from '../../src/report/trace.js';
import { formatHeader } from '../../src/trace/describe.js';
import { walkPacket } from '../../src/trace/engine.js';
import { labInput, labPod, labService, packet } from './trace-builders.js';

const client = labPod('client');
const { svc: web, port: webPort } = labService('web');

describe.each(['iptables', 'nftables'] as const)('the header words before and after conntrack (%s)', (mode) => {
  const r = walkPacket(labInput(mode), packet({ from: `${client.ip}:40000`, to: `${web.clusterIP}:${webPort.port}/tcp` }));

  it('keeps the walk data: invalid before the conntrack step, new after it', () => {
    expect(r.request.packet.ct).toBe('invalid');
    const conntrack = r.steps.find((s) => s.kind === 'conntrack')!;
    expect(conntrack.reason).toMatch(/NEW flow/);
    expect(conntrack.header.ct).toBe('new');
    expect(r.final.ct).toBe('new');
  });

  it('prints the packet line as not tracked yet and the conntrack step and the leaving packet as ct new', () => {
    const lines = traceText(r).split('\n');
    const packetLine = lines.find((l) => l.startsWith('packet '))!;
    expect(packetLine).toContain('[syn] ct (not tracked yet)');
    expect(packetLine).not.toContain('invalid');
    expect(lines.find((l) => l.startsWith('leaves as: '))).toContain('ct new');
    expect(formatHeader(r.steps.find((s) => s.kind === 'conntrack')!.header)).toContain('[syn] ct new');
  });
});

describe('formatHeader ct words', () => {
  const r = walkPacket(labInput('iptables'), packet({ from: `${client.ip}:40000`, to: `${web.clusterIP}:${webPort.port}/tcp` }));
  it.each(['established', 'related', 'untracked', 'new'] as const)('prints ct %s as the state itself', (ct) => {
    expect(formatHeader({ ...r.final, ct })).toMatch(new RegExp(` ct ${ct}( |$)`));
  });
});

import { describe, expect, it } from 'vitest';
import { compareModes, modeTotal } from '../../src/analysis/compare-modes.js';
import { UserError } from '../../src/errors.js';
import { showCompare } from '../../src/report/compare.js';
import { snapshotOf } from '../helpers/fixtures.js';

describe('show compare', () => {
  it('JSON carries the show head and the whole comparison, stable for scripts', async () => {
    const s = await snapshotOf('lab-nftables');
    const doc = JSON.parse(showCompare(s, 'json')) as { node: string; mode: string; compare: ReturnType<typeof compareModes> };
    expect(doc.node).toBe('lab-node');
    expect(doc.mode).toBe('nftables');
    expect(doc.compare).toEqual(JSON.parse(JSON.stringify(compareModes(s))));
    expect(doc.compare!.actual.map((a) => a.mode)).toEqual(['nftables']);
  });

  it('text shows each mode\'s counts, the node\'s equal count, and per Service costs', async () => {
    const s = await snapshotOf('lab-cilium');
    const cmp = compareModes(s)!;
    const text = showCompare(s, 'text');
    const cilium = text.split('\n').find((l) => l.startsWith('cilium '))!;
    expect(cilium).toContain(`${modeTotal(cmp.predicted.cilium)} (equal)`);
    for (const p of cmp.perService) expect(text).toContain(p.service);
    expect(text).toContain('inferred:');
  });

  it('with --service lists the chains and frontends that Service adds', async () => {
    const text = showCompare(await snapshotOf('lab-iptables'), 'text', 'default/web');
    expect(text).toMatch(/^iptables: .*KUBE-SVC-[A-Z2-7]{16}/m);
    expect(text).toMatch(/^nftables: .*service-[A-Z2-7]{8}-default\/web\/tcp\/http/m);
    expect(text).toMatch(/^cilium: 10\.96\.12\.34:80\/TCP \(ClusterIP\)/m);
  });

  it('with --service on a Service without endpoints says the rules and elements it adds to existing chains and sets', async () => {
    const text = showCompare(await snapshotOf('lab-iptables'), 'text', 'default/empty');
    expect(text).toMatch(/^iptables: \(no chain of its own\); adds to existing: filter\/KUBE-SERVICES \+1$/m);
    expect(text).toMatch(/^nftables: \(no chain of its own\); adds to existing: .*@no-endpoint-services \+1$/m);
  });

  it('refuses a source without API objects and an unknown Service, saying what to do', async () => {
    const s = await snapshotOf('lab-iptables');
    expect(() => showCompare({ ...s, api: null }, 'text')).toThrow(UserError);
    expect(() => showCompare(s, 'text', 'default/nope')).toThrow(UserError);
    expect(() => showCompare(s, 'text', 'default/web-headless')).toThrow(UserError);
  });
});

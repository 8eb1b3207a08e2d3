/**
 * The dashboard's words and checks that are pure: the gauge percentages (rounded as the
 * Conntrack pane rounds them, and handed to blessed-contrib so its fraction rule does not
 * bite), and the `--service` check that runs before the screen opens.
 */
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { runDash } from '../../src/dash/run.js';
import { gaugeValue, percentText } from '../../src/dash/series.js';
import { canCheckService, dashServiceError } from '../../src/dash/service-check.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { staticSession } from '../../src/collect/session.js';
import { snapshotOf } from '../helpers/fixtures.js';

const withoutApi = (s: NodeSnapshot): NodeSnapshot => ({ ...s, api: null });

describe('percentText', () => {
  it('says <0.1% for a small use instead of rounding it up, one decimal otherwise', () => {
    expect(percentText(16, 262_144)).toBe('<0.1%');
    expect(percentText(1000, 262_144)).toBe(`${((1000 / 262_144) * 100).toFixed(1)}%`);
    expect(percentText(0, 262_144)).toBe('0.0%');
    expect(percentText(300_000, 262_144)).toBe('100.0%');
    expect(percentText(16, null)).toBe('');
  });
});

describe('gaugeValue', () => {
  // blessed-contrib's gauge.setPercent: `if (percent < 1.001) percent = percent * 100`.
  const gaugeReads = (v: number) => (v < 1.001 ? v * 100 : v);
  it.each([0, (16 / 262_144) * 100, 0.5, 1, 1.0005, 1.5, 42, 100])('the gauge draws %f%% as that percentage', (p) => {
    expect(gaugeReads(gaugeValue(p))).toBeCloseTo(p, 9);
  });
});

describe('dash --service check', () => {
  it('knows a Service of the API objects, and names the closest ones for a typo', async () => {
    const snap = await snapshotOf('lab-iptables');
    expect(dashServiceError(snap, 'default/web')).toBeNull();
    const e = dashServiceError(snap, 'default/nope');
    expect(e).toBeInstanceOf(UserError);
    expect(e!.message).toBe('no Service default/nope in the API objects');
    expect(e!.hint).toMatch(/^one of .*default\/web/);
  });

  it('without API objects, looks the Service up in the kube-proxy rules (iptables and nftables)', async () => {
    for (const name of ['lab-iptables', 'lab-nftables']) {
      const snap = withoutApi(await snapshotOf(name));
      expect(dashServiceError(snap, 'default/web'), name).toBeNull();
      expect(dashServiceError(snap, 'default/nope')?.message, name).toBe('no Service default/nope in the kube-proxy rules of this node');
    }
  });

  it('without API objects on a Cilium node, leaves it to the dashboard (no per-endpoint counter to look in)', async () => {
    expect(dashServiceError(withoutApi(await snapshotOf('lab-cilium')), 'default/nope')).toBeNull();
  });

  it('waits for API objects, or for every part when there are none', async () => {
    const snap = await snapshotOf('lab-iptables');
    expect(canCheckService(null)).toBe(false);
    expect(canCheckService({ ...withoutApi(snap), pending: ['iptables'] })).toBe(false);
    expect(canCheckService(withoutApi(snap))).toBe(true);
    expect(canCheckService({ ...snap, pending: ['iptables'] })).toBe(true);
  });

  it('runDash rejects with the UserError before opening a screen', async () => {
    const snap = await snapshotOf('lab-iptables');
    const dash = runDash({ session: staticSession(snap), service: 'default/nope', lang: 'en' });
    await expect(dash.done).rejects.toThrow(/no Service default\/nope/);
  });

  it('runDash waits for data and can be stopped before the screen opens', async () => {
    const dash = runDash({ session: staticSession(null), service: 'default/web', lang: 'en' });
    dash.stop();
    await expect(dash.done).resolves.toBeUndefined();
  });
});

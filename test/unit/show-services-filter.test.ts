/** `show services --service NS/NAME`: that Service alone, or a UserError naming the closest ones. */
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { closeNames, editDistance } from '../../src/model/close-names.js';
import { showServices } from '../../src/report/services.js';
import { snapshotOf } from '../helpers/fixtures.js';

describe('closeNames', () => {
  it('measures edits', () => {
    expect(editDistance('web', 'web')).toBe(0);
    expect(editDistance('default/web', 'default/wbe')).toBe(2);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('orders near names first and keeps the same name in another namespace', () => {
    const names = ['default/web', 'kube-system/kube-dns', 'default/empty', 'prod/web'];
    expect(closeNames('default/wbe', names)[0]).toBe('default/web');
    expect(closeNames('staging/web', names)).toEqual(expect.arrayContaining(['default/web', 'prod/web']));
    expect(closeNames('zzz/qqqqqqqq', names)).toEqual([]);
  });
});

describe('showServices with a Service', () => {
  it('shows only the named Service', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    const all = JSON.parse(showServices(snapshot, 'json')).services as { namespace: string; name: string }[];
    expect(all.length).toBeGreaterThan(1);
    const one = JSON.parse(showServices(snapshot, 'json', `${all[0]!.namespace}/${all[0]!.name}`)).services;
    expect(one).toEqual([all[0]]);
  });

  it('throws a UserError for a Service that is not there, listing close names in the hint', async () => {
    const snapshot = await snapshotOf('lab-iptables');
    let err: unknown;
    try {
      showServices(snapshot, 'text', 'default/wbe');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toContain('default/wbe');
    expect((err as UserError).hint).toContain('default/web');
  });
});

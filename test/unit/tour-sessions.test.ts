import { describe, expect, it } from 'vitest';
import { loadTour } from '../../src/tour/load.js';
import { tourCaptures } from '../../src/tour/model.js';
import { tourSessions } from '../../src/tour/sessions.js';
import type { SessionLike } from '../../src/collect/session.js';

/** Resolves when `session` has a complete snapshot (no part still pending) or an error (at most 10 s). */
function loaded(session: SessionLike): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      const s = session.getState();
      if ((s.snapshot && !s.snapshot.pending?.length) || s.error) {
        unsubscribe();
        resolve();
      }
    };
    const unsubscribe = session.subscribe(done);
    setTimeout(() => reject(new Error('session never loaded')), 10_000);
    done();
  });
}

describe('tourSessions', () => {
  it('opens each capture of the tour once, lazily, reading as loading until the bundle is read', async () => {
    const tour = loadTour('where-rewritten');
    const sessions = tourSessions(tour);
    const first = sessions.session('lab-iptables');
    expect(first.getState()).toMatchObject({ snapshot: null, loading: true, error: null });
    expect(first.getState()).toBe(first.getState()); // stable while loading (React's useSyncExternalStore needs it)
    await loaded(first);
    expect(first.getState().snapshot?.meta.node).toBe('lab-node');
    expect(first.getState().snapshot?.meta.source.live).toBe(false);
    expect(sessions.session('lab-iptables')).toBe(first);
    const nft = sessions.session('lab-nftables');
    await loaded(nft);
    expect(nft.getState().snapshot?.nft?.value?.tables.some((t) => t.name === 'kube-proxy')).toBe(true);
    await sessions.stop();
  });

  it('answers the DNS pane from the bundle\'s recorded answers', async () => {
    const tour = loadTour('no-endpoints');
    const sessions = tourSessions(tour);
    const s = sessions.session(tour.capture);
    await loaded(s);
    const answered = new Promise<void>((resolve) => {
      const off = s.subscribe(() => {
        const dns = s.getState().dns;
        if (dns && !dns.loading) {
          off();
          resolve();
        }
      });
    });
    s.resolveDns?.('default/empty');
    await answered;
    expect(s.getState().dns).toMatchObject({ service: 'default/empty', error: null });
    await sessions.stop();
  });

  it('refuses a capture the tour does not name (a bug in the caller)', () => {
    const tour = loadTour('second-packet');
    expect(tourCaptures(tour)).not.toContain('lab-cilium');
    expect(() => tourSessions(tour).session('lab-cilium')).toThrow(/does not use capture lab-cilium/);
  });

  it('reports a bundle that cannot be read as the session\'s error, not a crash', async () => {
    const tour = loadTour('second-packet');
    const sessions = tourSessions(tour, '/nonexistent-fixtures');
    const s = sessions.session(tour.capture);
    await loaded(s);
    expect(s.getState()).toMatchObject({ snapshot: null, loading: false });
    expect(s.getState().error).toBeTruthy();
  });
});

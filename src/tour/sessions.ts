/**
 * The sessions a tour runs on: one replay session per fixture bundle its steps name
 * (`fixtures/<capture>`), read through the same pipeline as `nodescope --replay DIR`.
 * Sessions start lazily, the first time a step asks for their capture, so a tour opens
 * on its first step without reading every bundle first.
 */
import path from 'node:path';
import { packageRoot } from '../paths.js';
import { Session, type SessionLike } from '../collect/session.js';
import { openReplaySession } from '../collect/replay-session.js';
import { tourCaptures, type Tour } from './model.js';

/** The running sessions of a tour; `session(capture)` starts the capture's on first use. */
export interface TourSessions {
  readonly tour: Tour;
  session(capture: string): SessionLike;
  /** Stops every session that was started. */
  stop(): Promise<void>;
}

/** A session that is still being opened: reads as loading, then forwards to the real one. */
class PendingSession implements SessionLike {
  private inner: Session | null = null;
  private error: string | null = null;
  private readonly listeners = new Set<() => void>();

  constructor(open: () => Promise<Session>) {
    open()
      .then(async (s) => {
        this.inner = s;
        s.subscribe(() => this.emit());
        await s.start();
        this.emit();
      })
      .catch((e: Error) => {
        this.error = e.message;
        this.emit();
      });
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }

  private readonly loading = { snapshot: null, rates: new Map(), loading: true, refreshing: false, error: null, dataAt: null } as const;
  private failed: ReturnType<SessionLike['getState']> | null = null;

  getState(): ReturnType<SessionLike['getState']> {
    if (this.inner) return this.inner.getState();
    if (this.error !== null) return (this.failed ??= { ...this.loading, loading: false, error: this.error });
    return this.loading;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  refreshNow(all?: boolean): void {
    this.inner?.refreshNow(all);
  }

  resolveDns(service: string): void {
    // Asked before the bundle was read: asked again once it is (the app re-asks on a new snapshot).
    this.inner?.resolveDns(service);
  }

  async stop(): Promise<void> {
    await this.inner?.stop();
  }
}

/**
 * Sessions over the tour's fixture bundles (under `fixturesDir`, default the package's
 * `fixtures/`). A capture the tour does not name is refused with a thrown `Error` (a bug:
 * the app only asks for step captures).
 */
export function tourSessions(tour: Tour, fixturesDir = path.join(packageRoot(), 'fixtures')): TourSessions {
  const names = new Set(tourCaptures(tour));
  const sessions = new Map<string, PendingSession>();
  return {
    tour,
    session(capture: string): SessionLike {
      if (!names.has(capture)) throw new Error(`BUG: tour ${tour.id} does not use capture ${capture}`);
      let s = sessions.get(capture);
      if (!s) {
        s = new PendingSession(() => openReplaySession(path.join(fixturesDir, capture)));
        sessions.set(capture, s);
      }
      return s;
    },
    async stop(): Promise<void> {
      await Promise.all([...sessions.values()].map((s) => s.stop()));
    },
  };
}

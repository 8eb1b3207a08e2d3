import type { Session } from '../../src/collect/session.js';

/** Resolves once `predicate` holds, checked now and after each of the session's updates (no timeout: the test's own limit ends a wait that never comes). */
export function sessionUntil(session: Session, predicate: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    if (predicate()) return resolve();
    const off = session.subscribe(() => {
      if (predicate()) {
        off();
        resolve();
      }
    });
  });
}

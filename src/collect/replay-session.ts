/**
 * A session over a capture bundle on disk (`--replay DIR`): what tours open for each
 * capture they walk, without reaching into the sources themselves.
 */
import { openSource } from '../sources/open.js';
import { Session } from './session.js';

/**
 * Opens the capture bundle in `dir` and returns a (not live) {@link Session} over it, with
 * the bundle's API objects and Cilium agent when it recorded them. Throws what
 * `openSource` throws for a missing or unreadable bundle (`UserError`).
 */
export async function openReplaySession(dir: string): Promise<Session> {
  const source = await openSource({ replay: dir });
  return new Session({
    transport: source.transport,
    live: false,
    ...(source.apiText !== undefined ? { apiText: source.apiText } : {}),
    ...(source.apiOrigin ? { apiOrigin: source.apiOrigin } : {}),
    ...(source.ciliumAgent ? { ciliumAgent: source.ciliumAgent } : {}),
  });
}

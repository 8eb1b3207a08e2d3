/**
 * The room above the single-node session where a set of nodes lives (many nodes at once).
 * Only the contract is here: nothing implements it yet, and nothing below this room may
 * import it (.dependency-cruiser.cjs) — the single-node code stays unaware of fleets.
 */
import type { SessionLike } from '../collect/session.js';

/** One node of a set: the name it is known by and its own single-node session. */
export interface FleetMember {
  /** The node's name (Kubernetes Node name, SSH host or capture directory). */
  readonly node: string;
  readonly session: SessionLike;
}

/**
 * A set of nodes, each with its own session. `members` is in a stable order (by node name);
 * `stop` ends every member's session (each undoes what it set up, as one session does).
 */
export interface NodeSet {
  readonly members: readonly FleetMember[];
  stop(): Promise<void>;
}

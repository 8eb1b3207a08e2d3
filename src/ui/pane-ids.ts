/**
 * The pane ids in tab order. The registry (src/ui/pane-registry.tsx) holds one entry for
 * each, in this order; the list sits apart so the reducer (state.ts) needs no pane module.
 */
export const PANE_IDS = ['services', 'rules', 'lb', 'conntrack', 'dns', 'step', 'compare', 'ipvs'] as const;

/** A pane id. */
export type PaneId = (typeof PANE_IDS)[number];

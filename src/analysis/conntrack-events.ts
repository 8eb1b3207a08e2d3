/**
 * `conntrack -E` events grouped by the flow they are about. An event line is a change to
 * one conntrack entry (`[NEW]` when it is created, `[UPDATE]` when its state, flags or
 * mark change, `[DESTROY]` when it is removed: conntrack-tools `src/conntrack.c` event_cb,
 * the kernel's `nf_conntrack_event` types IPCT_NEW, IPCT_* updates and IPCT_DESTROY), so
 * four events of one connection are one flow with four events, and a destroyed flow is not
 * live. Pure.
 */
import type { ConntrackEntry, ConntrackEventKind, ConntrackTuple } from '../model/conntrack.js';

/**
 * One event in a flow's history: its kind, its `-o timestamp` time (`seconds.micro` as
 * printed, Unix time on the node's clock; null without `-o timestamp`), the line it was
 * read from (1-based) and the whole event entry (state, flags, counters as printed then).
 */
export interface ConntrackFlowEvent {
  readonly type: ConntrackEventKind;
  readonly time: string | null;
  readonly line: number;
  readonly entry: ConntrackEntry;
}

/**
 * One flow seen through its events: `flow` numbers flows from 1 in the order their first
 * event came; `orig`/`reply` are the tuples of its latest event; `events` in time order;
 * `ended`: its last event is `[DESTROY]` (the entry is gone from the table).
 */
export interface ConntrackEventFlow {
  readonly flow: number;
  readonly family: ConntrackEntry['family'];
  readonly proto: ConntrackEntry['proto'];
  readonly orig: ConntrackTuple;
  readonly reply: ConntrackTuple;
  readonly events: readonly ConntrackFlowEvent[];
  readonly ended: boolean;
}

/**
 * The key of a flow: what conntrack's hash is built from (nf_conntrack_core.c
 * hash_conntrack_raw: the original tuple and the zone), as text.
 */
function flowKey(e: ConntrackEntry): string {
  const o = e.orig;
  return [e.family, e.proto, o.src, o.dst, o.sport ?? '', o.dport ?? '', o.icmpType ?? '', o.icmpCode ?? '', o.icmpId ?? '', o.srcKey ?? '', o.dstKey ?? '', e.zone ?? o.zone ?? ''].join('|');
}

function timeValue(t: string | undefined): number {
  return t === undefined ? Number.NaN : Number(t);
}

/**
 * Groups `events` (entries with `event` set, any order) into flows. Events are put in time
 * order when every event has a `-o timestamp` time, else kept in line order (conntrack prints
 * them as the kernel sends them). A `[NEW]` for a tuple whose flow was destroyed — or already
 * began with a `[NEW]` — starts a new flow (the kernel reused the tuple). Never throws.
 */
export function conntrackEventFlows(events: readonly ConntrackEntry[]): ConntrackEventFlow[] {
  const timed = events.length > 0 && events.every((e) => e.eventTime !== undefined && Number.isFinite(timeValue(e.eventTime)));
  const order = [...events].sort((a, b) => (timed ? timeValue(a.eventTime) - timeValue(b.eventTime) : 0) || a.line - b.line);
  const flows: { key: string; events: ConntrackFlowEvent[]; first: ConntrackEntry; last: ConntrackEntry }[] = [];
  const open = new Map<string, number>();
  for (const e of order) {
    if (e.event === undefined) continue;
    const key = flowKey(e);
    let at = open.get(key);
    const current = at === undefined ? undefined : flows[at];
    if (current === undefined || (e.event === 'NEW' && current.events.some((x) => x.type === 'NEW' || x.type === 'DESTROY'))) {
      at = flows.length;
      flows.push({ key, events: [], first: e, last: e });
      open.set(key, at);
    }
    const f = flows[at!]!;
    f.events.push({ type: e.event, time: e.eventTime ?? null, line: e.line, entry: e });
    f.last = e;
    if (e.event === 'DESTROY') open.delete(key);
  }
  return flows.map((f, i) => ({
    flow: i + 1,
    family: f.first.family,
    proto: f.first.proto,
    orig: f.last.orig,
    reply: f.last.reply,
    events: f.events,
    ended: f.last.event === 'DESTROY',
  }));
}

/**
 * Every name of one lab instance, derived from its prefix: network namespaces, veth
 * interface names and the state directory. Two instances with different prefixes
 * (e.g. a developer's `ns-` and a test's `nslt-`) never share a name.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { LabScenario, ScenarioPod } from '../../src/analysis/lab-scenario-types.js';
import { LabError } from './lab-error.js';
import { LAB_SCENARIO } from './scenario.js';
import type { LabDnsExtras } from './servers.js';

/** Root of all lab state directories. */
export const LAB_STATE_ROOT = '/run/nodescope-lab';

/** Default prefix of namespace names (`ns-node`, `ns-outside`, …). */
export const DEFAULT_PREFIX = 'ns-';

/** How to address one lab instance: its prefix and the scenario it runs. */
export interface LabOptions {
  /** Namespace name prefix; default `ns-`. Letters, digits, `-`, `_`, `.`; at most 24 characters. */
  readonly prefix?: string;
  /** The scenario; default {@link LAB_SCENARIO}. */
  readonly scenario?: LabScenario;
  /** Extra records for the DNS servers of the dns pods (see `LabDnsExtras` in servers.ts); default none. */
  readonly dns?: LabDnsExtras;
}

/** The names of one lab instance. `pods` maps a pod `key` (`web-1`) to its namespace. */
export interface LabNames {
  readonly prefix: string;
  /** Namespace of the node kube-proxy runs on (`scenario.nodeName`): `<prefix>node`. */
  readonly node: string;
  /** Namespace of each node by node name; the second node is `<prefix>node2`, and so on. */
  readonly nodes: Readonly<Record<string, string>>;
  /** Namespace of the host outside the cluster: `<prefix>outside` (holds bridge `br0`). */
  readonly outside: string;
  readonly pods: Readonly<Record<string, string>>;
  /** All namespaces of the instance, nodes and outside first. */
  readonly all: readonly string[];
  /** `/run/nodescope-lab/<prefix>`. */
  readonly stateDir: string;
}

/** Throws {@link LabError} unless `prefix` is a safe, short namespace-name prefix. */
export function checkPrefix(prefix: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,23}$/.test(prefix)) {
    throw new LabError(`invalid lab prefix ${JSON.stringify(prefix)}`, 'use letters, digits, "-", "_" or "." (at most 24 characters)');
  }
}

/** Derives every name of the instance with `prefix` running `scenario`. */
export function labNames(prefix: string = DEFAULT_PREFIX, scenario: LabScenario = LAB_SCENARIO): LabNames {
  checkPrefix(prefix);
  const nodes: Record<string, string> = {};
  const others = scenario.nodes.filter((n) => n.name !== scenario.nodeName);
  nodes[scenario.nodeName] = `${prefix}node`;
  others.forEach((n, i) => {
    nodes[n.name] = `${prefix}node${i + 2}`;
  });
  const pods: Record<string, string> = {};
  for (const p of scenario.pods) pods[p.key] = `${prefix}${p.key}`;
  const outside = `${prefix}outside`;
  return {
    prefix,
    node: `${prefix}node`,
    nodes,
    outside,
    pods,
    all: [...Object.values(nodes), outside, ...Object.values(pods)],
    stateDir: path.join(LAB_STATE_ROOT, prefix),
  };
}

/**
 * The node-side veth name of a pod, as Calico names it: `cali` + the first 11 hex digits
 * of sha1(`namespace.podName`) — 15 characters, the interface name limit.
 */
export function caliName(pod: ScenarioPod): string {
  return `cali${createHash('sha1').update(`${pod.namespace}.${pod.name}`).digest('hex').slice(0, 11)}`;
}

/**
 * The on-disk state of one lab instance (`/run/nodescope-lab/<prefix>/state.json`):
 * which proxy mode is loaded and which processes the lab started, so `down` (from any
 * process, e.g. the CLI after a test run) can stop exactly those processes.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** kube-proxy's modes the lab can load into the node namespace. */
export type ProxyMode = 'iptables' | 'nftables';

/** Every mode the lab can load: kube-proxy's, or Cilium with kube-proxy replacement (CILIUM_* chains, LB BPF maps). */
export type LabMode = ProxyMode | 'cilium';

/**
 * A process the lab started: `key` (e.g. `http-web-1`, `dns-coredns-1`), the namespace it
 * runs in, its pid, its argv (inside the namespace) and its log file (stdout+stderr).
 */
export interface LabProcess {
  readonly key: string;
  readonly ns: string;
  readonly pid: number;
  readonly argv: readonly string[];
  readonly log: string;
}

/**
 * - `mode`: the proxy mode whose rules are loaded, or `null` before loading.
 * - `rulesFile`: the exact text loaded (iptables-restore or nft -f input).
 * - `apiObjects`: path of the `kubectl get … -o json` List the lab wrote.
 * - `bpfRoot`: in Cilium mode, the directory holding the pinned LB maps (`--bpf-root`).
 * - `updatedAt`: ISO-8601 UTC time of the last change.
 */
export interface LabState {
  readonly prefix: string;
  readonly mode: LabMode | null;
  readonly namespaces: readonly string[];
  readonly processes: readonly LabProcess[];
  readonly rulesFile: string | null;
  readonly apiObjects: string | null;
  readonly bpfRoot?: string | null;
  readonly updatedAt: string;
}

/** Path of the state file in `stateDir`. */
export function stateFile(stateDir: string): string {
  return path.join(stateDir, 'state.json');
}

/** Reads the state, or `null` when there is none or it does not parse (a torn write). */
export function readState(stateDir: string): LabState | null {
  try {
    return JSON.parse(readFileSync(stateFile(stateDir), 'utf8')) as LabState;
  } catch {
    return null;
  }
}

/** Writes `state` (creating `stateDir`), stamping `updatedAt`. */
export function writeState(stateDir: string, state: Omit<LabState, 'updatedAt'>): LabState {
  mkdirSync(stateDir, { recursive: true });
  const full: LabState = { ...state, updatedAt: new Date().toISOString() };
  writeFileSync(stateFile(stateDir), `${JSON.stringify(full, null, 2)}\n`);
  return full;
}

/** Applies `change` to the current state (or a fresh one) and writes the result. */
export function updateState(stateDir: string, prefix: string, change: (s: LabState) => Omit<LabState, 'updatedAt'>): LabState {
  const current = readState(stateDir) ?? {
    prefix,
    mode: null,
    namespaces: [],
    processes: [],
    rulesFile: null,
    apiObjects: null,
    updatedAt: new Date().toISOString(),
  };
  return writeState(stateDir, change(current));
}

/** Removes the state directory and everything in it. */
export function removeStateDir(stateDir: string): void {
  rmSync(stateDir, { recursive: true, force: true });
}

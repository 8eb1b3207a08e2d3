/**
 * The node lab in Cilium mode: real BPF hash maps with Cilium's names and layouts, pinned
 * under a lab root and filled with the workshop scenario through bpftool — the same bytes
 * cilium-agent would write (`encodeLbTable`).
 *
 *     bpftool map create <root>/cilium_lb4_services_v2 type hash key 12 value 12 entries N name cilium_lb4_services_v2
 *     bpftool batch file <cmds>      # map update pinned <path> key hex … value hex …
 *
 * Kernel fact recorded here: BPF object names are cut to 15 bytes (BPF_OBJ_NAME_LEN 16 with
 * the NUL), so `bpftool map show` reports `cilium_lb4_serv`; the pin path keeps the full
 * name, which is why nodescope identifies maps by pin path (see `kernelMapName`).
 *
 * Needs root and bpftool; mounts bpffs at `bpffs` (default /sys/fs/bpf) when it is not
 * mounted. Everything it creates is under `root` and `removeLabCiliumMaps` deletes exactly that.
 * The lab's Cilium mode pins under its own bpffs mount in the state directory: `ip netns exec`
 * mounts a fresh sysfs on /sys, which hides /sys/fs/bpf from commands run in the node
 * namespace (checked with iproute2 6.1), while other mounts stay visible.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LbTable } from '../../src/model/cilium.js';
import type { EncodedLbMap } from '../../src/parsers/bpftool-lb-encode.js';
import { encodeLbTable } from '../../src/parsers/bpftool-lb-encode.js';
import { labCiliumTable } from './cilium-scenario.js';

export { LAB_CILIUM_SERVICES, LAB_NODE_IP, labCiliumTable } from './cilium-scenario.js';

/** Where bpffs is mounted. */
export const BPFFS = '/sys/fs/bpf';
/** Default pin directory of the lab's maps (Cilium itself uses `/sys/fs/bpf/tc/globals`). */
export const LAB_CILIUM_ROOT = '/sys/fs/bpf/nodescope-lab/tc/globals';

/**
 * Options: `root` (pin directory, must be under `bpffs`), `bpffs` (where a bpffs is or gets
 * mounted, default /sys/fs/bpf), `table` (default: the workshop scenario), `maxEntries` per map.
 */
export interface LabCiliumMapsOptions {
  readonly root?: string;
  readonly bpffs?: string;
  readonly table?: LbTable;
  readonly maxEntries?: number;
}

/** One created map: full name, pin path, the kernel's (cut) name, sizes in bytes, entries written. */
export interface LabCiliumMap {
  readonly name: string;
  readonly path: string;
  readonly kernelName: string;
  readonly keySize: number;
  readonly valueSize: number;
  readonly entries: number;
}

/** What `createLabCiliumMaps` made. */
export interface LabCiliumMaps {
  readonly root: string;
  readonly table: LbTable;
  readonly maps: readonly LabCiliumMap[];
}

function run(argv: readonly string[]): string {
  const r = spawnSync(argv[0] ?? '', argv.slice(1), { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr || r.error?.message}`);
  return r.stdout;
}

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ');

/** True when a bpffs is mounted exactly at `dir` (per /proc/mounts). */
export function bpffsMounted(dir: string): boolean {
  const mounts = run(['cat', '/proc/mounts']);
  return mounts.split('\n').some((l) => l.split(' ')[1] === dir && l.split(' ')[2] === 'bpf');
}

/** Mounts a bpffs at `dir` (default /sys/fs/bpf) unless one already is; each mount is its own instance. */
export function ensureBpffs(dir: string = BPFFS): void {
  if (bpffsMounted(dir)) return;
  mkdirSync(dir, { recursive: true });
  run(['mount', '-t', 'bpf', 'bpf', dir]);
}

function mountOf(opts: LabCiliumMapsOptions): string {
  return path.resolve(opts.bpffs ?? BPFFS);
}

function rootOf(opts: LabCiliumMapsOptions): string {
  const root = path.resolve(opts.root ?? LAB_CILIUM_ROOT);
  const mount = mountOf(opts);
  if (!root.startsWith(`${mount}/`)) throw new Error(`lab map root ${root} is not under ${mount}`);
  return root;
}

/**
 * Creates and pins the six current LB maps under `root` and writes the table's entries.
 * Removes what exists there first (a previous run that died). Throws when bpftool fails.
 */
export function createLabCiliumMaps(opts: LabCiliumMapsOptions = {}): LabCiliumMaps {
  const root = rootOf(opts);
  const table = opts.table ?? labCiliumTable();
  ensureBpffs(mountOf(opts));
  removeLabCiliumMaps({ root, bpffs: mountOf(opts) });
  mkdirSync(root, { recursive: true });
  const encoded: EncodedLbMap[] = encodeLbTable(table);
  const work = mkdtempSync(path.join(os.tmpdir(), 'nodescope-cilium-'));
  try {
    const cmds: string[] = [];
    const maps = encoded.map((m) => {
      const pin = path.join(root, m.name);
      const entries = String(opts.maxEntries ?? 256);
      run(['bpftool', 'map', 'create', pin, 'type', 'hash', 'key', String(m.keySize), 'value', String(m.valueSize), 'entries', entries, 'name', m.name]);
      for (const e of m.entries) cmds.push(`map update pinned ${pin} key hex ${hex(e.key)} value hex ${hex(e.value)}`);
      const shown = JSON.parse(run(['bpftool', '-j', 'map', 'show', 'pinned', pin])) as { name?: string };
      return { name: m.name, path: pin, kernelName: shown.name ?? '', keySize: m.keySize, valueSize: m.valueSize, entries: m.entries.length };
    });
    if (cmds.length > 0) {
      const batch = path.join(work, 'updates');
      writeFileSync(batch, cmds.join('\n') + '\n');
      run(['bpftool', 'batch', 'file', batch]);
    }
    return { root, table, maps };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `bpftool -j map dump pinned <path>` stdout. */
export function dumpLabCiliumMap(pin: string): string {
  return run(['bpftool', '-j', 'map', 'dump', 'pinned', pin]);
}

/**
 * Unpins every map under `root` (the kernel frees a map when its last reference goes) and
 * removes the directories the lab created, up to but not including the bpffs mount point.
 */
export function removeLabCiliumMaps(opts: LabCiliumMapsOptions = {}): void {
  const root = rootOf(opts);
  const mount = mountOf(opts);
  if (existsSync(root)) for (const f of readdirSync(root)) rmSync(path.join(root, f), { force: true });
  for (let dir = root; dir.startsWith(`${mount}/`); dir = path.dirname(dir)) {
    if (!existsSync(dir) || readdirSync(dir).length > 0) break;
    rmdirSync(dir);
  }
}

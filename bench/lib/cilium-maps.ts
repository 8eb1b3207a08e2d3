/**
 * The live bench's Cilium lab: a generated capture's LB map dumps (`bpftool -j map dump`
 * JSON, `probes/bpf-lb*.stdout`) loaded into real BPF hash maps pinned under a bpffs mount
 * of the bench's own (`mount -t bpf`), with the pin names the catalog's probes read
 * (commands/probes.yaml). Entries are written with one `bpftool batch file` of
 * `map update pinned P key hex … value hex …` lines. As root only.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Probe id → the pin name its argv reads (commands/probes.yaml, current Cilium layouts). */
export const CILIUM_PINS: Readonly<Record<string, string>> = {
  'bpf-lb4-services': 'cilium_lb4_services_v2',
  'bpf-lb4-backends': 'cilium_lb4_backends_v3',
  'bpf-lb4-reverse-nat': 'cilium_lb4_reverse_nat',
  'bpf-lb6-services': 'cilium_lb6_services_v2',
  'bpf-lb6-backends': 'cilium_lb6_backends_v3',
  'bpf-lb6-reverse-nat': 'cilium_lb6_reverse_nat',
};

/** Key and value sizes of the IPv6 maps, for a dump without entries (Cilium's lb6 structs). */
const EMPTY_SIZES: Readonly<Record<string, readonly [number, number]>> = { 'bpf-lb6-services': [24, 12], 'bpf-lb6-backends': [4, 24], 'bpf-lb6-reverse-nat': [2, 18] };

function run(argv: readonly string[]): void {
  const r = spawnSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr?.toString().slice(-300)}`);
}

/** What {@link loadCiliumMaps} made: the bpffs mount, the pin directory (`--bpf-root`), the pins and entry counts. */
export interface BenchCiliumMaps {
  readonly mount: string;
  readonly root: string;
  readonly maps: readonly { readonly probe: string; readonly pin: string; readonly entries: number }[];
}

/**
 * Mounts a bpffs at `mount` (created), creates the maps of `probesDir`'s dumps under
 * `mount/tc/globals` and fills them. A map whose dump is empty is created empty (one slot).
 * Throws when bpftool or mount fails; {@link unloadCiliumMaps} undoes what was made.
 */
export function loadCiliumMaps(probesDir: string, mount: string): BenchCiliumMaps {
  mkdirSync(mount, { recursive: true });
  run(['mount', '-t', 'bpf', 'bpf', mount]);
  const root = path.join(mount, 'tc', 'globals');
  mkdirSync(root, { recursive: true });
  const lines: string[] = [];
  const maps = Object.entries(CILIUM_PINS).flatMap(([probe, name]) => {
    const file = path.join(probesDir, `${probe}.stdout`);
    if (!existsSync(file)) return [];
    const entries = JSON.parse(readFileSync(file, 'utf8')) as { key: string[]; value: string[] }[];
    const first = entries[0];
    // Sizes of an empty dump: the current layouts' (src/parsers/bpftool-lb-encode.ts).
    const sizes = first ? [first.key.length, first.value.length] : (EMPTY_SIZES[probe] ?? [4, 4]);
    const pin = path.join(root, name);
    run(['bpftool', 'map', 'create', pin, 'type', 'hash', 'key', String(sizes[0]), 'value', String(sizes[1]), 'entries', String(Math.max(1, entries.length)), 'name', name.slice(0, 15)]);
    const hex = (b: readonly string[]) => b.map((x) => x.replace(/^0x/, '')).join(' ');
    for (const e of entries) lines.push(`map update pinned ${pin} key hex ${hex(e.key)} value hex ${hex(e.value)}`);
    return [{ probe, pin, entries: entries.length }];
  });
  const batch = path.join(mount, '..', `updates-${process.pid}`);
  writeFileSync(batch, lines.join('\n') + '\n');
  try {
    if (lines.length) run(['bpftool', 'batch', 'file', batch]);
  } finally {
    rmSync(batch, { force: true });
  }
  return { mount, root, maps };
}

/** Unpins every map (the kernel frees them), unmounts the bpffs and removes `mount`. Never throws. */
export function unloadCiliumMaps(mount: string): void {
  const root = path.join(mount, 'tc', 'globals');
  try {
    if (existsSync(root)) for (const f of readdirSync(root)) rmSync(path.join(root, f), { force: true });
  } catch {
    // the unmount below drops the pins anyway
  }
  spawnSync('umount', [mount]);
  rmSync(mount, { recursive: true, force: true });
}

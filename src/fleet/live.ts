/**
 * `fleet diagnose` and `--fleet` on live options (`--context`, `--kubeconfig`, `-n`, `--nodes`,
 * `--selector`, `--ssh`…, as `fleet capture` takes them): the chosen nodes are captured into
 * a temporary fleet bundle first, then diagnosed from it one node at a time, as a fleet
 * bundle is; the bundle is deleted afterwards, on every exit path (a signal included).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { onCleanup } from '../cleanup.js';
import type { FleetCaptureArgs } from './capture-command.js';
import type { FleetManifest } from './bundle.js';

/** The live options of a fleet command: `fleet capture`'s, without its output directory. */
export type LiveFleetArgs = Omit<FleetCaptureArgs, 'output' | 'force'>;

/** Whether any option asks for a live fleet (a node choice, a cluster, SSH hosts). */
export function asksLiveFleet(args: Partial<LiveFleetArgs>): boolean {
  return [args.context, args.kubeconfig, args.nodes, args.selector, args.ssh, args.sshFile].some((v) => v !== undefined);
}

/**
 * Captures the fleet of `args` into a new temporary directory and runs `use` on it; the
 * directory is removed when `use` ends or throws, and by the exit handlers on a signal.
 * `say` gets the capture's progress lines. Throws what `runFleetCapture` throws.
 */
export async function withLiveFleet<T>(args: LiveFleetArgs, say: (m: string) => void, use: (dir: string, manifest: FleetManifest) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  const unregister = onCleanup('remove the temporary fleet bundle', remove);
  try {
    const { runFleetCapture } = await import('./capture-command.js');
    const manifest = await runFleetCapture({ ...args, output: dir }, say);
    return await use(dir, manifest);
  } finally {
    remove();
    unregister();
  }
}

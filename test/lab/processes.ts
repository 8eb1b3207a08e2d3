/**
 * Long-running processes inside lab namespaces: started detached with
 * `ip netns exec NS argv…` (which execs, so the pid is the program's own), logged to
 * `<stateDir>/<key>.log`, recorded in the lab state, and stopped by pid — only after
 * checking with `ip netns identify` that the pid still lives in a namespace of the lab.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { TransportError } from '../../src/errors.js';
import { run, sleep } from './exec.js';
import type { LabNames } from './names.js';
import { readState, updateState, type LabProcess } from './state.js';

/**
 * Starts `argv` detached inside namespace `ns` and records it under `key` (unique per
 * instance). Returns the record; throws {@link TransportError} if it could not start.
 */
export async function labSpawn(names: LabNames, key: string, ns: string, argv: readonly string[]): Promise<LabProcess> {
  mkdirSync(names.stateDir, { recursive: true });
  const log = path.join(names.stateDir, `${key}.log`);
  const fd = openSync(log, 'a');
  const full = ['ip', 'netns', 'exec', ns, ...argv];
  const child = spawn(full[0] ?? 'ip', full.slice(1), { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const pid = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => resolve(child.pid ?? -1));
  }).catch((e: unknown) => {
    throw new TransportError(`cannot start ${argv.join(' ')}: ${String(e)}`, `netns:${ns}`, full, null, '');
  });
  child.unref();
  const proc: LabProcess = { key, ns, pid, argv: [...argv], log };
  updateState(names.stateDir, names.prefix, (s) => ({
    ...s,
    processes: [...s.processes.filter((p) => p.key !== key), proc],
  }));
  return proc;
}

/** True when `pid` is alive and runs inside one of the lab's namespaces. */
export async function isLabProcess(names: LabNames, pid: number): Promise<boolean> {
  if (!alive(pid)) return false;
  const r = await run(['ip', 'netns', 'identify', String(pid)]);
  return r.exitCode === 0 && names.all.includes(r.stdout.trim());
}

/** True when a process with `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops one recorded process: SIGTERM, then SIGKILL after `graceMs` (default 2,000 ms).
 * A pid that no longer lives in a lab namespace is left alone (it was reused).
 */
export async function stopProcess(names: LabNames, proc: LabProcess, graceMs = 2000): Promise<void> {
  if (await isLabProcess(names, proc.pid)) {
    process.kill(proc.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    while (alive(proc.pid) && Date.now() < deadline) await sleep(50);
    if (alive(proc.pid)) process.kill(proc.pid, 'SIGKILL');
  }
  updateState(names.stateDir, names.prefix, (s) => ({ ...s, processes: s.processes.filter((p) => p.key !== proc.key) }));
}

/** Stops every process recorded in the state of `names`. */
export async function stopAllProcesses(names: LabNames): Promise<void> {
  for (const proc of readState(names.stateDir)?.processes ?? []) await stopProcess(names, proc);
}

/** Polls `check` every 100 ms until it returns true; throws after `timeoutMs` with `what`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new TransportError(`timed out waiting for ${what}`, 'local', [], null, '');
    await sleep(100);
  }
}

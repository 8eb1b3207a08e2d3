/**
 * The lab guard: lab tests need root and real tools. Where they are missing a
 * test skips with a printed reason — except under NODESCOPE_REQUIRE_LAB=1 (set by
 * .ci/run), where a missing prerequisite is a failure.
 */
import { spawnSync } from 'node:child_process';

/** Why lab tests cannot run here (`null` when they can). `tools`: binaries needed. */
export function labSkipReason(tools: readonly string[] = []): string | null {
  if (process.platform !== 'linux') return 'the node lab needs Linux';
  if (process.getuid?.() !== 0) return 'the node lab needs root (network namespaces, netfilter)';
  for (const tool of tools) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
    if (found.status !== 0) return `${tool} is not installed`;
  }
  return null;
}

/**
 * Returns true when the lab can run; otherwise prints the reason and returns
 * false, or throws when the lab is required (CI).
 */
export function labAvailable(tools: readonly string[] = []): boolean {
  const reason = labSkipReason(tools);
  if (reason === null) return true;
  if (process.env.NODESCOPE_REQUIRE_LAB === '1') throw new Error(`lab required but unavailable: ${reason}`);
  console.warn(`skipping lab tests: ${reason}`);
  return false;
}

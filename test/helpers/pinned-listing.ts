/**
 * A capture bundle with a `bpf-pinned` run added (`ls /sys/fs/bpf/tc/globals`, commands/probes.yaml):
 * the lab fixtures and the capture generator predate that probe.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Copies bundle `from` into a new temporary directory (its path pushed on `dirs`, for the
 * caller to remove) and adds a `bpf-pinned` run listing `names`, one per line, with the
 * manifest's argv and sha256 written as a capture writes them. Returns the copy's path.
 */
export function withPinnedListing(from: string, names: readonly string[], dirs: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-pinned-'));
  dirs.push(dir);
  cpSync(from, dir, { recursive: true });
  const stdout = `${names.join('\n')}\n`;
  writeFileSync(path.join(dir, 'probes', 'bpf-pinned.stdout'), stdout);
  writeFileSync(path.join(dir, 'probes', 'bpf-pinned.stderr'), '');
  const manifestFile = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const like = manifest.probes.find((p: { id: string }) => p.id === 'uname');
  const argv = ['ls', '/sys/fs/bpf/tc/globals'];
  manifest.probes.push({ ...like, id: 'bpf-pinned', argv, executedArgv: argv, stdoutFile: 'probes/bpf-pinned.stdout', stderrFile: 'probes/bpf-pinned.stderr', sha256: { stdout: sha(stdout), stderr: sha('') } });
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  return dir;
}

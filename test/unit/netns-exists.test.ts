/** `--netns NAME` is checked against `ip netns`'s run directory when the source opens. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { assertNetnsExists, NETNS_RUN_DIR } from '../../src/sources/local.js';
import { openSource } from '../../src/sources/open.js';

/** A stand-in for NETNS_RUN_DIR holding the namespaces `names`. */
function runDir(...names: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-netns-'));
  for (const n of names) writeFileSync(path.join(dir, n), '');
  return dir;
}

describe('assertNetnsExists', () => {
  it('passes for a namespace present in the run directory', () => {
    expect(() => assertNetnsExists('ns-node', runDir('ns-node'))).not.toThrow();
  });

  it('throws a UserError naming the missing namespace, with the hint `ip netns list`', () => {
    let err: unknown;
    try {
      assertNetnsExists('nosuchns', runDir('ns-node'));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toContain('"nosuchns"');
    expect((err as UserError).hint).toBe('ip netns list');
  });

  it('is what openSource does for --netns (iproute2 run directory)', async () => {
    const name = `nodescope-absent-${process.pid}`;
    await expect(openSource({ netns: name }, { progress: () => {} })).rejects.toThrow(UserError);
    await expect(openSource({ netns: name }, { progress: () => {} })).rejects.toThrow(path.join(NETNS_RUN_DIR, name));
  });

  it('refuses a name outside the wrapper pattern before it becomes a path', async () => {
    await expect(openSource({ netns: '../../etc' }, { progress: () => {} })).rejects.toThrow(UserError);
  });
});

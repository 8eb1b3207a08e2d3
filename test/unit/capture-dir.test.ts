/** `capture -o DIR` never mixes a new bundle with an old one: non-empty is refused, `--force` clears the bundle files. */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareCaptureDir } from '../../src/collect/capture.js';
import { UserError } from '../../src/errors.js';

/** A directory holding an old bundle's files (`bundle`) and/or a file of the user's. */
function outDir({ bundle, userFile }: { bundle: boolean; userFile: boolean }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-capdir-'));
  if (bundle) {
    mkdirSync(path.join(dir, 'probes'));
    mkdirSync(path.join(dir, 'extra'));
    for (const f of ['manifest.json', 'api.json', 'probes/iptables-save.stdout', 'extra/dns.json']) writeFileSync(path.join(dir, f), 'old');
  }
  if (userFile) writeFileSync(path.join(dir, 'README.md'), 'mine');
  return dir;
}

describe('prepareCaptureDir', () => {
  it('accepts a missing or empty directory', () => {
    const empty = outDir({ bundle: false, userFile: false });
    expect(() => prepareCaptureDir(empty, false)).not.toThrow();
    expect(() => prepareCaptureDir(path.join(empty, 'new'), false)).not.toThrow();
  });

  it('refuses a directory holding a bundle or any other file, without --force, touching nothing', () => {
    for (const shape of [{ bundle: true, userFile: false }, { bundle: false, userFile: true }]) {
      const dir = outDir(shape);
      expect(() => prepareCaptureDir(dir, false)).toThrow(UserError);
      expect(existsSync(path.join(dir, shape.bundle ? 'api.json' : 'README.md'))).toBe(true);
    }
  });

  it('with --force removes every bundle file of the old capture and keeps the others', () => {
    const dir = outDir({ bundle: true, userFile: true });
    prepareCaptureDir(dir, true);
    for (const f of ['manifest.json', 'api.json', 'probes', 'extra']) expect(existsSync(path.join(dir, f)), f).toBe(false);
    expect(existsSync(path.join(dir, 'README.md'))).toBe(true);
  });

  it('refuses a path that is a file', () => {
    const file = path.join(outDir({ bundle: false, userFile: true }), 'README.md');
    expect(() => prepareCaptureDir(file, true)).toThrow(UserError);
  });
});

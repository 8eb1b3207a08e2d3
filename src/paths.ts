/**
 * Locating nodescope's own files (the probe catalog, the embedded default capture)
 * whether it runs from `src/` (vitest) or `dist/src/` (the built binary).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | undefined;

/**
 * The package root: the nearest ancestor of this module holding nodescope's
 * package.json. Throws `Error` if none is found (a broken install).
 */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'nodescope') return (cachedRoot = dir);
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('nodescope package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** nodescope's version from package.json, e.g. `"0.1.0"`. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/** The bundle under fixtures/ that `npm start` opens when no source is named. */
export const DEFAULT_CAPTURE = 'lab-cilium';

/** The embedded default capture that `npm start` opens when no source is named. */
export function defaultCaptureDir(): string {
  return path.join(packageRoot(), 'fixtures', DEFAULT_CAPTURE);
}

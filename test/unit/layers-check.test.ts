/**
 * The layering check `npm test` runs (dependency-cruiser with .dependency-cruiser.cjs) fails on
 * a planted import against the direction and on a planted cycle, and passes the same small
 * tree without them: the check can fail, and it fails for the right rule.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repo = path.resolve(import.meta.dirname, '../..');
const depcruise = path.join(repo, 'node_modules/.bin/depcruise');
const dirs: string[] = [];

/** A tree with the project's config and tsconfig, and the given files under src/. */
function plantTree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-layers-'));
  dirs.push(dir);
  cpSync(path.join(repo, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** Runs the check as `npm run check:layers` does; exit code and output. */
function check(dir: string): { code: number; out: string } {
  try {
    const out = execFileSync(depcruise, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    return { code: 0, out };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { code: err.status, out: err.stdout + err.stderr };
  }
}

const CLEAN = {
  'src/model/thing.ts': 'export interface Thing { readonly name: string }\n',
  'src/ui/pane.ts': "import type { Thing } from '../model/thing.js';\nexport function title(t: Thing): string { return t.name; }\n",
};

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('layering check', () => {
  it('passes a tree whose imports follow the rooms', () => {
    const r = check(plantTree(CLEAN));
    expect(r.out).not.toContain('error');
    expect(r.code).toBe(0);
  }, 120_000);

  it('fails on a planted import against the direction (model → ui)', () => {
    const r = check(plantTree({ ...CLEAN, 'src/model/planted.ts': "import { title } from '../ui/pane.js';\nexport const planted = title;\n" }));
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/layer-model: src\/model\/planted\.ts → src\/ui\/pane\.ts/);
  }, 120_000);

  it('fails on a planted cycle inside one room', () => {
    const r = check(
      plantTree({
        ...CLEAN,
        'src/model/a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
        'src/model/b.ts': "import { a } from './a.js';\nexport const b = (): number => (a.length > 5 ? 0 : 1);\n",
      }),
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('no-circular');
  }, 120_000);
});

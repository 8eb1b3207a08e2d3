/**
 * The bin loads only what a command uses (src/cli.tsx imports each command's code with
 * `import()` in its action): `--version` and `--help` load the command tree and its messages,
 * `trace` on a replay loads the parsers and the step engine but never Ink, React, the TUI, the
 * fleet, the dash or the capture code. The modules are counted by a module loader hook that
 * writes every URL Node loads (node:module `register`), and each loaded chunk of
 * dist/bin/chunks is known by the sources its source map names (scripts/bundle.mjs writes one
 * per chunk). The answers and exit codes are those of the whole program.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';

const root = packageRoot();
const bin = path.join(root, 'dist', 'bin', 'nodescope.js');
const fixture = (name: string) => path.join(root, 'fixtures', name);
const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-lazy-'));

beforeAll(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`npm run build\` (npm test does)`);
  writeFileSync(path.join(dir, 'hooks.mjs'), "import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) {\n  appendFileSync(process.env.NODESCOPE_TEST_LOADED, url + '\\n');\n  return next(url, context);\n}\n");
  // CommonJS modules (`require`, createRequire) do not pass the hook: the CommonJS cache is written at exit.
  writeFileSync(
    path.join(dir, 'register.mjs'),
    `import { register, createRequire } from 'node:module';\nimport { appendFileSync } from 'node:fs';\nimport { pathToFileURL } from 'node:url';\nregister(${JSON.stringify(pathToFileURL(path.join(dir, 'hooks.mjs')).href)});\nconst cjs = createRequire(import.meta.url)('node:module')._cache;\nprocess.on('exit', () => appendFileSync(process.env.NODESCOPE_TEST_LOADED, Object.keys(cjs).map((f) => pathToFileURL(f).href + '\\n').join('')));\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;
/** Runs the bin with `args`; returns its exit status, output, the files of dist/bin it loaded and every file it loaded (`all`). */
function runBin(...args: string[]): { status: number | null; stdout: string; stderr: string; loaded: string[]; all: string[] } {
  const list = path.join(dir, `loaded-${runs++}.txt`);
  writeFileSync(list, '');
  const r = spawnSync(process.execPath, ['--import', path.join(dir, 'register.mjs'), bin, ...args], { encoding: 'utf8', input: '', env: { ...process.env, NODESCOPE_TEST_LOADED: list } });
  const all = readFileSync(list, 'utf8')
    .split('\n')
    .filter((u) => u.startsWith('file:'))
    .map((u) => fileURLToPath(u));
  const loaded = all.filter((f) => f.startsWith(path.dirname(bin) + path.sep));
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, loaded, all };
}

/** The source files a chunk of the bundle holds, from its source map. */
function sourcesOf(file: string): string[] {
  const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((s) => path.resolve(path.dirname(file), s));
}

const rel = (f: string) => path.relative(root, f).split(path.sep).join('/');
/** What must not load for a command that prints a document: the TUI and what only other commands use. */
const NOT_FOR_DOCUMENTS = /^(node_modules\/(ink|react|react-reconciler|yoga-layout|scheduler)\/|src\/ui\/|src\/fleet\/|src\/dash\/|src\/tour\/|src\/collect\/capture\.ts$|src\/dns\/dig\.ts$|src\/report\/diagnose\.ts$)/;

describe('the bin loads only what a command uses', () => {
  it('--version and --help: the version, the commands, exit 0, without the sources or parsers', () => {
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const version = runBin('--version');
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`${pkg.version}\n`);
    const help = runBin('trace', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: nodescope trace \[options\]/);
    expect(help.stdout).toContain('--to <ip:port/proto>');
    for (const r of [version, help]) {
      const sources = r.loaded.flatMap((f) => (f === bin ? [] : sourcesOf(f))).map(rel);
      expect(sources.length).toBeGreaterThan(0);
      expect(sources.filter((s) => /^src\/(parsers|trace|analysis|collect|sources\/(open|replay|bundle)\.ts)/.test(s) || NOT_FOR_DOCUMENTS.test(s))).toEqual([]);
    }
  }, 60_000);

  it('trace on a replay: the walk, without Ink, React, the TUI, fleet, dash or capture code', () => {
    const r = runBin('trace', '--replay', fixture('lab-iptables'), '--from', '10.244.1.5', '--to', '10.96.12.34:80/tcp', '-o', 'json');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'Trace', mode: 'iptables' });
    const sources = r.loaded.flatMap((f) => (f === bin ? [] : sourcesOf(f))).map(rel);
    // It did load the walk: the check below sees the chunks that ran.
    expect(sources).toContain('src/trace/iptables-eval.ts');
    expect(sources.filter((s) => NOT_FOR_DOCUMENTS.test(s))).toEqual([]);
    // Nor the yaml library (src/text/yaml-lib.ts loads it on first use): neither its chunk nor node_modules/yaml.
    expect(sources.filter((s) => s.startsWith('node_modules/yaml/'))).toEqual([]);
    expect(r.all.map(rel).filter((s) => s.startsWith('node_modules/yaml/'))).toEqual([]);
    // `-o yaml` loads it and prints the same document as YAML.
    const y = runBin('trace', '--replay', fixture('lab-iptables'), '--from', '10.244.1.5', '--to', '10.96.12.34:80/tcp', '-o', 'yaml');
    expect(y.status, y.stderr).toBe(0);
    expect(y.stdout).toMatch(/^apiVersion: nodescope\.dev\/v1\nkind: Trace\n/);
    expect(y.all.map(rel).some((s) => s.startsWith('node_modules/yaml/'))).toBe(true);
  }, 60_000);

  /** Code only other modes' captures, the TUI's session or the DNS commands use. */
  const NOT_FOR_IPTABLES = /^(src\/parsers\/(nft-json|nft-text|cilium-status|cilium-bpf-lb-list|cilium-service-list|ipvsadm)\.ts$|src\/collect\/session\.ts$|src\/dns\/|node_modules\/dns-packet\/)/;

  /** lab-iptables without its nft probes (that lab node also answered `nft -j`): a node with iptables alone. */
  function iptablesOnly(): string {
    const copy = path.join(dir, 'iptables-only');
    if (existsSync(copy)) return copy;
    cpSync(fixture('lab-iptables'), copy, { recursive: true });
    const manifestFile = path.join(copy, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { probes: { id: string }[] };
    manifest.probes = manifest.probes.filter((p) => !p.id.startsWith('nft-'));
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
    return copy;
  }

  it('trace and show services on an iptables capture: its parsers only (not nft, Cilium, IPVS), no session, no DNS code', () => {
    const bundle = iptablesOnly();
    const trace = runBin('trace', '--replay', bundle, '--from', '10.244.1.5', '--to', '10.96.12.34:80/tcp', '-o', 'json');
    expect(trace.status, trace.stderr).toBe(0);
    expect(JSON.parse(trace.stdout)).toMatchObject({ kind: 'Trace', mode: 'iptables' });
    const traced = trace.loaded.flatMap((f) => (f === bin ? [] : sourcesOf(f))).map(rel);
    expect(traced).toContain('src/parsers/iptables-save.ts');
    expect(traced.filter((s) => NOT_FOR_IPTABLES.test(s) || NOT_FOR_DOCUMENTS.test(s))).toEqual([]);
    // The same command on the whole lab capture (its nft probes answered) loads the nft parser: the lazy table loads what a capture needs.
    const withNft = runBin('trace', '--replay', fixture('lab-iptables'), '--from', '10.244.1.5', '--to', '10.96.12.34:80/tcp', '-o', 'json');
    expect(withNft.status, withNft.stderr).toBe(0);
    expect(withNft.loaded.flatMap((f) => (f === bin ? [] : sourcesOf(f))).map(rel)).toContain('src/parsers/nft-json.ts');
    // show services reads no ruleset: no rules parser, and of the reports only its own.
    const services = runBin('show', 'services', '--replay', bundle, '-o', 'json');
    expect(services.status, services.stderr).toBe(0);
    expect(JSON.parse(services.stdout)).toMatchObject({ kind: 'ServiceList' });
    const shown = services.loaded.flatMap((f) => (f === bin ? [] : sourcesOf(f))).map(rel);
    expect(shown).toContain('src/report/services.ts');
    expect(shown.filter((s) => NOT_FOR_IPTABLES.test(s) || NOT_FOR_DOCUMENTS.test(s) || /^src\/parsers\/iptables-save\.ts$|^src\/report\/(rules|lb|compare|conntrack|dns)\.ts$/.test(s))).toEqual([]);
  }, 60_000);

  it('errors keep their words and exit codes', () => {
    const none = runBin('trace', '--replay', fixture('lab-iptables'));
    expect(none.status).toBe(2);
    expect(none.stderr).toBe("nodescope: trace needs a destination\n  try: --to 10.96.12.34:80/tcp, or --to-service default/web:80\nSee 'nodescope trace --help' for usage.\n");
    const unknown = runBin('trace', '--bogus');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^error: unknown option '--bogus'/);
  }, 60_000);
});

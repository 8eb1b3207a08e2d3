#!/usr/bin/env node
/**
 * `npm run build` step 2 (after tsc): bundles the `nodescope` executable into dist/bin/
 * with esbuild, so that starting it reads a few files instead of the ~hundreds of small
 * ESM modules of ink, react, yoga, commander, yaml and nodescope itself (Node's ESM
 * loader, not evaluation, was most of the start-up: bench/RESULTS.md).
 *
 *   dist/bin/nodescope.js          the bin (package.json "bin", `npm start`)
 *   dist/bin/trace-api-worker.js   trace's API worker (src/cli/trace-api.ts)
 *   dist/bin/chunks/*.js           the command line, the TUI (ink + App), tours, dash, …
 *                                  split at cli.tsx's dynamic imports, loaded on demand
 *   dist/bin/parse-worker.js       the conntrack parse worker (src/collect/worker-parse.ts)
 *   dist/bin/exec-worker.js        the heavy dumps' reader (src/sources/exec-off-thread.ts)
 *   dist/bin/summary-worker.js     the cheap evidence's iptables-save scan (src/collect/summary-off-thread.ts)
 *   *.js.map                       source maps (src/stack-trace.ts maps stack traces
 *                                  through them when one is printed)
 *
 * Also done here for start-up: React's production build is chosen at build time; the
 * probe catalog's YAML is parsed now (src/shipped-yaml.ts uses it while the file is
 * unchanged); yoga's embedded wasm is decoded without Node's fetch (see yogaWithoutFetch);
 * only the chunk that needs `require` creates one.
 *
 * Kept external (loaded from node_modules at run time, as before): the lazy, heavy or
 * native dependencies — ssh2 (optional native addons), @kubernetes/client-node and ws
 * (--node only), blessed / blessed-contrib (dash: require() their widgets and terminfo
 * by computed paths) — and react-devtools-core (ink imports it only under DEV=true; not
 * installed). Usage: `node scripts/bundle.mjs [--metafile FILE]`.
 */
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'bin');

const EXTERNAL = ['ssh2', '@kubernetes/client-node', 'ws', 'blessed', 'blessed-contrib', 'react-devtools-core'];

/**
 * YAML read at every start (src/shipped-yaml.ts): text and parse, keyed by package-relative
 * path, inlined as one JSON string (an object `define` would become a module of its own).
 */
const SHIPPED_YAML = ['commands/probes.yaml', 'commands/wrappers.yaml'];

function shippedYaml() {
  const out = {};
  for (const rel of SHIPPED_YAML) {
    const text = readFileSync(path.join(root, rel), 'utf8');
    const value = parseYaml(text);
    // Only what JSON carries unchanged can be inlined; anything else is parsed at run time.
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(value)), value)) {
      console.warn(`bundle: ${rel} does not survive JSON, left to parse at run time`);
      continue;
    }
    out[rel] = { text, value };
  }
  return out;
}

/**
 * yoga-layout's Emscripten loader fetch()es its own embedded `data:` URL when a global
 * fetch exists, which loads Node's undici (~60 ms of start-up); without fetch it decodes
 * the same base64 itself. A module-scoped `fetch` hides the global from that file only.
 */
const yogaWithoutFetch = {
  name: 'yoga-without-fetch',
  setup(b) {
    b.onLoad({ filter: /yoga-layout[\\/]dist[\\/]binaries[\\/].*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('typeof fetch')) return { contents: text, loader: 'js', warnings: [{ text: 'yoga-layout no longer tests for fetch: the yoga-without-fetch plugin can go' }] };
      return { contents: `var fetch = undefined;\n${text}`, loader: 'js' };
    });
  },
};

/**
 * string-width builds an `Intl.Segmenter` and Unicode-property regular expressions (one of them
 * `\p{RGI_Emoji}` in `v` mode) when its module is evaluated: a cost every command that
 * imports src/text/cells.ts paid at start-up, though most never measure a non-ASCII text
 * (cells.ts answers printable ASCII itself). The module's body is wrapped into a function run
 * on the first call: the same code and state, made on first use instead of at import.
 */
const STRING_WIDTH_EXPORT = 'export default function stringWidth(';
const stringWidthOnFirstCall = {
  name: 'string-width-on-first-call',
  setup(b) {
    b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const lines = text.split('\n');
      const firstBody = lines.findIndex((l) => !l.startsWith('import ') && l.trim() !== '');
      const body = lines.slice(firstBody).join('\n');
      // Only the shape this was written for: imports, then a body whose one export is the default function.
      const shapeKnown = firstBody > 0 && body.split('export ').length === 2 && body.includes(STRING_WIDTH_EXPORT) && !/\b(?:await|arguments)\b/.test(body);
      if (!shapeKnown) return { contents: text, loader: 'js', warnings: [{ text: 'string-width changed shape: string-width-on-first-call left it as it is' }] };
      const wrapped = [
        ...lines.slice(0, firstBody),
        'let stringWidthOnFirstCall;',
        'function stringWidthModule() {',
        body.replace(STRING_WIDTH_EXPORT, 'function stringWidth('),
        'return stringWidth;',
        '}',
        // Both copies take (text, options = {}) and never read `arguments`: undefined passes as omitted.
        'export default function stringWidth(text, options) {',
        '  return (stringWidthOnFirstCall ??= stringWidthModule())(text, options);',
        '}',
      ];
      return { contents: wrapped.join('\n'), loader: 'js' };
    });
  },
};

const result = await build({
  absWorkingDir: root,
  entryPoints: { nodescope: 'src/main.ts', 'parse-worker': 'src/collect/parse-worker.ts', 'trace-api-worker': 'src/cli/trace-api-worker.ts', 'exec-worker': 'src/sources/exec-worker.ts', 'summary-worker': 'src/collect/summary-worker.ts' },
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // Maps point into src/ (read only when a stack is printed, see src/stack-trace.ts): no copy of it.
  sourcesContent: false,
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'linked',
  external: EXTERNAL,
  // React's production build, chosen at build time (main.ts does the same at run time for dist/src).
  define: { 'process.env.NODE_ENV': '"production"', __NODESCOPE_SHIPPED_YAML__: JSON.stringify(JSON.stringify(shippedYaml())) },
  plugins: [yogaWithoutFetch, stringWidthOnFirstCall],
  metafile: true,
  write: false,
  logLevel: 'warning',
});

// CommonJS dependencies bundled into ESM still call require() for Node's built-ins, through
// esbuild's `__require` helper, which reads a free `require`: only the chunk defining the
// helper gets one (a banner on every chunk costs a createRequire per chunk at start-up).
const REQUIRE_LINE = "import { createRequire as __nodescopeCreateRequire } from 'node:module'; const require = __nodescopeCreateRequire(import.meta.url);\n";
const needsRequire = new Set(result.outputFiles.filter((f) => f.path.endsWith('.js') && f.text.includes('Dynamic require of "')).map((f) => f.path));
if (needsRequire.size !== 1) throw new Error(`bundle: expected one chunk defining __require, found ${needsRequire.size}`);
// Others may run the bin while this builds: every file is written aside and renamed into
// place, chunks (content-hashed names) before the entry, and stale chunks removed last.
const entry = path.join(outdir, 'nodescope.js');
const ordered = [...result.outputFiles].sort((a, b) => Number(a.path.startsWith(entry)) - Number(b.path.startsWith(entry)));
for (const f of ordered) {
  let contents = f.contents;
  if (needsRequire.has(f.path)) contents = Buffer.from(REQUIRE_LINE + f.text);
  else if (needsRequire.has(f.path.replace(/\.map$/, ''))) {
    // One line more at the top of the chunk: its mappings start one line later.
    const map = JSON.parse(f.text);
    map.mappings = `;${map.mappings}`;
    contents = Buffer.from(JSON.stringify(map));
  }
  mkdirSync(path.dirname(f.path), { recursive: true });
  const aside = `${f.path}.${process.pid}.tmp`;
  writeFileSync(aside, contents, { mode: f.path === entry ? 0o755 : 0o644 });
  renameSync(aside, f.path);
}
const written = new Set(result.outputFiles.map((f) => f.path));
for (const dir of [outdir, path.join(outdir, 'chunks')]) {
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, name.name);
    if (name.isFile() && !written.has(file) && !file.endsWith('.tmp')) rmSync(file, { force: true });
  }
}

const metaIndex = process.argv.indexOf('--metafile');
if (metaIndex > 0) writeFileSync(process.argv[metaIndex + 1], JSON.stringify(result.metafile));

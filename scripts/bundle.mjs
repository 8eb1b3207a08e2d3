#!/usr/bin/env node
/**
 * `npm run build` step 2 (after tsc): bundles the `nodescope` executable into dist/bin/
 * with esbuild, so that starting it reads a few files instead of the ~hundreds of small
 * ESM modules of ink, react, yoga, commander, yaml and nodescope itself (Node's ESM
 * loader, not evaluation, was most of the start-up: bench/RESULTS.md).
 *
 *   dist/bin/nodescope.js          the bin (package.json "bin", `npm start`)
 *   dist/bin/chunks/*.js           the command line, the TUI (ink + App), tours, dash, …
 *                                  split at cli.tsx's dynamic imports, loaded on demand
 *   *.js.map                       source maps (main.ts turns them on for stack traces)
 *
 * Kept external (loaded from node_modules at run time, as before): the lazy, heavy or
 * native dependencies — ssh2 (optional native addons), @kubernetes/client-node and ws
 * (--node only), blessed / blessed-contrib (dash: require() their widgets and terminfo
 * by computed paths) — and react-devtools-core (ink imports it only under DEV=true; not
 * installed). Usage: `node scripts/bundle.mjs [--metafile FILE]`.
 */
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'bin');

export const EXTERNAL = ['ssh2', '@kubernetes/client-node', 'ws', 'blessed', 'blessed-contrib', 'react-devtools-core'];

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { nodescope: 'src/main.ts' },
  outdir,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  // Node reads each map when its file loads (source maps on): no sources text keeps them small.
  sourcesContent: false,
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'linked',
  external: EXTERNAL,
  // React's production build, chosen at build time (main.ts does the same at run time for dist/src).
  define: { 'process.env.NODE_ENV': '"production"' },
  // CommonJS dependencies bundled into ESM still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __nodescopeCreateRequire } from 'node:module'; const require = __nodescopeCreateRequire(import.meta.url);" },
  metafile: true,
  logLevel: 'warning',
});

const metaIndex = process.argv.indexOf('--metafile');
if (metaIndex > 0) writeFileSync(process.argv[metaIndex + 1], JSON.stringify(result.metafile));

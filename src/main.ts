#!/usr/bin/env node
/**
 * The `nodescope` executable (bundled into dist/bin/nodescope.js by scripts/bundle.mjs;
 * tsc's dist/src/main.js runs the same code unbundled). It picks React's production
 * build (the development build spends ~1.5 s of CPU diffing props per 30 keypresses on
 * a large capture, see bench/RESULTS.md) before anything imports react, turns on source
 * maps so a bundled stack trace names src/ files and lines, then runs the command line.
 */
// Through a local: the bundler replaces `process.env.NODE_ENV` reads with "production".
const env = process.env;
env.NODE_ENV ??= 'production';
// Only modules loaded after this call get their maps read: the command line and all it imports.
process.setSourceMapsEnabled(true);
await import('./cli.js');

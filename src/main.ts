#!/usr/bin/env node
/**
 * The `nodescope` executable (bundled into dist/bin/nodescope.js by scripts/bundle.mjs;
 * tsc's dist/src/main.js runs the same code unbundled). It picks React's production
 * build (the development build spends ~1.5 s of CPU diffing props per 30 keypresses on
 * a large capture, see bench/RESULTS.md) before anything imports react, makes stack
 * traces name src/ files and lines (lazily: see stack-trace.ts), then runs the command line.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installStackMapping } from './stack-trace.js';

// Through a local: the bundler replaces `process.env.NODE_ENV` reads with "production".
const env = process.env;
env.NODE_ENV ??= 'production';
installStackMapping(path.dirname(fileURLToPath(import.meta.url)));
await import('./cli.js');

#!/usr/bin/env node
/**
 * The `nodescope` executable. It only picks React's production build (the development
 * build spends ~1.5 s of CPU diffing props per 30 keypresses on a large capture, see
 * bench/RESULTS.md) before anything imports react, then runs the command line.
 */
process.env.NODE_ENV ??= 'production';
await import('./cli.js');

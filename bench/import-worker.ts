/**
 * `node dist/bench/import-worker.js SPEC[,SPEC…]`: times `await import(SPEC)` of each, in
 * order, in a process that has loaded nothing else (so shared dependencies are counted),
 * and prints one JSON measurement line: wall and CPU ms, peak RSS MB.
 */
const specs = process.argv[2]?.split(',') ?? [];
if (specs.length === 0) throw new Error('usage: import-worker.js SPEC[,SPEC…]');
const c0 = process.cpuUsage();
const t0 = performance.now();
for (const spec of specs) await import(spec);
const ms = performance.now() - t0;
const c = process.cpuUsage(c0);
process.stdout.write(`${JSON.stringify({ ms, cpuMs: (c.user + c.system) / 1000, rssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
export {};

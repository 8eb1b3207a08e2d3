/**
 * The conntrack stages of a replay, headless, one process: the table read from the bundle
 * file in pieces and parsed as the staged load parses it (`parseConntrackStream` over
 * `readFilePieces`), the pane's targets (API objects → service view → frontends), and the
 * classification the pane's index runs (`classifyConntrackRows` over the table's rows). Prints one JSON line:
 * process CPU ms (user + sys) and wall ms per stage, the heap in use after a full GC once
 * the table is parsed, peak RSS, and a hash of the classification columns (to compare two
 * builds' answers).
 *
 * Usage: `node --expose-gc dist/bench/ct-stage.js BUNDLE_MODE_DIR` (e.g.
 * `/tmp/bn2-bench/huge-…/iptables`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { classifyConntrackRows } from '../src/analysis/conntrack-classify.js';
import { conntrackTargets } from '../src/analysis/conntrack-index.js';
import { conntrackRows } from '../src/model/conntrack-ids.js';
import { parseConntrackStream } from '../src/parsers/conntrack.js';
import { parseIpAddrJson } from '../src/parsers/ip-json.js';
import { parseK8sObjects } from '../src/parsers/k8s-objects.js';
import { readFilePieces } from '../src/sources/bundle.js';

const cpuMs = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

async function stage<T>(f: () => T | Promise<T>): Promise<{ value: T; cpuMs: number; ms: number }> {
  const c0 = cpuMs();
  const t0 = performance.now();
  const value = await f();
  return { value, cpuMs: Math.round(cpuMs() - c0), ms: Math.round(performance.now() - t0) };
}

/** Heap in use and array buffers (typed-array columns live outside the heap), MB, after two full GCs. */
function heapMb(): { readonly heap: number; readonly buffers: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heap: Math.round(m.heapUsed / 1e6), buffers: Math.round(m.arrayBuffers / 1e6) };
}

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: ct-stage BUNDLE_MODE_DIR');
  const probes = path.join(dir, 'probes');
  const parse = await stage(() => parseConntrackStream(readFilePieces(path.join(probes, 'conntrack.stdout')), 'conntrack'));
  // The rows read in place, as the pane reads them (not the entries array: that would make an object per entry).
  const rows = conntrackRows(parse.value.value);
  const heapAfterParse = heapMb();
  const targets = await stage(() => {
    const api = parseK8sObjects(readFileSync(path.join(dir, 'api.json'), 'utf8'), 'api.json').value;
    const addrs = parseIpAddrJson(readFileSync(path.join(probes, 'ip-addr.stdout'), 'utf8'), 'ip-addr').value;
    const meta = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { node?: string };
    return conntrackTargets({ api: { value: api }, addrs: { value: addrs }, meta: { node: meta.node ?? '' } } as unknown as Parameters<typeof conntrackTargets>[0]);
  });
  const classify = await stage(() => classifyConntrackRows(rows, targets.value.services, targets.value.nodeAddresses));
  const c = classify.value;
  const hash = createHash('sha256').update(new Uint8Array(c.serviceOf.buffer)).update(c.codeOf).digest('hex').slice(0, 16);
  const heapAtEnd = heapMb();
  console.log(JSON.stringify({
    dir,
    entries: rows.length,
    parseCpuMs: parse.cpuMs,
    parseMs: parse.ms,
    heapAfterParseMb: heapAfterParse,
    targetsCpuMs: targets.cpuMs,
    classifyCpuMs: classify.cpuMs,
    classifyMs: classify.ms,
    heapAtEndMb: heapAtEnd,
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    stale: c.staleCount,
    columnsHash: hash,
  }));
}

await main();

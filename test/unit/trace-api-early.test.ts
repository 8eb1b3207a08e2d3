/**
 * `trace --replay DIR --to IP…` starts its API worker as soon as the command line is parsed
 * (src/cli/trace-early.ts `startTraceApiForReplay`, src/cli/trace-api.ts `startTraceApiEarly`);
 * the open adopts it only for the same api.json and destination. Proven here: with the early
 * worker adopted (checked, not assumed) the trace documents equal the in-thread reference's for
 * every destination of the lab captures and a generated capture of each mode; an early worker
 * for another destination is not adopted (the answer is still the reference's); nothing starts
 * where the open would not hand the api.json over, and nothing throws.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import type { GlobalOptions } from '../../src/cli/options.js';
import type { TraceApiFeed } from '../../src/cli/trace-api.js';
import { startTraceApiForReplay } from '../../src/cli/trace-early.js';
import { loadForTrace } from '../../src/cli/trace-load.js';
import { closeSource } from '../../src/sources/open.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { fixtureDir, tempDirs } from '../helpers/fixtures.js';
import { traceDestinations } from '../helpers/trace-destinations.js';

const tmpDir = tempDirs('trace-api-early');
const MODES = ['iptables', 'nftables', 'cilium'] as const;
const optionsOf = (dir: string, to: string) => ({ replay: dir, interval: 2, to }) as unknown as GlobalOptions & { to?: string };
const fromOf = (to: string) => (to.endsWith('/icmp') ? '10.244.1.7' : '10.244.1.7:40000');

/** The trace document of `to` (`worker` false: the in-thread reference) and how its API text was made. */
async function traceDoc(dir: string, to: string, output: 'json' | 'text', worker: boolean) {
  const { source, snapshot, args } = await loadForTrace(optionsOf(dir, to), () => ({ from: fromOf(to), to, output }), { worker });
  const feed = source.api as TraceApiFeed | undefined;
  const out = { doc: runTraceCommand(snapshot, args), how: feed?.how(), early: feed?.early };
  await closeSource(source);
  return out;
}

describe('trace: the API worker started early', () => {
  const dir = tmpDir();
  writeGeneratedBundles(dir, { services: 40, endpoints: 2, seed: 'trace-api-early', modes: [...MODES], conntrack: 100 });
  it.each([
    ...MODES.map((m) => [`lab-${m}`, () => fixtureDir(`lab-${m}`), 100] as const),
    ...MODES.map((m) => [`a generated ${m} capture`, () => path.join(dir, m), 6] as const),
  ])('%s: adopted, and the same documents as the in-thread narrowing', async (_name, dirOf, services) => {
    const bundle = dirOf();
    let adopted = 0;
    for (const to of traceDestinations(bundle, services)) {
      for (const output of ['json', 'text'] as const) {
        const reference = await traceDoc(bundle, to, output, false);
        expect(startTraceApiForReplay({ replay: bundle, to })).toBe(true);
        const early = await traceDoc(bundle, to, output, true);
        expect(reference.how).toBe('thread');
        expect(early.how).toBe('worker');
        expect(early.early).toBe(true);
        expect(early.doc, `${to} ${output}`).toBe(reference.doc);
        adopted++;
      }
    }
    expect(adopted).toBeGreaterThan(6);
  }, 240_000);

  it('an early worker for another destination is ended, not adopted: the answer is the reference\'s', async () => {
    const bundle = fixtureDir('lab-iptables');
    const [a, b] = traceDestinations(bundle, 3);
    const reference = await traceDoc(bundle, b!, 'json', false);
    expect(startTraceApiForReplay({ replay: bundle, to: a! })).toBe(true);
    const other = await traceDoc(bundle, b!, 'json', true);
    expect(other.early).toBe(false);
    expect(other.how).toBe('worker');
    expect(other.doc).toBe(reference.doc);
  }, 60_000);

  it('starts nothing where the open would not hand the api.json over, and never throws', () => {
    const bundle = fixtureDir('lab-iptables');
    const to = '10.96.0.10:53/udp';
    expect(startTraceApiForReplay({ replay: bundle, to, apiFile: path.join(bundle, 'api.json') })).toBe(false);
    expect(startTraceApiForReplay({ replay: bundle, to, allowTrace: true })).toBe(false);
    expect(startTraceApiForReplay({ replay: bundle, to: 'kube-dns' })).toBe(false);
    expect(startTraceApiForReplay({ replay: bundle, to, node: 'worker-1' })).toBe(false);
    expect(startTraceApiForReplay({ replay: bundle, to, local: true })).toBe(false);
    expect(startTraceApiForReplay({ to })).toBe(false);
    expect(startTraceApiForReplay({ replay: path.join(tmpDir(), 'no-such-bundle'), to })).toBe(false);
    expect(startTraceApiForReplay({ replay: tmpDir(), to })).toBe(false);
    const before = process.env.NODESCOPE_TRACE_API_WORKER;
    process.env.NODESCOPE_TRACE_API_WORKER = '0';
    try {
      expect(startTraceApiForReplay({ replay: bundle, to })).toBe(false);
    } finally {
      if (before === undefined) delete process.env.NODESCOPE_TRACE_API_WORKER;
      else process.env.NODESCOPE_TRACE_API_WORKER = before;
    }
  });
});

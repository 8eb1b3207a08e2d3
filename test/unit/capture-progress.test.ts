/** `capture` says what it is doing, stage by stage, instead of being silent for seconds. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureBundle, probeTally } from '../../src/collect/capture.js';
import { packageRoot } from '../../src/paths.js';
import { openSource } from '../../src/sources/open.js';
import type { ProbeRun } from '../../src/sources/probe-runner.js';

const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const outDir = () => mkdtempSync(path.join(tmpdir(), 'nodescope-capprog-'));

/** A clock that moves `stepMs` each time it is read. */
function steppingClock(stepMs: number): () => number {
  let t = Date.UTC(2026, 10, 29);
  return () => (t += stepMs);
}

/** A probe run of `id` that ended as `status`. */
const makeRun = (id: string, status: ProbeRun['status']): ProbeRun => ({
  id, argv: [id], status, result: { argv: [id], stdout: '', stderr: '', exitCode: status === 'ok' ? 0 : null, startedAt: '2026-11-29T00:00:00.000Z', durationMs: 1 },
});

describe('captureBundle progress', () => {
  it('reports each stage as it starts and ends, with what came back and how long it took', async () => {
    const lines: string[] = [];
    const source = await openSource({ replay: fixture('lab-iptables') }, { progress: () => undefined });
    const manifest = await captureBundle(source, outDir(), { progress: (m) => lines.push(m), now: steppingClock(250) });
    const nodeProbes = manifest.probes.length;
    expect(lines[0]).toBe('running the node probes…');
    expect(lines[1]).toMatch(new RegExp(`^node probes: \\d+ ok.* in 0\\.\\d s$`));
    // The probe plan's skips, one line each, then the dumps it kept.
    const skipped = lines.filter((l) => l.startsWith('skipped '));
    expect(skipped).toHaveLength(manifest.skipped?.length ?? 0);
    const dumps = lines.indexOf('running the dump probes…');
    expect(dumps).toBe(2 + skipped.length);
    expect(lines[dumps + 1]).toMatch(new RegExp(`^dump probes: \\d+ ok.* in 0\\.\\d s$`));
    const counted = [lines[1]!, lines[dumps + 1]!].flatMap((l) => [...l.matchAll(/(\d+) (ok|missing|failed|timeout)/g)]).reduce((n, m) => n + Number(m[1]), 0);
    expect(counted).toBe(nodeProbes);
    expect(lines.slice(dumps + 2)).toEqual(['asking the cluster DNS the questions of every Service…', expect.stringMatching(/^DNS answers recorded in \d+\.\d s$/)]);
  });

  it('says why DNS answers were not recorded, and nothing about DNS when --no-dns', async () => {
    const noApi: string[] = [];
    const source = await openSource({ replay: fixture('lab-iptables') }, { progress: () => undefined });
    await captureBundle({ ...source, apiText: undefined }, outDir(), { progress: (m) => noApi.push(m) });
    expect(noApi.at(-1)).toBe('DNS answers not recorded: no API objects');
    const off: string[] = [];
    await captureBundle(await openSource({ replay: fixture('lab-iptables') }, { progress: () => undefined }), outDir(), { progress: (m) => off.push(m), dns: false });
    expect(off.filter((m) => /DNS/.test(m))).toEqual([]);
    expect(off.filter((m) => !m.startsWith('skipped '))).toHaveLength(4);
  });
});

describe('probeTally', () => {
  it('counts by status and names the probes that did not answer', () => {
    expect(probeTally([makeRun('a', 'ok'), makeRun('ipvsadm', 'missing'), makeRun('b', 'ok'), makeRun('ipset', 'missing'), makeRun('c', 'timeout')]))
      .toBe('2 ok, 2 missing (ipvsadm, ipset), 1 timeout (c)');
  });
});

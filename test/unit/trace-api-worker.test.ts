/**
 * `trace` narrows a replay's api.json on a worker thread (src/cli/trace-api.ts,
 * src/cli/trace-api-worker.ts) while the main thread reads and parses the dumps; the
 * in-thread narrowing (`worker: false`, `NODESCOPE_TRACE_API_WORKER=0`) is the reference.
 * Proven here: the same trace documents (text and JSON) for many destinations on the lab
 * captures and generated captures of every mode, with the worker really used; the bin's
 * stdout, stderr and exit code byte for byte; the same text for odd api.json texts; the
 * fallbacks (no script, a script that fails, an unreadable file) answer as the thread does.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import type { GlobalOptions } from '../../src/cli/options.js';
import { startTraceApi, traceApiWorkerUrl, traceApiWorkerWanted, type TraceApiFeed } from '../../src/cli/trace-api.js';
import { loadForTrace } from '../../src/cli/trace-load.js';
import { closeSource } from '../../src/sources/open.js';
import { packageRoot } from '../../src/paths.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { apiTextFor } from '../../src/sources/api-select.js';
import { readTextFile } from '../../src/sources/read-text.js';
import { fixtureDir, tempDirs } from '../helpers/fixtures.js';
import { traceDestinations } from '../helpers/trace-destinations.js';

const tmpDir = tempDirs('trace-api');

const MODES = ['iptables', 'nftables', 'cilium'] as const;

/** Generated captures of every mode (bench/gen), one world. */
function generated(): Record<(typeof MODES)[number], string> {
  const dir = tmpDir();
  writeGeneratedBundles(dir, { services: 80, endpoints: 3, seed: 'trace-api-worker', modes: [...MODES], conntrack: 300 });
  return { iptables: path.join(dir, 'iptables'), nftables: path.join(dir, 'nftables'), cilium: path.join(dir, 'cilium') };
}

const optionsOf = (dir: string, to: string) => ({ replay: dir, interval: 2, to }) as unknown as GlobalOptions & { to?: string };

/** The trace document of `to` from the in-thread reference and from the worker path; who made the worker path's API text. */
async function both(dir: string, to: string, from: string, output: 'json' | 'text') {
  const docs: string[] = [];
  const hows: string[] = [];
  for (const worker of [false, true]) {
    const { source, snapshot, args } = await loadForTrace(optionsOf(dir, to), () => ({ from, to, output }), { worker });
    docs.push(runTraceCommand(snapshot, args));
    hows.push(source.api && 'how' in source.api ? (source.api as TraceApiFeed).how() : 'none');
    await closeSource(source);
  }
  return { reference: docs[0]!, worker: docs[1]!, hows };
}

describe('trace: the API objects narrowed on a worker', () => {
  const gen = generated();
  it.each([
    ...MODES.map((m) => [`lab-${m}`, () => fixtureDir(`lab-${m}`), 100] as const),
    ...MODES.map((m) => [`a generated ${m} capture`, () => gen[m], 12] as const),
  ])('%s: the same documents as the in-thread narrowing', async (_name, dirOf, services) => {
    const dir = dirOf();
    let viaWorker = 0;
    for (const to of traceDestinations(dir, services)) {
      for (const output of ['json', 'text'] as const) {
        const { reference, worker, hows } = await both(dir, to, to.endsWith('/icmp') ? '10.244.1.7' : '10.244.1.7:40000', output);
        expect(worker, `${to} ${output}`).toBe(reference);
        // The reference is made on this thread; the other by the worker (the fallback would hide a broken worker).
        expect(hows[0]).toBe('thread');
        expect(hows[1]).toBe('worker');
        viaWorker++;
      }
    }
    expect(viaWorker).toBeGreaterThan(6);
  }, 240_000);

  it('a name as destination, or --allow-trace, reads the api.json on this thread as before', async () => {
    for (const opts of [{ to: 'kube-dns' }, { to: '10.96.0.10:53/udp', allowTrace: true }]) {
      const { source } = await loadForTrace({ ...optionsOf(fixtureDir('lab-iptables'), opts.to), ...opts } as GlobalOptions & { to?: string }, () => ({ from: '10.244.1.7', to: opts.to, output: 'json' }));
      expect(source.api).toBeUndefined();
      expect(source.apiText).toBe(readTextFile(path.join(fixtureDir('lab-iptables'), 'api.json')));
      await closeSource(source);
    }
  });
});

describe('startTraceApi', () => {
  const q = { address: '10.96.0.1', port: 443 };
  const texts: Record<string, string> = {
    'a List': JSON.stringify({ kind: 'List', items: [{ kind: 'Service', metadata: { name: 'a' }, spec: { clusterIP: '10.96.0.1' } }, { kind: 'Service', metadata: { name: 'b' }, spec: { clusterIP: '10.96.0.2' } }, { kind: 'EndpointSlice', metadata: { name: 'b-1', labels: { 'kubernetes.io/service-name': 'b' } } }] }, null, 4),
    'multi-byte and escapes': JSON.stringify({ kind: 'List', items: [{ kind: 'Service', metadata: { name: 'ü\u2028' }, spec: { clusterIP: '10.96.0.1', x: 'a\\"b' } }, { kind: 'Service', metadata: { name: 'c' }, spec: { clusterIP: '10.96.0.3' } }] }),
    'not a List': '{"kind":"ServiceList","items":[]}',
    YAML: 'kind: List\nitems: []\n',
    'cut JSON': '{"kind":"List","items":[{"kind":"Service","metadata":{"name":"a"',
    empty: '',
  };
  it.each(Object.entries(texts))('%s: the worker\'s text is the thread\'s', (_name, text) => {
    const file = path.join(tmpDir(), 'api.json');
    writeFileSync(file, text);
    const feed = startTraceApi(file, file, q, { worker: true });
    expect(feed.how()).toBe('pending');
    expect(feed.text()).toBe(apiTextFor(readTextFile(file), q));
    expect(feed.how()).toBe('worker');
    // Asked again: the same text, not made again.
    expect(feed.text()).toBe(apiTextFor(text, q));
  });

  it('falls back to this thread when the worker has no script, fails at its start, or is not wanted', async () => {
    const file = path.join(tmpDir(), 'api.json');
    writeFileSync(file, texts['a List']!);
    const broken = path.join(tmpDir(), 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('no start');\n");
    const late = path.join(tmpDir(), 'late-worker.mjs');
    // Starts, then fails without an answer: the exit settles the word (no wait for the answer's limit).
    writeFileSync(late, "import { workerData } from 'node:worker_threads';\nconst s = new Int32Array(workerData.state);\nprocess.on('exit', () => { Atomics.store(s, 0, 3); Atomics.notify(s, 0); });\nAtomics.store(s, 0, 1); Atomics.notify(s, 0);\nthrow new Error('late');\n");
    const missing = pathToFileURL(path.join(tmpDir(), 'absent.mjs'));
    for (const options of [{ worker: false }, { worker: true, script: pathToFileURL(broken), startWaitMs: 1000 }, { worker: true, script: missing }, { worker: true, script: pathToFileURL(late) }]) {
      const feed = startTraceApi(file, file, q, options);
      expect(feed.text()).toBe(apiTextFor(readTextFile(file), q));
      expect(feed.how()).toBe('thread');
      await feed.close();
    }
    expect(traceApiWorkerWanted({ NODESCOPE_TRACE_API_WORKER: '0' })).toBe(false);
    expect(traceApiWorkerWanted({})).toBe(true);
    expect(traceApiWorkerUrl()).toBeDefined();
  });

  it('an unreadable file: the thread\'s error', () => {
    const dir = tmpDir();
    const feed = startTraceApi(dir, 'api.json', q, { worker: true });
    expect(() => feed.text()).toThrow(/EISDIR/);
    expect(feed.how()).toBe('thread');
  });
});

describe('the bin with and without the worker', () => {
  const bin = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
  const run = (args: string[], worker: boolean) => {
    const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', input: '', env: { ...process.env, NODESCOPE_TRACE_API_WORKER: worker ? '1' : '0', NO_COLOR: '1' } });
    return { stdout: r.stdout, stderr: r.stderr, status: r.status };
  };
  it.each(MODES)('lab-%s: stdout, stderr and exit code byte for byte', (mode) => {
    const dir = fixtureDir(`lab-${mode}`);
    // A Service's port, an address no Service has, a port out of range (an error and its exit code).
    const tos = [traceDestinations(dir, 1)[0]!, '10.99.99.99:80/tcp', '10.96.0.1:99999/tcp'];
    for (const to of tos) {
      for (const output of [[], ['-o', 'json']]) {
        const args = ['trace', '--replay', dir, '--from', '10.244.1.7', '--to', to, ...output];
        const reference = run(args, false);
        expect(run(args, true), args.join(' ')).toEqual(reference);
        expect(reference.stdout.length + reference.stderr.length).toBeGreaterThan(0);
      }
    }
  }, 240_000);
});

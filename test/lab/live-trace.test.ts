/**
 * `nodescope trace --allow-trace` against the lab's kernel: the trace table is written
 * through the declared probes (LocalTransport in the node namespace), one HTTP request
 * from the client pod crosses the node while `nft monitor trace` runs, and the kernel's
 * walk must equal nodescope's walk of the same packet (kernel's source port and branch).
 * Afterwards no `nodescope-trace` table is left — also when the run fails mid-way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatKernelEvent } from '../../src/trace/kernel-trace.js';
import { compareLiveTrace, liveTraceText } from '../../src/report/trace-live.js';
import type { TraceCommandArgs } from '../../src/trace/choose-engine.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { LocalTransport } from '../../src/sources/local.js';
import { captureKernelTrace, LIVE_TRACE_TABLE, type LiveTraceMatch } from '../../src/collect/live-trace.js';
import { labAvailable } from '../helpers/lab.js';
import { LAB_SCENARIO, labDown, labUp, nsExec, sendHttp, type LabHandle } from './lab.js';

const PREFIX = 'nslv-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'conntrack', 'timeout']);

const web = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const client = LAB_SCENARIO.pods.find((p) => p.key === 'client')!;
const webEndpoints = web.endpoints.map((e) => `${e.ip}:${web.ports[0]!.targetPort}`);

async function tablesOf(ns: string): Promise<string> {
  const r = await nsExec(ns, ['nft', 'list', 'tables']);
  expect(r.exitCode).toBe(0);
  return r.stdout;
}

describe.skipIf(!canRun)('live kernel trace (--allow-trace) on the lab node', () => {
  let lab: LabHandle;
  const match = (): LiveTraceMatch => ({ l3: 'ip', src: client.ip, dst: web.clusterIP, proto: 'tcp', sport: null, dport: web.ports[0]!.port });

  beforeAll(async () => {
    lab = await labUp('iptables', { prefix: PREFIX });
  }, 120_000);
  afterAll(async () => {
    if (canRun) await labDown({ prefix: PREFIX });
  }, 60_000);

  it('traces one HTTP request from the client pod: the kernel walk equals the simulated one, and the table is gone', async () => {
    const node = lab.names.node;
    await nsExec(node, ['conntrack', '-F']);
    const transport = new LocalTransport({ netns: node });
    const { snapshot } = await loadSnapshot({ transport, live: true });
    const url = `http://${web.clusterIP}:${web.ports[0]!.port}/`;
    let failures = -1;
    let tablesDuring = '';
    const capture = await captureKernelTrace({
      transport, match: match(), allowTrace: true, seconds: 3,
      onListening: async () => {
        tablesDuring = await tablesOf(node);
        failures = (await sendHttp(lab.podNs('client'), url, 1, { timeoutMs: 2000 })).failures;
      },
    });
    expect(tablesDuring).toContain(`table inet ${LIVE_TRACE_TABLE}`);
    expect(failures).toBe(0);
    expect(capture.removed).toBe(true);
    expect(await tablesOf(node)).not.toContain(LIVE_TRACE_TABLE);

    const args: TraceCommandArgs = { to: `${web.clusterIP}:${web.ports[0]!.port}/tcp`, from: client.ip, ...(snapshot.nft?.value ? { nft: snapshot.nft.value } : {}) };
    const c = compareLiveTrace(snapshot, args, match(), capture, 3);
    const text = liveTraceText(c);
    expect(c.facts?.chain, text).toBe('pre');
    expect(webEndpoints, text).toContain(c.facts?.endpoint);
    expect(c.differences, text).toEqual([]);
    expect(c.rows.length, text).toBeGreaterThan(3);
    expect(c.rows.filter((r) => !r.same).map((r) => formatKernelEvent((r.kernel ?? r.nodescope)!)), text).toEqual([]);
    expect(c.walk?.verdict.kind, text).toBe('forwarded');
    expect(text).toContain("same walk: the kernel's events equal nodescope's");
  }, 60_000);

  it('removes the table when the run is aborted with an error mid-way', async () => {
    const node = lab.names.node;
    const transport = new LocalTransport({ netns: node });
    let during = '';
    const run = captureKernelTrace({
      transport, match: match(), allowTrace: true, seconds: 2, settleMs: 100,
      onListening: async () => {
        during = await tablesOf(node);
        throw new Error('aborted by the test');
      },
    });
    await expect(run).rejects.toThrow('aborted by the test');
    expect(during).toContain(LIVE_TRACE_TABLE);
    expect(await tablesOf(node)).not.toContain(LIVE_TRACE_TABLE);
  }, 30_000);
});

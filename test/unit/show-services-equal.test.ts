/**
 * `show services` made row by row (each row's expectation beside its output, one zone look-up,
 * JSON without a replacer; src/report/services.ts) prints exactly what the path before it
 * printed (test/helpers/show-services-reference.ts): every format, both languages, one Service
 * alone, on the three lab captures (loaded as `show services` loads them: no ruleset parsed, and
 * whole), generated captures of three modes and two sizes, and the diagnosis scenarios' nodes
 * (the API saying one thing and the node programming another; eTP=Local, affinity, externalIPs,
 * LB ingress, leftovers, iptables-legacy).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { LAB_SCENARIO } from '../lab/scenario.js';
import { loadSnapshot } from '../../src/collect/session.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { showServices, showServicesPieces } from '../../src/report/services.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { OutputFormat } from '../../src/text/document.js';
import { generatedNode, RICH_SCENARIO, withService } from '../helpers/diagnose-scenario.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { showServicesBefore } from '../helpers/show-services-reference.js';
import { makeHostileBundle } from '../helpers/hostile-bundle.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** A capture as `show services` reads it: the API objects and the cheap mode evidence, no ruleset. */
async function servicesSnapshot(dir: string): Promise<NodeSnapshot> {
  const transport = new ReplayTransport(dir);
  const apiText = transport.apiText();
  return (await loadSnapshot({ transport, live: false, parts: [], ...(apiText !== undefined ? { apiText } : {}) })).snapshot;
}

const FORMATS: readonly OutputFormat[] = ['text', 'wide', 'json', 'yaml', 'name'];

/**
 * What `show services` writes: the pieces of {@link showServicesPieces} one after another
 * (`-o json` of more than 64 Services comes in several); they must be the text before.
 */
function expectSamePieces(snapshot: NodeSnapshot, format: OutputFormat, lang: 'en' | 'ja' = 'en'): void {
  const pieces = showServicesPieces(snapshot, format, undefined, lang);
  if (format !== 'json') expect(pieces.length, format).toBe(1);
  const services = snapshot.api?.value?.services.length ?? 0;
  // Frame, then each chunk of 64 Services with a separator between two chunks.
  if (format === 'json' && services > 0) expect(pieces.length, format).toBe(2 * Math.ceil(services / 64) + 1);
  expect(pieces.join(''), `${format} ${lang} pieces`).toBe(showServicesBefore(snapshot, format, undefined, lang));
}

/** Every format in English, text and JSON in Japanese, and the first and last Service alone: new = before. */
function expectSameOutput(snapshot: NodeSnapshot): void {
  for (const format of FORMATS) expect(showServices(snapshot, format), format).toBe(showServicesBefore(snapshot, format));
  for (const format of FORMATS) expectSamePieces(snapshot, format);
  expectSamePieces(snapshot, 'json', 'ja');
  for (const format of ['text', 'json'] as const) expect(showServices(snapshot, format, undefined, 'ja'), `${format} ja`).toBe(showServicesBefore(snapshot, format, undefined, 'ja'));
  const names = showServicesBefore(snapshot, 'name').split('\n').filter(Boolean).map((l) => l.replace(/^service\//, ''));
  expect(names.length).toBeGreaterThan(0);
  for (const name of [names[0]!, names[names.length - 1]!]) {
    for (const format of ['text', 'json'] as const) expect(showServices(snapshot, format, name), `${format} ${name}`).toBe(showServicesBefore(snapshot, format, name));
  }
  expect(() => showServices(snapshot, 'text', 'nowhere/none')).toThrow(/nowhere\/none/);
}

describe('show services row by row prints what the path before it printed', () => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s, read as show services reads it and whole', async (name) => {
    expectSameOutput(await servicesSnapshot(fixtureDir(name)));
    expectSameOutput(await snapshotOf(name));
  });

  it('generated captures of every mode, two sizes', async () => {
    for (const [services, endpoints] of [[12, 2], [120, 4]] as const) {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-svc-equal-'));
      tmp.push(dir);
      writeGeneratedBundles(dir, { services, endpoints, seed: `svc-equal-${services}`, modes: ['iptables', 'nftables', 'cilium'], conntrack: 50 });
      for (const mode of ['iptables', 'nftables', 'cilium']) {
        const snapshot = await servicesSnapshot(path.join(dir, mode));
        expect(snapshot.api?.value?.services.length, mode).toBeGreaterThanOrEqual(services);
        expectSameOutput(snapshot);
      }
    }
  }, 120_000);

  it('the diagnosis scenarios: the API and the node disagree', async () => {
    const base = await snapshotOf('lab-iptables');
    const noEndpoints = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: [] }));
    const terminating = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.map((e) => ({ ...e, ready: false, serving: true, terminating: true })) }));
    const nodes = [
      generatedNode(base, { mode: 'iptables' }),
      generatedNode(base, { mode: 'nftables' }),
      generatedNode(base, { mode: 'iptables', api: noEndpoints, rules: RICH_SCENARIO }),
      generatedNode(base, { mode: 'iptables', api: terminating }),
      generatedNode(base, { mode: 'nftables', leftoverIptables: LAB_SCENARIO }),
      generatedNode(base, { mode: 'iptables', legacy: RICH_SCENARIO }),
      { ...generatedNode(base, { mode: 'iptables' }), meta: { ...base.meta, node: 'another-node' } },
    ];
    for (const node of nodes) expectSameOutput(node);
  });

  it('a bundle whose names and node carry terminal controls (escaped by piece in -o json)', async () => {
    const dir = makeHostileBundle();
    tmp.push(dir);
    const snapshot = await servicesSnapshot(dir);
    expect(showServices(snapshot, 'json')).toContain('\\u001b');
    // Every format (the names printed are escaped, so no Service is picked by them here).
    for (const format of FORMATS) expect(showServices(snapshot, format), format).toBe(showServicesBefore(snapshot, format));
  });

  it('a newline alone in a name: the expectation lines escaped one by one', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-svc-equal-nl-'));
    tmp.push(dir);
    writeGeneratedBundles(dir, { services: 12, endpoints: 2, seed: 'svc-equal-nl', modes: ['iptables'], conntrack: 5 });
    const apiFile = path.join(dir, 'iptables', 'api.json');
    const list = JSON.parse(readFileSync(apiFile, 'utf8')) as { items: { kind: string; metadata: { name: string } }[] };
    // Neither the first nor the last Service (those are picked by their escaped names below).
    const renamed = list.items.filter((i) => i.kind === 'Service')[3]!;
    renamed.metadata.name = `${renamed.metadata.name}\ntwo-lines`;
    writeFileSync(apiFile, JSON.stringify(list));
    const snapshot = await servicesSnapshot(path.join(dir, 'iptables'));
    expect(showServices(snapshot, 'text')).toContain('\\ntwo-lines: ');
    expectSameOutput(snapshot);
  });

  it('terminal controls in Services of a later JSON chunk', () => {
    // 150 Services (three chunks of the JSON writer), one named with a C1 control and bidi override at the end.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-svc-equal-ctl-'));
    tmp.push(dir);
    writeGeneratedBundles(dir, { services: 150, endpoints: 1, seed: 'svc-equal-ctl', modes: ['iptables'], conntrack: 5 });
    const apiFile = path.join(dir, 'iptables', 'api.json');
    const list = JSON.parse(readFileSync(apiFile, 'utf8')) as { items: { kind: string; metadata: { name: string } }[] };
    const services = list.items.filter((i) => i.kind === 'Service');
    services[services.length - 1]!.metadata.name = `late\u009b31m\u202eevil\u2028x`;
    services[70]!.metadata.name = `mid\u200b\u00adname`;
    writeFileSync(apiFile, JSON.stringify(list));
    return servicesSnapshot(path.join(dir, 'iptables')).then((snapshot) => {
      const json = showServices(snapshot, 'json');
      expect(json).toContain('late\\u009b31m\\u202eevil\\u2028x');
      expect(json).toContain('mid\\u200b\\u00adname');
      expectSameOutput(snapshot);
    });
  }, 120_000);
});

/**
 * `trace` on a replay converts only the API objects a walk to its destination reads
 * (src/sources/api-select.ts) and parses only the iptables chains the walk and the head read
 * (chains parsed on first read: src/parsers/iptables-save.ts `parseIptablesSaveLazy`),
 * through src/cli/trace-load.ts `loadForTrace`: the trace documents (text and JSON, with the
 * expectation notes and the head's evidence and notes), `apiUnreadNote` and the API
 * diagnostics of what is read are those of the whole capture (issue 23 item 3).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { apiUnreadNote } from '../../src/analysis/api-notes.js';
import { loadOnce } from '../../src/cli/load.js';
import type { GlobalOptions } from '../../src/cli/options.js';
import { loadForTrace, traceRead } from '../../src/cli/trace-load.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { apiTextFor } from '../../src/sources/api-select.js';
import { fixtureDir, tempDirs } from '../helpers/fixtures.js';
import { traceDestinations } from '../helpers/trace-destinations.js';

const tmpDir = tempDirs('lean-api');

function generatedBundle(mode: 'iptables' | 'nftables'): string {
  const dir = tmpDir();
  writeGeneratedBundles(dir, { services: 60, endpoints: 3, seed: 'lean-api', modes: [mode], conntrack: 300 });
  return path.join(dir, mode);
}

/** lab-iptables with an unread kind in its List, kube-dns asking for affinity, and a second kube-dns slice with a bad endpoint address. */
function editedLab(): string {
  const dir = path.join(tmpDir(), 'lab');
  cpSync(fixtureDir('lab-iptables'), dir, { recursive: true });
  const file = path.join(dir, 'api.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { items: Record<string, any>[]; [k: string]: unknown };
  list['x-nodescope-unread'] = ['ServiceCIDR: 403 Forbidden'];
  const dns = list.items.find((i) => i['kind'] === 'Service' && i['metadata'].name === 'kube-dns')!;
  dns['spec'].sessionAffinity = 'ClientIP';
  const slice = structuredClone(list.items.find((i) => i['kind'] === 'EndpointSlice' && i['endpoints']?.length)!);
  slice['metadata'] = { ...slice['metadata'], name: 'kube-dns-bad', labels: { 'kubernetes.io/service-name': 'kube-dns' } };
  slice['endpoints'][0].addresses = ['not-an-ip'];
  list.items.push(slice);
  writeFileSync(file, JSON.stringify(list, null, 4));
  return dir;
}

const optionsOf = (dir: string, to?: string) => ({ replay: dir, interval: 2, ...(to !== undefined ? { to } : {}) }) as unknown as GlobalOptions & { to?: string };

describe('trace reads only the API objects of its destination', () => {
  it.each([
    ['lab-iptables', () => fixtureDir('lab-iptables')],
    ['lab-nftables', () => fixtureDir('lab-nftables')],
    ['lab-iptables, edited', editedLab],
    ['a generated iptables capture', () => generatedBundle('iptables')],
    ['a generated nftables capture', () => generatedBundle('nftables')],
  ])('%s: the same documents, unread note and diagnostics', async (name, dirOf) => {
    const dir = dirOf();
    const { snapshot: full } = await loadOnce(optionsOf(dir));
    const fullKeys = new Set(full.api!.diagnostics.map((d) => `${d.code} ${d.message}`));
    let narrowed = 0;
    let lazy = 0;
    // Chains whose rules were not read (a lazily parsed chain gets its own `rules` on first read).
    const unread = (s: typeof full) => s.iptables?.value?.tables.reduce((n, t) => n + t.chains.filter((c) => !Object.hasOwn(c, 'rules')).length, 0) ?? 0;
    for (const to of traceDestinations(dir, 4)) {
      for (const from of to.endsWith('/icmp') ? ['10.244.1.7'] : ['10.244.1.7:40000', '10.244.1.7']) {
        for (const output of ['json', 'text'] as const) {
          const { snapshot: lean, args } = await loadForTrace(optionsOf(dir, to), () => ({ from, to, output }));
          const doc = runTraceCommand(lean, args);
          if (unread(lean) > 0) lazy++;
          expect(doc, `${to} ${output}`).toBe(runTraceCommand(full, { from, to, output }));
          // Every chain read now: the lazily parsed ruleset equals the whole parse, diagnostics too.
          if (lean.iptables?.value) expect(lean.iptables.value).toEqual(full.iptables!.value);
          expect(lean.iptables?.diagnostics).toEqual(full.iptables?.diagnostics);
          if (lean.api!.value!.services.length < full.api!.value!.services.length) narrowed++;
          expect(lean.meta.node).toBe(full.meta.node);
          expect(apiUnreadNote(lean.api!.value)).toEqual(apiUnreadNote(full.api!.value));
          // What is converted says what the whole conversion said of it (lines differ: the text is a shorter one).
          for (const d of lean.api!.diagnostics) expect(fullKeys, `${d.code} ${d.message}`).toContain(`${d.code} ${d.message}`);
          if (dir.endsWith('lab')) expect(lean.api!.diagnostics.some((d) => d.message.includes('not-an-ip'))).toBe(true);
        }
      }
    }
    expect(narrowed).toBeGreaterThan(0);
    // The walk left chains unparsed (the lazy parse was used, not the one-pass fallback).
    if (name.includes('iptables')) expect(lazy).toBeGreaterThan(0);
  });

  it('keeps the frontend Services, their slices, NodePorts, affinity, duplicates and every other kind', () => {
    const svc = (name: string, spec: object) => ({ kind: 'Service', metadata: { namespace: 'ns', name }, spec });
    const slice = (name: string, service?: string) => ({ kind: 'EndpointSlice', metadata: { namespace: 'ns', name, ...(service ? { labels: { 'kubernetes.io/service-name': service } } : {}) } });
    const items = [
      svc('hit', { clusterIP: '10.96.0.1', ports: [{ port: 80 }] }),
      svc('lb', { clusterIP: '10.96.0.9', ports: [{ port: 80 }], externalIPs: [] }),
      { ...svc('ingress', { clusterIP: '10.96.0.8' }), status: { loadBalancer: { ingress: [{ ip: '10.96.0.1' }] } } },
      svc('np', { clusterIP: '10.96.0.2', ports: [{ port: 80, nodePort: 30080 }] }),
      svc('sticky', { clusterIP: '10.96.0.3', sessionAffinity: 'ClientIP' }),
      svc('plain', { clusterIP: '10.96.0.4', sessionAffinity: 'None' }),
      svc('hit', { clusterIP: '10.96.0.5' }),
      slice('hit-1', 'hit'), slice('plain-1', 'plain'), slice('orphan'),
      { kind: 'Pod', metadata: { name: 'p' } }, { kind: 'Node', metadata: { name: 'n' } },
    ];
    const text = JSON.stringify({ kind: 'List', apiVersion: 'v1', 'x-nodescope-unread': ['IPAddress: 404'], items });
    const kept = JSON.parse(apiTextFor(text, { address: '10.96.0.1', port: 30080 })) as { items: { kind: string; metadata: { name: string } }[]; 'x-nodescope-unread': string[] };
    expect(kept.items.map((i) => `${i.kind} ${i.metadata.name}`)).toEqual([
      'Service hit', 'Service ingress', 'Service np', 'Service sticky', 'Service hit', 'EndpointSlice hit-1', 'EndpointSlice orphan', 'Pod p', 'Node n',
    ]);
    expect(kept['x-nodescope-unread']).toEqual(['IPAddress: 404']);
    // ICMP: no port, so no NodePort Service.
    expect(apiTextFor(text, { address: '10.96.0.1', port: null })).not.toContain('"np"');
  });

  it('leaves any other text as it is', () => {
    for (const text of ['', 'not json', '{"kind":"ServiceList","items":[{"metadata":{"name":"a"}}]}', '[{"kind":"Service"}]', 'kind: List\nitems: []\n', '{"kind":"List","items":[{"metadata":{}}]}']) {
      expect(apiTextFor(text, { address: '10.96.0.1', port: 80 })).toBe(text);
    }
    const all = JSON.stringify({ kind: 'List', items: [{ kind: 'Service', metadata: { name: 'a' }, spec: { clusterIP: '10.96.0.1' } }] });
    expect(apiTextFor(all, { address: '10.96.0.1', port: 80 })).toBe(all);
    expect(traceRead('[fd00::1]:80/tcp', false)).toBeUndefined();
    expect(traceRead('10.96.0.1:80/tcp', true)).toBeUndefined();
  });
});

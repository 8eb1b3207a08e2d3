/**
 * Every file of shared/corpus/k8s-objects parses with exactly the diagnostics listed
 * here (quirk 29 of shared/reference/corpus-notes.md), and the shapes it names are read.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from 'vitest';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';

function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}

const corpus = path.resolve(repoRoot(), '../shared/corpus/k8s-objects');
const present = existsSync(corpus);
if (!present) console.warn(`skipping k8s corpus tests: ${corpus} is absent`);

const read = (file: string) => parseK8sObjects(readFileSync(path.join(corpus, file), 'utf8'), file);

/** file → expected [severity, code, line] and object counts [services, slices, others]. */
const EXPECTED: Record<string, { diagnostics: [string, string, number][]; counts: [number, number, number] }> = {
  // A bare object (no kind, no apiVersion) from a watch event: its kind is inferred.
  'endpointslice-watch-event-endpoints-null.txt': { diagnostics: [['info', 'kind-inferred', 1]], counts: [0, 1, 0] },
  // The lower-case clusterIP "none" of the cilium headless test input.
  'externalname-and-headless-services.yaml.txt': { diagnostics: [['info', 'clusterip-none-case', 59]], counts: [3, 1, 0] },
  'kind-dualstack-service-and-endpointslices.yaml.txt': { diagnostics: [], counts: [1, 2, 0] },
  // The $READY1/$TERM1/$READY2/$TERM2 placeholders of the graceful-termination template.
  'topology-hints-and-terminating-endpointslices.yaml.txt': {
    diagnostics: [
      ['warning', 'condition-not-boolean', 134],
      ['warning', 'condition-not-boolean', 136],
      ['warning', 'condition-not-boolean', 147],
      ['warning', 'condition-not-boolean', 149],
    ],
    counts: [2, 3, 0],
  },
};

describe.skipIf(!present)('k8s-objects corpus', () => {
  it('has an expectation for every file', () => {
    expect(readdirSync(corpus).sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))('%s', (file, want) => {
    const r = read(file);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line])).toEqual(want.diagnostics);
    expect([r.value.services.length, r.value.endpointSlices.length, r.value.others.length]).toEqual(want.counts);
  });

  it('watch event with "endpoints": null and "ports": null', () => {
    const [slice] = read('endpointslice-watch-event-endpoints-null.txt').value.endpointSlices;
    expect(slice).toMatchObject({ serviceName: 'kubernetes', addressType: 'IPv4', endpoints: [], ports: [] });
    expect(slice?.raw['endpoints']).toBeNull();
  });

  it('ExternalName without clusterIP, and lower-case "none" read as headless', () => {
    const { services, endpointSlices } = read('externalname-and-headless-services.yaml.txt').value;
    expect(services.map((s) => [s.meta.name, s.type, s.headless, s.clusterIPs])).toEqual([
      ['example', 'ExternalName', false, []],
      ['kubernetes', 'ClusterIP', false, ['10.96.0.1']],
      ['echo', 'ClusterIP', true, []],
    ]);
    expect(services[0]?.externalName).toBe('www.example.com');
    expect(endpointSlices[0]?.meta.annotations).toEqual({}); // empty `annotations:` key
  });

  it('dual-stack: one slice per family for one Service', () => {
    const { services, endpointSlices } = read('kind-dualstack-service-and-endpointslices.yaml.txt').value;
    expect(services[0]?.clusterIPs).toEqual(['10.96.207.99', 'fd00:10:96::b050']);
    expect(services[0]?.ports.map((p) => [p.name, p.protocol, p.nodePort])).toEqual([['http', 'TCP', 30181], ['tftp', 'UDP', 32757]]);
    expect(endpointSlices.map((s) => [s.addressType, s.serviceName, s.endpoints.length])).toEqual([
      ['IPv6', 'echo-dualstack', 2],
      ['IPv4', 'echo-dualstack', 2],
    ]);
  });

  it('zone hints, templated conditions and the empty port name', () => {
    const { services, endpointSlices } = read('topology-hints-and-terminating-endpointslices.yaml.txt').value;
    expect(services[0]?.meta.annotations).toEqual({ 'service.kubernetes.io/topology-mode': 'auto' });
    expect(endpointSlices[0]?.endpoints[0]).toMatchObject({ zone: 'foo', hintsForZones: ['foo', 'bar'] });
    const graceful = endpointSlices[2];
    expect(graceful?.ports.map((p) => p.name)).toEqual(['']);
    expect(graceful?.endpoints.map((e) => [e.ready, e.serving, e.terminating])).toEqual([
      [null, true, null],
      [null, true, null],
    ]);
  });
});

/**
 * The straight Service/EndpointSlice reader (src/parsers/k8s-convert-fast.ts) gives exactly
 * what the full converter (`toService`, `toEndpointSlice`, kept as the reference and the
 * fallback) gives, and gives up on every object the full converter reports on: object by
 * object (the typed value and the raw JSON after value sharing), and a whole parse against
 * the parse with the straight reader switched off (objects, diagnostics with their lines).
 * Inputs: the three lab captures, generated captures of every mode, the diagnosis
 * scenarios, the shared corpus (skipped with a reason when absent) and edited objects of
 * every odd shape the full converter has a word for.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import type { JsonObject, JsonValue } from '../../src/model/k8s.js';
import { endpointSliceFast, serviceFast } from '../../src/parsers/k8s-convert-fast.js';
import { SharedValues, toEndpointSlice, toService } from '../../src/parsers/k8s-convert.js';
import type { ConvertContext } from '../../src/parsers/k8s-convert.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { apiObjectsText } from '../lab/api-objects.js';
import { RICH_SCENARIO, withService } from '../helpers/diagnose-scenario.js';
import { fixtureDir } from '../helpers/fixtures.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** parseK8sObjects with the straight reader switched off: every object through the full converter. */
let parseReference: typeof parseK8sObjects;
beforeAll(async () => {
  vi.resetModules();
  vi.doMock('../../src/parsers/k8s-convert-fast.js', () => ({ serviceFast: () => undefined, endpointSliceFast: () => undefined }));
  parseReference = (await import('../../src/parsers/k8s-objects.js')).parseK8sObjects;
  vi.doUnmock('../../src/parsers/k8s-convert-fast.js');
});

const clone = (o: JsonObject): JsonObject => JSON.parse(JSON.stringify(o)) as JsonObject;

interface Tally {
  fast: number;
  fellBack: number;
}

/**
 * One object both ways, each on its own copy with its own value sharing: when the straight
 * reader answers, the full converter reported nothing and made the same object and raw JSON.
 */
function expectSameObject(o: JsonObject, kind: 'Service' | 'EndpointSlice', tally: Tally, share = true): void {
  const reports: string[] = [];
  const source = { origin: 'api', line: 1 };
  const refCtx: ConvertContext = { source, ...(share ? { share: new SharedValues() } : {}), report: (_s, p, code) => reports.push(`${code} ${p.join('.')}`) };
  const fastCtx: ConvertContext = { source, ...(share ? { share: new SharedValues() } : {}), report: () => { throw new Error('the straight reader reports nothing'); } };
  const a = clone(o);
  const b = clone(o);
  const ref = kind === 'Service' ? toService(a, refCtx) : toEndpointSlice(a, refCtx);
  const fast = kind === 'Service' ? serviceFast(b, fastCtx) : endpointSliceFast(b, fastCtx);
  if (fast === undefined) {
    tally.fellBack++;
    return;
  }
  tally.fast++;
  expect(reports, JSON.stringify(o).slice(0, 300)).toEqual([]);
  expect(fast).toStrictEqual(ref);
  expect(b).toStrictEqual(a);
}

/** Every Service and EndpointSlice of a List text both ways, and the whole parse both ways. */
function expectSameText(text: string, origin = 'api.json'): Tally {
  const tally: Tally = { fast: 0, fellBack: 0 };
  const doc = JSON.parse(text) as JsonValue;
  const items = Array.isArray(doc) ? doc : (doc as JsonObject)['items'];
  for (const item of Array.isArray(items) ? items : [doc]) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) continue;
    const kind = item['kind'];
    if (kind === 'Service' || kind === 'EndpointSlice') {
      expectSameObject(item, kind, tally);
      expectSameObject(item, kind, { fast: 0, fellBack: 0 }, false);
    }
  }
  expectSameParse(text, origin);
  return tally;
}

function expectSameParse(text: string, origin: string): void {
  const got = parseK8sObjects(text, origin);
  const want = parseReference(text, origin);
  expect(got.diagnostics).toStrictEqual(want.diagnostics);
  expect(got.value).toStrictEqual(want.value);
}

describe('the straight Service/EndpointSlice reader equals the full converter', () => {
  it('switched off in the reference parse (the comparison can fail)', () => {
    const text = readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json'), 'utf8');
    const item = (JSON.parse(text) as { items: JsonObject[] }).items.find((i) => i['kind'] === 'Service')!;
    const ctx: ConvertContext = { source: { origin: 'x', line: 1 }, report: () => undefined };
    expect(serviceFast(clone(item), ctx)).toBeDefined();
    // With the reader switched off the reference still reads the same Services.
    expect(parseReference(text, 'a').value.services.length).toBe(parseK8sObjects(text, 'a').value.services.length);
  });

  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('%s: every Service and EndpointSlice read straight', (name) => {
    const text = readFileSync(path.join(fixtureDir(name), 'api.json'), 'utf8');
    const tally = expectSameText(text);
    expect(tally.fast).toBeGreaterThan(0);
    expect(tally.fellBack).toBe(0);
  });

  it('generated captures of every mode', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-convert-fast-'));
    tmp.push(dir);
    writeGeneratedBundles(dir, { services: 150, endpoints: 4, seed: 'convert-fast', modes: ['iptables', 'nftables', 'cilium'], conntrack: 10 });
    for (const mode of ['iptables', 'nftables', 'cilium']) {
      const tally = expectSameText(readFileSync(path.join(dir, mode, 'api.json'), 'utf8'));
      expect(tally.fast, mode).toBeGreaterThanOrEqual(300);
      expect(tally.fellBack, mode).toBe(0);
    }
  }, 120_000);

  it('the diagnosis scenarios', () => {
    const noEndpoints = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: [] }));
    const terminating = withService(RICH_SCENARIO, 'web', (s) => ({ ...s, endpoints: s.endpoints.map((e) => ({ ...e, ready: false, serving: true, terminating: true })) }));
    for (const scenario of [RICH_SCENARIO, noEndpoints, terminating]) {
      const text = apiObjectsText(scenario);
      const first = text.trimStart()[0];
      if (first === '{' || first === '[') expect(expectSameText(text).fast).toBeGreaterThan(0);
      else expectSameParse(text, 'api');
    }
  });

  const corpus = path.resolve(fixtureDir('lab-iptables'), '../../../shared/corpus/k8s-objects');
  const present = existsSync(corpus);
  if (!present) console.warn(`skipping the corpus part of the straight-reader test: ${corpus} is absent`);
  it.skipIf(!present)('the shared corpus (YAML and watch events; parse both ways)', () => {
    for (const file of readdirSync(corpus)) expectSameParse(readFileSync(path.join(corpus, file), 'utf8'), file);
  });
});

/** A lab Service and EndpointSlice to edit. */
function labItems(): { service: JsonObject; slice: JsonObject } {
  const items = (JSON.parse(readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json'), 'utf8')) as { items: JsonObject[] }).items;
  const service = items.find((i) => i['kind'] === 'Service' && Array.isArray((i['spec'] as JsonObject)['ports']))!;
  const slice = items.find((i) => i['kind'] === 'EndpointSlice' && Array.isArray(i['endpoints']) && (i['endpoints'] as JsonValue[]).length > 0)!;
  return { service, slice };
}

type Edit = (o: Record<string, any>) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

const SERVICE_EDITS: Record<string, Edit> = {
  'port as text': (o) => (o.spec.ports[0].port = '80'),
  'port missing': (o) => delete o.spec.ports[0].port,
  'port null': (o) => (o.spec.ports[0].port = null),
  'port not an integer': (o) => (o.spec.ports[0].port = 80.5),
  'targetPort empty': (o) => (o.spec.ports[0].targetPort = ''),
  'targetPort null': (o) => (o.spec.ports[0].targetPort = null),
  'targetPort true': (o) => (o.spec.ports[0].targetPort = true),
  'targetPort a name': (o) => (o.spec.ports[0].targetPort = 'http'),
  'protocol lower case': (o) => (o.spec.ports[0].protocol = 'tcp'),
  'protocol SCTP, nodePort, appProtocol': (o) => Object.assign(o.spec.ports[0], { protocol: 'SCTP', nodePort: 30080, appProtocol: 'h2c' }),
  'a port not an object': (o) => o.spec.ports.push(7),
  'ports null': (o) => (o.spec.ports = null),
  'ports an object': (o) => (o.spec.ports = {}),
  'clusterIP none': (o) => { o.spec.clusterIP = 'none'; o.spec.clusterIPs = ['none']; },
  'clusterIP None': (o) => { o.spec.clusterIP = 'None'; o.spec.clusterIPs = ['None']; },
  'clusterIP None, no list': (o) => { o.spec.clusterIP = 'None'; delete o.spec.clusterIPs; },
  'clusterIPs with an empty one': (o) => (o.spec.clusterIPs = ['', '10.0.0.1']),
  'clusterIPs a number': (o) => (o.spec.clusterIPs = [10]),
  'no clusterIP at all': (o) => { delete o.spec.clusterIP; delete o.spec.clusterIPs; },
  'a label not a string': (o) => (o.metadata.labels = { a: 1 }),
  'labels null, annotations null': (o) => { o.metadata.labels = null; o.metadata.annotations = null; },
  'metadata null': (o) => (o.metadata = null),
  'metadata a list': (o) => (o.metadata = []),
  'name a number': (o) => (o.metadata.name = 5),
  'deletionTimestamp': (o) => (o.metadata.deletionTimestamp = '2026-12-06T00:00:00Z'),
  'proxy name label': (o) => (o.metadata.labels = { ...o.metadata.labels, 'service.kubernetes.io/service-proxy-name': 'other' }),
  'selector null': (o) => (o.spec.selector = null),
  'selector empty': (o) => (o.spec.selector = {}),
  'ipFamilies unknown': (o) => (o.spec.ipFamilies = ['IPv5']),
  'ipFamilies a number': (o) => (o.spec.ipFamilies = [4]),
  'dual stack': (o) => { o.spec.ipFamilies = ['IPv4', 'IPv6']; o.spec.ipFamilyPolicy = 'PreferDualStack'; o.spec.clusterIPs = ['10.96.0.9', 'fd00::9']; },
  'ipFamilyPolicy unknown': (o) => (o.spec.ipFamilyPolicy = 'Maybe'),
  'type unknown': (o) => (o.spec.type = 'Weird'),
  'type LoadBalancer with ingress': (o) => { o.spec.type = 'LoadBalancer'; o.status = { loadBalancer: { ingress: [{ ip: '192.0.2.1', ipMode: 'VIP' }, { hostname: 'lb.example' }] } }; },
  'ingress not objects': (o) => (o.status = { loadBalancer: { ingress: ['x'] } }),
  'ingress ip a number': (o) => (o.status = { loadBalancer: { ingress: [{ ip: 1 }] } }),
  'status a string': (o) => (o.status = 'ok'),
  'spec a list': (o) => (o.spec = []),
  'spec null': (o) => (o.spec = null),
  'affinity ClientIP': (o) => { o.spec.sessionAffinity = 'ClientIP'; o.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } }; },
  'affinity timeout text': (o) => { o.spec.sessionAffinity = 'ClientIP'; o.spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 'x' } }; },
  'affinity config a list': (o) => (o.spec.sessionAffinityConfig = []),
  'policies Local': (o) => Object.assign(o.spec, { externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local', healthCheckNodePort: 32000, trafficDistribution: 'PreferClose' }),
  'policy unknown': (o) => (o.spec.externalTrafficPolicy = 'local'),
  'publishNotReadyAddresses text': (o) => (o.spec.publishNotReadyAddresses = 'yes'),
  'publishNotReadyAddresses true': (o) => (o.spec.publishNotReadyAddresses = true),
  'externalIPs': (o) => (o.spec.externalIPs = ['192.0.2.7']),
  'externalIPs a number': (o) => (o.spec.externalIPs = [1]),
  'loadBalancerSourceRanges': (o) => (o.spec.loadBalancerSourceRanges = ['10.0.0.0/8']),
  'ExternalName': (o) => { o.spec = { type: 'ExternalName', externalName: 'db.example' }; },
  'no apiVersion': (o) => delete o.apiVersion,
  'apiVersion a number': (o) => (o.apiVersion = 1),
};

const SLICE_EDITS: Record<string, Edit> = {
  'addressType missing': (o) => delete o.addressType,
  'addressType null': (o) => (o.addressType = null),
  'addressType unknown': (o) => (o.addressType = 'IPv7'),
  'addressType FQDN': (o) => { o.addressType = 'FQDN'; o.endpoints[0].addresses = ['db.example']; },
  'addressType IPv6 over IPv4 addresses': (o) => (o.addressType = 'IPv6'),
  'IPv6 addresses': (o) => { o.addressType = 'IPv6'; o.endpoints[0].addresses = ['fd00::10']; },
  'an address not an IP': (o) => (o.endpoints[0].addresses = ['not-an-ip']),
  'one of two addresses not an IP': (o) => (o.endpoints[0].addresses = ['10.0.0.1', 'x']),
  'addresses empty': (o) => (o.endpoints[0].addresses = []),
  'an address a number': (o) => (o.endpoints[0].addresses = [1]),
  'endpoints null': (o) => (o.endpoints = null),
  'endpoints a string': (o) => (o.endpoints = 'x'),
  'an endpoint not an object': (o) => o.endpoints.push(1),
  'conditions null': (o) => (o.endpoints[0].conditions = null),
  'conditions missing': (o) => delete o.endpoints[0].conditions,
  'conditions a list': (o) => (o.endpoints[0].conditions = []),
  'ready as text': (o) => (o.endpoints[0].conditions = { ready: 'true' }),
  'conditions in another order, with null': (o) => (o.endpoints[0].conditions = { terminating: true, serving: null, ready: false }),
  'conditions with another key': (o) => (o.endpoints[0].conditions = { ready: true, other: true }),
  'hints': (o) => (o.endpoints[0].hints = { forZones: [{ name: 'a' }, {}], forNodes: [{ name: 'n1' }] }),
  'hints not objects': (o) => (o.endpoints[0].hints = { forZones: [1] }),
  'hint name a number': (o) => (o.endpoints[0].hints = { forNodes: [{ name: 2 }] }),
  'hints a string': (o) => (o.endpoints[0].hints = 'x'),
  'targetRef a string': (o) => (o.endpoints[0].targetRef = 'x'),
  'targetRef without name': (o) => (o.endpoints[0].targetRef = { kind: 'Pod', name: null }),
  'nodeName a number': (o) => (o.endpoints[0].nodeName = 5),
  'zone and hostname': (o) => Object.assign(o.endpoints[0], { zone: 'z1', hostname: 'h' }),
  'ports null': (o) => (o.ports = null),
  'a port a text number': (o) => (o.ports = [{ port: 'x' }]),
  'a port without name or number': (o) => (o.ports = [{ name: null, port: null, protocol: 'UDP' }]),
  'a port protocol unknown': (o) => (o.ports = [{ port: 80, protocol: 'udp' }]),
  'ports an object': (o) => (o.ports = {}),
  'no service-name label': (o) => (o.metadata.labels = {}),
};

describe('edited objects: the same object, or the full converter with its words', () => {
  const { service, slice } = labItems();
  const cases: [string, 'Service' | 'EndpointSlice', Edit][] = [
    ...Object.entries(SERVICE_EDITS).map(([n, e]) => [`Service: ${n}`, 'Service', e] as [string, 'Service', Edit]),
    ...Object.entries(SLICE_EDITS).map(([n, e]) => [`EndpointSlice: ${n}`, 'EndpointSlice', e] as [string, 'EndpointSlice', Edit]),
  ];
  it.each(cases)('%s', (_name, kind, edit) => {
    const o = clone(kind === 'Service' ? service : slice);
    edit(o);
    const tally: Tally = { fast: 0, fellBack: 0 };
    expectSameObject(o, kind, tally);
    expectSameObject(o, kind, tally, false);
    // Within a List (twice: the second a duplicate), and alone, through the whole parse.
    expectSameParse(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [o, o] }, null, 2), 'api.json');
    expectSameParse(JSON.stringify(o), 'one.json');
  });

  it('falls back exactly where the full converter has something to say', () => {
    const fellBack: string[] = [];
    for (const [name, kind, edit] of cases) {
      const o = clone(kind === 'Service' ? service : slice);
      edit(o);
      const tally: Tally = { fast: 0, fellBack: 0 };
      expectSameObject(o, kind, tally);
      if (tally.fellBack > 0) fellBack.push(name);
    }
    // Every edit the full converter reports on falls back; the clean edits are read straight.
    expect(fellBack).toContain('Service: port as text');
    expect(fellBack).toContain('Service: clusterIP none');
    expect(fellBack).toContain('EndpointSlice: an address not an IP');
    expect(fellBack).toContain('EndpointSlice: addressType missing');
    expect(fellBack).toContain('Service: a label not a string');
    expect(fellBack).not.toContain('Service: clusterIP None');
    expect(fellBack).not.toContain('Service: dual stack');
    expect(fellBack).not.toContain('EndpointSlice: addressType null');
    expect(fellBack).not.toContain('EndpointSlice: hints');
    expect(fellBack).not.toContain('EndpointSlice: conditions in another order, with null');
  });
});

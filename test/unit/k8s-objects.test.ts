import { describe, it, expect } from 'vitest';
import { stringify } from 'yaml';
import {
  applyWatchEvent,
  formatK8sObjects,
  parseK8sObjects,
  parseWatchEvent,
} from '../../src/parsers/k8s-objects.js';
import { EMPTY_API_OBJECTS, objectKey } from '../../src/model/k8s.js';
import type { ApiObjects, JsonObject, K8sObject, WatchEvent } from '../../src/model/k8s.js';
import { listJson, makeEndpointSlice, makeNode, makePod, makeService, objectsOf } from './builders/k8s.js';

/** The objects without `source` (where they were read), for comparing two parses. */
function strip(o: ApiObjects): unknown {
  const s = (x: K8sObject) => ({ ...x, source: undefined });
  return {
    services: o.services.map(s),
    endpointSlices: o.endpointSlices.map(s),
    pods: o.pods.map(s),
    nodes: o.nodes.map(s),
    others: o.others.map(s),
  };
}

const names = (o: ApiObjects) => [...o.services, ...o.endpointSlices, ...o.pods, ...o.nodes, ...o.others].map(objectKey);
const codes = (r: { diagnostics: readonly { code: string }[] }) => r.diagnostics.map((d) => d.code);
const event = (type: string, object: JsonObject) => JSON.stringify({ type, object });
const namespace = (name: string): JsonObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

describe('parseK8sObjects: input shapes', () => {
  const svc = makeService();
  const slice = makeEndpointSlice();
  const pod = makePod();
  const node = makeNode();
  const expected = ['Service/default/web', 'EndpointSlice/default/web-abcde', 'Pod/default/web-0', 'Node//node-a'];

  it.each([
    ['kind: List (kubectl -o json)', listJson([svc, slice, pod, node])],
    ['top-level array', JSON.stringify([svc, slice, pod, node])],
    ['objects back to back', [svc, slice, pod, node].map((o) => JSON.stringify(o)).join('')],
    ['one object per line', [svc, slice, pod, node].map((o) => JSON.stringify(o)).join('\n')],
    ['YAML multi-document', [svc, slice, pod, node].map((o) => `---\n${stringify(o)}`).join('')],
    ['YAML kind: List', stringify({ apiVersion: 'v1', kind: 'List', items: [svc, slice, pod, node] })],
    ['watch events, one per line', [svc, slice, pod, node].map((o) => event('ADDED', o)).join('\n')],
    ['watch events, concatenated', [svc, slice, pod, node].map((o) => event('ADDED', o)).join('')],
    ['JSON after a byte-order mark', `\uFEFF${listJson([svc, slice, pod, node])}`],
  ])('%s', (_, text) => {
    const r = parseK8sObjects(text, 'test');
    expect(r.diagnostics).toEqual([]);
    expect(names(r.value)).toEqual(expected);
  });

  it('reads the same model from JSON and YAML', () => {
    const items = [makeService({ type: 'NodePort', ports: [{ name: 'dns', protocol: 'UDP', port: 53, nodePort: 30053 }] }), slice];
    const fromJson = parseK8sObjects(listJson(items), 'a.json');
    const fromYaml = parseK8sObjects(items.map((o) => `---\n${stringify(o)}`).join(''), 'a.yaml');
    expect(strip(fromYaml.value)).toEqual(strip(fromJson.value));
  });

  it('reads typed lists whose items carry no kind (REST output)', () => {
    const bare = (o: JsonObject) => {
      const { kind: _k, apiVersion: _v, ...rest } = o;
      return rest;
    };
    const text = [
      JSON.stringify({ apiVersion: 'v1', kind: 'ServiceList', items: [bare(svc)] }),
      JSON.stringify({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', items: [bare(slice)] }),
    ].join('\n');
    const r = parseK8sObjects(text, 'rest');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services[0]?.apiVersion).toBe('v1');
    expect(r.value.endpointSlices[0]?.apiVersion).toBe('discovery.k8s.io/v1');
    expect(r.value.endpointSlices[0]?.raw).toEqual(bare(slice));
  });

  it('keeps other kinds as unknown with an info diagnostic', () => {
    const r = parseK8sObjects(listJson([svc, namespace('prod')]), 'test');
    expect(r.value.others.map((o) => [o.apiKind, o.meta.name])).toEqual([['Namespace', 'prod']]);
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['info', 'unknown-kind']]);
  });

  it('records where each object starts', () => {
    const text = [svc, slice].map((o) => `---\n${stringify(o)}`).join('');
    const r = parseK8sObjects(text, 'two.yaml');
    const sliceLine = text.split('\n').indexOf('kind: EndpointSlice');
    expect(r.value.services[0]?.source).toEqual({ origin: 'two.yaml', line: 2 });
    expect(r.value.endpointSlices[0]?.source.line).toBe(sliceLine); // 'apiVersion' is the line before
  });
});

describe('parseK8sObjects: watch streams', () => {
  it('applies ADDED/MODIFIED/DELETED in order and ignores BOOKMARK', () => {
    const text = [
      event('ADDED', makeService({ name: 'a', clusterIP: '10.96.0.1' })),
      event('ADDED', makeService({ name: 'b', clusterIP: '10.96.0.2' })),
      event('ADDED', makeService({ name: 'c', clusterIP: '10.96.0.3' })),
      event('MODIFIED', makeService({ name: 'a', clusterIP: '10.96.0.9' })),
      event('DELETED', makeService({ name: 'b' })),
      event('BOOKMARK', { kind: 'Service', apiVersion: 'v1', metadata: { resourceVersion: '12345' } }),
    ].join('\n');
    const r = parseK8sObjects(text, 'watch');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services.map((s) => [s.meta.name, s.clusterIPs[0]])).toEqual([
      ['a', '10.96.0.9'],
      ['c', '10.96.0.3'],
    ]);
  });

  it('reports an ERROR event with its status and line, and keeps the rest', () => {
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version' };
    const text = [event('ADDED', makeService()), event('ERROR', status)].join('\n');
    const r = parseK8sObjects(text, 'watch');
    expect(r.value.services).toHaveLength(1);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['watch-error', 2]]);
    expect(r.diagnostics[0]?.message).toContain('410 Expired: too old resource version');
  });

  it('skips an event with an unknown type', () => {
    const r = parseK8sObjects(event('RENAMED', makeService()), 'watch');
    expect(r.value.services).toEqual([]);
    expect(codes(r)).toEqual(['unknown-event-type']);
  });
});

describe('parseK8sObjects: fields', () => {
  const one = (o: JsonObject) => parseK8sObjects(listJson([o]), 't');

  it.each([
    ['type defaults to ClusterIP', { clusterIP: '10.96.0.5' }, { type: 'ClusterIP', headless: false, clusterIPs: ['10.96.0.5'] }],
    ['headless None', { clusterIP: 'None', clusterIPs: ['None'] }, { headless: true, clusterIP: 'None', clusterIPs: [] }],
    ['dual-stack', { clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5', 'fd00::5'], ipFamilies: ['IPv4', 'IPv6'] }, { clusterIPs: ['10.96.0.5', 'fd00::5'], ipFamilies: ['IPv4', 'IPv6'] }],
    ['ExternalName without clusterIP', { type: 'ExternalName', clusterIP: null, externalName: 'db.example.com' }, { type: 'ExternalName', clusterIP: undefined, clusterIPs: [], externalName: 'db.example.com' }],
    ['ClientIP affinity with timeout', { sessionAffinity: 'ClientIP', timeoutSeconds: 600 }, { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 600 }],
    ['traffic policies', { externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Cluster', trafficDistribution: 'PreferClose' }, { externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Cluster', trafficDistribution: 'PreferClose' }],
    ['load balancer ingress', { type: 'LoadBalancer', lbIngress: [{ ip: '203.0.113.7' }, { hostname: 'lb.example.com' }] }, { loadBalancerIngress: [{ ip: '203.0.113.7', hostname: undefined, ipMode: undefined }, { ip: undefined, hostname: 'lb.example.com', ipMode: undefined }] }],
    ['no selector differs from empty', { selector: null }, { selector: undefined }],
  ])('Service: %s', (_, opts, want) => {
    const r = one(makeService(opts as Parameters<typeof makeService>[0]));
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services[0]).toMatchObject(want);
  });

  it('Service ports: named targetPort, default targetPort and protocol', () => {
    const svc = makeService({ ports: [{ name: 'web', port: 80, targetPort: 'http-alt' }] });
    const raw = JSON.parse(JSON.stringify(svc));
    raw.spec.ports.push({ port: 9000 }); // no name, protocol, targetPort
    const r = one(raw);
    expect(r.value.services[0]?.ports).toEqual([
      { name: 'web', protocol: 'TCP', port: 80, targetPort: 'http-alt', nodePort: undefined, appProtocol: undefined },
      { name: '', protocol: 'TCP', port: 9000, targetPort: 9000, nodePort: undefined, appProtocol: undefined },
    ]);
  });

  it('EndpointSlice conditions stay tri-state', () => {
    const slice = makeEndpointSlice({
      endpoints: [
        { address: '10.0.0.1', ready: true },
        { address: '10.0.0.2', ready: false, serving: true, terminating: true },
        { address: '10.0.0.3', ready: null, serving: null, terminating: null },
      ],
    });
    const r = one(slice);
    expect(r.value.endpointSlices[0]?.endpoints.map((e) => [e.addresses[0], e.ready, e.serving, e.terminating])).toEqual([
      ['10.0.0.1', true, true, false],
      ['10.0.0.2', false, true, true],
      ['10.0.0.3', null, null, null],
    ]);
  });

  it('EndpointSlice: null endpoints/ports, null and empty port names, hints, targetRef', () => {
    const empty = makeEndpointSlice({ name: 'empty', endpoints: null, ports: null });
    const named = makeEndpointSlice({
      name: 'named',
      ports: [{ name: null, port: 8080 }, { name: '', port: 8081 }, { name: 'any' }],
      endpoints: [{ address: '10.0.0.1', zone: 'z1', forZones: ['z1', 'z2'], forNodes: ['n1'], nodeName: 'n1', hostname: 'h1', pod: 'web-0' }],
    });
    const r = parseK8sObjects(listJson([empty, named]), 't');
    expect(r.diagnostics).toEqual([]);
    const [a, b] = r.value.endpointSlices;
    expect([a?.endpoints, a?.ports]).toEqual([[], []]);
    expect(b?.ports.map((p) => [p.name, p.port])).toEqual([[null, 8080], ['', 8081], ['any', null]]);
    expect(b?.endpoints[0]).toMatchObject({
      zone: 'z1', hintsForZones: ['z1', 'z2'], hintsForNodes: ['n1'], nodeName: 'n1', hostname: 'h1',
      targetRef: { kind: 'Pod', namespace: 'default', name: 'web-0', uid: undefined },
    });
    expect(b).toMatchObject({ serviceName: 'web', managedBy: 'endpointslice-controller.k8s.io', addressType: 'IPv4' });
  });

  it('Pod and Node fields', () => {
    const r = parseK8sObjects(listJson([
      makePod({ ips: ['10.244.1.5', 'fd00:244::5'], hostIP: '192.168.0.10', nodeName: 'n1', hostNetwork: true, ready: false, containerPorts: [{ name: 'http', containerPort: 8080 }] }),
      makeNode({ name: 'n1', internalIP: '192.168.0.10', externalIP: '203.0.113.1', podCIDRs: ['10.244.1.0/24', 'fd00:244:1::/64'], zone: 'z1', ready: true }),
    ]), 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.pods[0]).toMatchObject({
      podIPs: ['10.244.1.5', 'fd00:244::5'], hostIPs: ['192.168.0.10'], nodeName: 'n1', phase: 'Running', hostNetwork: true, ready: false,
      containerPorts: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
    });
    expect(r.value.nodes[0]).toMatchObject({
      addresses: [{ type: 'InternalIP', address: '192.168.0.10' }, { type: 'ExternalIP', address: '203.0.113.1' }, { type: 'Hostname', address: 'n1' }],
      podCIDRs: ['10.244.1.0/24', 'fd00:244:1::/64'], zone: 'z1', ready: true,
    });
  });

  it('keeps the original JSON as raw', () => {
    const svc = makeService({ annotations: { 'example.com/x': 'y' } });
    expect(one(svc).value.services[0]?.raw).toEqual(svc);
  });

  it('leaves no regex holding the input text (V8 keeps the last match subject alive)', () => {
    for (const text of [listJson([makeService(), makeEndpointSlice()]), stringify(makeService()), `{"kind": "Service", "metadata": {"name": 1}}`]) {
      parseK8sObjects(`\n${text}`, 'in');
      const legacy = RegExp as unknown as { input: string };
      expect(legacy.input.length).toBeLessThan(text.length);
    }
  });
});

describe('parseK8sObjects: shared values (memory of huge captures)', () => {
  const slices = () => [
    makeEndpointSlice({ name: 'a', endpoints: [{ address: '10.0.0.1' }, { address: '10.0.0.2' }, { address: '10.0.0.3', ready: false }] }),
    makeEndpointSlice({ name: 'b', endpoints: [{ address: '10.0.0.4' }, { address: '10.0.0.5', serving: null }] }),
  ];
  const conditionsOf = (o: ApiObjects) =>
    o.endpointSlices.flatMap((s) => (s.raw['endpoints'] as JsonObject[]).map((e) => e['conditions'] as JsonObject));

  it('keeps equal endpoint conditions once, frozen, and writes the same JSON', () => {
    const input = slices();
    const r = parseK8sObjects(listJson(input), 't');
    const [a1, a2, a3, b1, b2] = conditionsOf(r.value);
    expect(a1).toBe(a2);
    expect(a1).toBe(b1);
    expect(Object.isFrozen(a1)).toBe(true);
    expect([a3, b2].map((c) => c === a1)).toEqual([false, false]);
    expect(r.value.endpointSlices.flatMap((s) => s.endpoints.map((e) => [e.ready, e.serving, e.terminating]))).toEqual([
      [true, true, false], [true, true, false], [false, true, false], [true, true, false], [true, null, false],
    ]);
    const kubectl = `${JSON.stringify({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', items: input }, null, 4)}\n`;
    expect(formatK8sObjects(r.value)).toBe(kubectl);
  });

  it('does not merge conditions that differ in key order or hold more than flags', () => {
    const items = [{ ready: true, serving: true }, { serving: true, ready: true }, { ready: true, serving: true, note: 'x' }, { ready: true, serving: true }]
      .map((c, i) => ({ ...makeEndpointSlice({ name: `s${i}` }), endpoints: [{ addresses: ['10.0.0.9'], conditions: c }] }));
    const r = parseK8sObjects(JSON.stringify(items), 't');
    const all = conditionsOf(r.value);
    expect(all.map((c) => JSON.stringify(c))).toEqual(items.map((i) => JSON.stringify(i.endpoints[0]!.conditions)));
    expect([all[0] === all[1], all[0] === all[3], Object.isFrozen(all[2])]).toEqual([false, true, false]);
  });

  it('typed string lists and maps are the raw ones; absent maps are one frozen {}', () => {
    const r = parseK8sObjects(listJson([makeService({ labels: { app: 'web' } }), makeService({ name: 'db' }), makeEndpointSlice()]), 't');
    const [web, db] = r.value.services;
    const spec = web!.raw['spec'] as JsonObject;
    expect(web!.clusterIPs).toBe(spec['clusterIPs']);
    expect(web!.selector).toBe(spec['selector']);
    expect(web!.meta.labels).toBe((web!.raw['metadata'] as JsonObject)['labels']);
    expect(db!.meta.labels).toEqual({});
    expect(db!.meta.labels).toBe(db!.meta.annotations);
    expect(Object.isFrozen(db!.meta.labels)).toBe(true);
    expect(db!.externalIPs).toBe(r.value.endpointSlices[0]!.endpoints[0]!.hintsForZones);
  });

  it('still copies a map whose values are not all strings (YAML), leaving raw as it was', () => {
    const r = parseK8sObjects(stringify(makeService({ labels: { app: 'web', version: '2' } })).replace("version: \"2\"", 'version: 2'), 't');
    const svc = r.value.services[0]!;
    expect(svc.meta.labels).toEqual({ app: 'web', version: '2' });
    expect((svc.raw['metadata'] as JsonObject)['labels']).toEqual({ app: 'web', version: 2 });
  });

  it('parseWatchEvent leaves the caller\'s object alone', () => {
    const slice = makeEndpointSlice({ endpoints: [{ address: '10.0.0.1' }, { address: '10.0.0.2' }] });
    const before = JSON.stringify(slice);
    const conditions = (slice['endpoints'] as JsonObject[]).map((e) => e['conditions']);
    const r = parseWatchEvent({ type: 'ADDED', object: slice }, 'watch');
    expect(r.value?.object.raw).toBe(slice);
    expect((slice['endpoints'] as JsonObject[]).map((e) => e['conditions'])).toEqual(conditions);
    expect(conditions.map((c) => [c === conditions[0], Object.isFrozen(c)])).toEqual([[true, false], [false, false]]);
    expect(JSON.stringify(slice)).toBe(before);
  });
});

describe('parseK8sObjects: bad input', () => {
  it('reports a JSON syntax error on its line and keeps the other lines of a stream', () => {
    const lines = [JSON.stringify(makeService({ name: 'a' })), '{"type": "ADDED", "object": {"kind": "Service",, }}', JSON.stringify(makeService({ name: 'c' }))];
    const r = parseK8sObjects(lines.join('\n'), 's');
    expect(r.value.services.map((s) => s.meta.name)).toEqual(['a', 'c']);
    expect(r.diagnostics.map((d) => [d.severity, d.code, d.line, d.text])).toEqual([['error', 'json-syntax', 2, lines[1]]]);
  });

  it('maps an error inside a pretty-printed list to its line', () => {
    const text = listJson([makeService()]).replace('"port": 80,', '"port": 80');
    const r = parseK8sObjects(text, 's');
    const line = text.split('\n').findIndex((l) => l.includes('"port": 80')) + 1;
    expect(r.diagnostics[0]?.code).toBe('json-syntax');
    expect([line, line + 1]).toContain(r.diagnostics[0]?.line);
  });

  it('reports truncated JSON at its last line', () => {
    const text = listJson([makeService()]);
    const cut = text.slice(0, Math.floor(text.length / 2));
    const r = parseK8sObjects(cut, 's');
    expect(r.value).toEqual(EMPTY_API_OBJECTS);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['truncated', cut.split('\n').length]]);
  });

  it('reports a wrongly typed field at its line in JSON and keeps the object', () => {
    const raw = JSON.parse(JSON.stringify(makeService({ ports: [{ name: 'a', port: 80 }, { name: 'b', port: 81 }] })));
    raw.spec.ports[1].port = 'eighty-one';
    const text = JSON.stringify(raw, null, 2);
    const r = parseK8sObjects(text, 's');
    expect(r.value.services[0]?.ports.map((p) => p.name)).toEqual(['a']);
    expect(r.diagnostics.map((d) => [d.code, d.line])).toEqual([['wrong-type', text.split('\n').findIndex((l) => l.includes('eighty-one')) + 1]]);
  });

  it('skips a YAML document that does not parse and keeps the others', () => {
    const text = ['---', stringify(makeService({ name: 'a' })), '---', 'kind: Service', 'metadata: {name: [b', '---', stringify(makeService({ name: 'c' }))].join('\n');
    const r = parseK8sObjects(text, 'y');
    expect(r.value.services.map((s) => s.meta.name)).toEqual(['a', 'c']);
    expect(r.diagnostics.length).toBeGreaterThan(0);
    expect(r.diagnostics.every((d) => d.code === 'yaml-syntax' && d.severity === 'error')).toBe(true);
    const bad = text.split('\n').indexOf('metadata: {name: [b') + 1;
    expect(r.diagnostics.some((d) => d.line >= bad && d.line <= bad + 2)).toBe(true);
  });

  it('reports text between JSON values as garbage', () => {
    const r = parseK8sObjects(`${JSON.stringify(makeService())}\nkubectl: warning: something\n`, 's');
    expect(r.value.services).toHaveLength(1);
    expect(r.diagnostics.map((d) => [d.code, d.line, d.text])).toEqual([['garbage', 2, 'kubectl: warning: something']]);
  });

  it('warns about a duplicate object and keeps the later one', () => {
    const r = parseK8sObjects(listJson([makeService({ clusterIP: '10.96.0.1' }), makeService({ clusterIP: '10.96.0.2' })]), 's');
    expect(r.value.services.map((s) => s.clusterIPs[0])).toEqual(['10.96.0.2']);
    expect(codes(r)).toEqual(['duplicate-object']);
  });

  it.each([
    ['binary', Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 73 + 11) % 256)).toString('latin1')],
    ['NUL bytes in JSON', '{"kind":"Service",\u0000\u0000'],
    ['a plain sentence', 'error: the server does not have a resource type "svc"'],
    ['unbalanced brackets', '[[[[{{{{'],
    ['empty', ''],
    ['only comments', '# nothing\n# here\n'],
  ])('never throws on %s', (_, text) => {
    const r = parseK8sObjects(text, 'junk');
    expect(names(r.value)).toEqual([]);
    for (const d of r.diagnostics) expect(d.line).toBeGreaterThanOrEqual(0);
  });
});

describe('applyWatchEvent', () => {
  const base = objectsOf(makeService({ name: 'a' }), makeService({ name: 'b' }), makeEndpointSlice());
  const ev = (type: WatchEvent['type'], o: JsonObject): WatchEvent => {
    const r = parseWatchEvent({ type, object: o }, 'watch');
    if (!r.value) throw new Error('not an event');
    return r.value;
  };

  it.each([
    ['ADDED appends', ev('ADDED', makeService({ name: 'c' })), ['a', 'b', 'c']],
    ['MODIFIED replaces in place', ev('MODIFIED', makeService({ name: 'a', clusterIP: '10.96.9.9' })), ['a', 'b']],
    ['MODIFIED of an unknown object adds it', ev('MODIFIED', makeService({ name: 'z' })), ['a', 'b', 'z']],
    ['DELETED removes', ev('DELETED', makeService({ name: 'a' })), ['b']],
    ['DELETED of a missing object changes nothing', ev('DELETED', makeService({ name: 'q' })), ['a', 'b']],
  ])('%s', (_, e, want) => {
    const before = JSON.stringify(base);
    const after = applyWatchEvent(base, e);
    expect(after.services.map((s) => s.meta.name)).toEqual(want);
    expect(after.endpointSlices).toBe(base.endpointSlices);
    expect(JSON.stringify(base)).toBe(before);
  });

  it('MODIFIED carries the new fields', () => {
    const after = applyWatchEvent(base, ev('MODIFIED', makeService({ name: 'a', clusterIP: '10.96.9.9' })));
    expect(after.services[0]?.clusterIPs).toEqual(['10.96.9.9']);
  });

  it('routes by kind', () => {
    const after = applyWatchEvent(base, ev('ADDED', makePod({ name: 'p' })));
    expect(after.pods.map((p) => p.meta.name)).toEqual(['p']);
    expect(after.services).toBe(base.services);
  });

  it.each(['BOOKMARK', 'ERROR'] as const)('%s returns the objects unchanged', (type) => {
    const e = ev(type, { kind: 'Status', apiVersion: 'v1', code: 410, reason: 'Expired', metadata: {} });
    expect(applyWatchEvent(base, e)).toBe(base);
  });

  it('parseWatchEvent rejects what is not an event', () => {
    const r = parseWatchEvent({ kind: 'Service' }, 'watch');
    expect(r.value).toBeUndefined();
    expect(codes(r)).toEqual(['not-an-object']);
  });

  it('parseWatchEvent reports an ERROR status', () => {
    const r = parseWatchEvent({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } }, 'watch');
    expect(r.value?.object).toMatchObject({ kind: 'unknown', apiKind: 'Status' });
    expect(codes(r)).toContain('watch-error');
  });
});

describe('formatK8sObjects', () => {
  it('parse(format(x)) gives x again, kinds and raw included', () => {
    const bareSlice = (() => {
      const { kind: _k, ...rest } = makeEndpointSlice({ name: 'kindless' });
      return rest;
    })();
    const text = [
      listJson([makeService(), makeService({ name: 'db', type: 'ExternalName', clusterIP: null, externalName: 'db.example.com' }), makePod(), makeNode(), namespace('prod')]),
      JSON.stringify({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSliceList', items: [bareSlice] }),
      JSON.stringify({ metadata: { name: 'mystery' } }),
    ].join('\n');
    const x = parseK8sObjects(text, 'in').value;
    const again = parseK8sObjects(formatK8sObjects(x), 'out');
    expect(again.diagnostics.filter((d) => d.severity !== 'info')).toEqual([
      expect.objectContaining({ code: 'missing-kind' }),
    ]);
    expect(strip(again.value)).toEqual(strip(x));
  });

  it('formats nothing as empty text', () => {
    expect(formatK8sObjects(EMPTY_API_OBJECTS)).toBe('');
  });
});

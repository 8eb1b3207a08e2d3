/**
 * `show rules`' narrow reader of the API objects (src/parsers/k8s-rules-api.ts, with the
 * check-only src/parsers/k8s-clean.ts); the whole parse (`parseK8sObjects`, narrowed by
 * `rulesApiOf`: `rulesApiWhole`) is the reference. Proven here: the narrow read equals the
 * reference (objects and diagnostics, deep and strict) or gives way to it, on the lab captures
 * (fixtures/), generated captures of every mode (bench/gen) and odd texts (duplicates, bad
 * items, unknown kinds, too deep, cut, YAML, not a List, empty, a typed list, a byte-order
 * mark, fields of the wrong type …), each shape taking the path it is meant to; `show rules`
 * (json, yaml, text, name; --chain, --table, --service, `-n`) prints the same bytes, or throws
 * the same error, from a load with `apiFor: 'rules'` as from the reference load; the
 * check-only tests say "clean" only for objects the straight converter reads and the whole
 * parse reports nothing for (seeded mutations of every field).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { earlyApi } from '../../src/collect/early-parse.js';
import { loadSnapshot } from '../../src/collect/load-snapshot.js';
import type { JsonObject, JsonValue } from '../../src/model/k8s.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { endpointSliceClean, serviceClean } from '../../src/parsers/k8s-clean.js';
import { endpointSliceFast, serviceFast } from '../../src/parsers/k8s-convert-fast.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { parseRulesApi, readRulesApi, rulesApiReads, rulesApiWhole } from '../../src/parsers/k8s-rules-api.js';
import { showRules, type ShowRulesOptions } from '../../src/report/rules.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir, tempDirs } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/seeded.js';

const tmpDir = tempDirs('rules-api');
const RULES_PARTS = ['iptables', 'ip6tables', 'iptablesLegacy', 'nft', 'ipset', 'xtRecent', 'lb', 'ipvs'] as const;
const FORMATS = ['json', 'yaml', 'text', 'name'] as const;

type Path = 'narrow' | 'whole';

/** Odd API texts made from a JSON List, each with the path the narrow reader must take. */
function oddTexts(list: string, ownAddress: string): Record<string, [string, Path]> {
  const doc = JSON.parse(list) as { items: Record<string, unknown>[] } & Record<string, unknown>;
  const items = doc.items;
  const svc = items.find((i) => i['kind'] === 'Service')!;
  const slice = items.find((i) => i['kind'] === 'EndpointSlice')!;
  const meta = svc['metadata'] as Record<string, unknown>;
  const spec = svc['spec'] as Record<string, unknown>;
  const affinity = { ...svc, metadata: { ...meta, name: 'sticky' }, spec: { ...spec, sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } } };
  const text = (d: object) => JSON.stringify(d, null, 1);
  const withItems = (x: unknown[]) => text({ ...doc, items: x });
  let deep = '{"kind":"List","apiVersion":"v1","items":[{"kind":"Pod","metadata":{"name":"deep","namespace":"default"},"spec":';
  for (let i = 0; i < 20000; i++) deep += '[';
  for (let i = 0; i < 20000; i++) deep += ']';
  deep += '}]}';
  return {
    'unread kinds': [text({ ...doc, 'x-nodescope-unread': ['servicecidrs: forbidden (RBAC)', 'ipaddresses: not served by this cluster', 3] }), 'narrow'],
    'bad items, a duplicate, an unknown kind': [withItems([...items, 'a string', 7, {}, { kind: 'Service' }, { kind: 'Service', metadata: { name: 3 } }, svc, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'kube-system' } }]), 'whole'],
    'a duplicate': [withItems([...items, svc]), 'whole'],
    'an unknown kind': [withItems([...items, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'kube-system' } }]), 'whole'],
    'a kindless item': [withItems([...items, { addressType: 'IPv4', metadata: { name: 'k', namespace: 'default' } }]), 'whole'],
    'an item without a name': [withItems([...items, { kind: 'Node', metadata: {} }]), 'whole'],
    'no Nodes': [withItems(items.filter((i) => i['kind'] !== 'Node')), 'narrow'],
    // The node's name then comes from the API Node owning its address, not from the capture.
    "a Node owning the node's address": [withItems([{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'owner-of-the-address' }, status: { addresses: [{ type: 'InternalIP', address: ownAddress }] } }, ...items]), 'narrow'],
    'a Node with a finding': [withItems([{ kind: 'Node', metadata: { name: 'odd' }, status: { addresses: 'x' } }, ...items]), 'whole'],
    'a ClientIP Service': [withItems([...items, affinity]), 'narrow'],
    'a ClientIP Service without apiVersion': [withItems([...items, { ...affinity, apiVersion: undefined }]), 'narrow'],
    'a Service with a port of the wrong type': [withItems([...items, { ...svc, metadata: { ...meta, name: 'badport' }, spec: { ...spec, ports: [{ port: '80' }] } }]), 'whole'],
    'a Service with clusterIP none': [withItems([...items, { ...svc, metadata: { ...meta, name: 'nonecase' }, spec: { ...spec, clusterIP: 'none', clusterIPs: undefined } }]), 'whole'],
    'a slice with an address of the other family': [withItems([...items, { ...slice, metadata: { ...(slice['metadata'] as object), name: 'fam' }, endpoints: [{ addresses: ['fd00::1'] }] }]), 'whole'],
    'a slice without addressType': [withItems([...items, { ...slice, metadata: { ...(slice['metadata'] as object), name: 'noat' }, addressType: undefined }]), 'whole'],
    'a Pod with a finding': [withItems([...items, { kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, status: { phase: 'Sleeping' } }]), 'whole'],
    'items without apiVersion': [withItems(items.map((i) => ({ ...i, apiVersion: undefined }))), 'narrow'],
    'blank lines first': [`\n\n  ${text(doc)}\n`, 'narrow'],
    'a byte-order mark': [`\uFEFF${text(doc)}`, 'whole'],
    'a typed list': [text({ ...doc, kind: 'ServiceList', items: items.filter((i) => i['kind'] === 'Service').map((i) => ({ ...i, kind: undefined })) }), 'whole'],
    'two values': [`${text(doc)}\n${text(doc)}`, 'whole'],
    'an array': [JSON.stringify(items), 'whole'],
    'too deep': [deep, 'whole'],
    'a cut List': [list.slice(0, Math.floor(list.length / 2)), 'whole'],
    'a List as YAML': [`apiVersion: v1\nkind: List\nitems:\n${items.map((i) => `- ${JSON.stringify(i)}`).join('\n')}\n`, 'whole'],
    'not a List': ['{"kind": 7}', 'whole'],
    'empty': ['', 'whole'],
  };
}

interface Capture {
  readonly label: string;
  readonly dir: string;
  readonly apiText: string;
  readonly path: Path;
}

function captures(): Capture[] {
  const gen = writeGeneratedBundles(tmpDir(), { services: 60, endpoints: 3, seed: 'rules-api', modes: ['iptables', 'nftables', 'cilium'], conntrack: 10 });
  const plain = [...['lab-cilium', 'lab-iptables', 'lab-nftables'].map((n) => fixtureDir(n)), ...gen].map((dir) => ({ label: path.basename(dir), dir, apiText: readFileSync(path.join(dir, 'api.json'), 'utf8'), path: 'narrow' as Path }));
  const ownAddress = (dir: string) => /"local":"(\d+\.\d+\.\d+\.\d+)"/.exec(readFileSync(path.join(dir, 'probes', 'ip-addr.stdout'), 'utf8').replace('"local":"127.0.0.1"', ''))![1]!;
  const odd = [plain[0]!, plain[1]!, plain[5]!].flatMap((c) => Object.entries(oddTexts(c.apiText, ownAddress(c.dir))).map(([what, [apiText, p]]) => ({ label: `${c.label}, ${what}`, dir: c.dir, apiText, path: p })));
  return [...plain, ...odd];
}

/** `show rules`' every output for `snapshot` (or the error it throws), keyed by format and options. */
function outputs(snapshot: NodeSnapshot): Record<string, string> {
  const chain = snapshot.iptables?.value?.tables[0]?.chains[0]?.name ?? 'KUBE-SERVICES';
  const optionSets: [string, ShowRulesOptions][] = [['all', {}], ['chain', { chain }], ['table', { table: 'nat' }], ['service', { service: 'default/web' }], ['nothing named', { service: 'default/nope' }]];
  const out: Record<string, string> = {};
  for (const [name, options] of optionSets) {
    for (const format of FORMATS) {
      try {
        out[`${name} ${format}`] = showRules(snapshot, format, options);
      } catch (e) {
        out[`${name} ${format}`] = `throws ${(e as Error).message}`;
      }
    }
  }
  return out;
}

async function load(c: Capture, rules: boolean, namespace?: string): Promise<NodeSnapshot> {
  const transport = new ReplayTransport(c.dir);
  const ns = namespace !== undefined ? { apiNamespace: namespace } : {};
  const { snapshot } = await loadSnapshot({ transport, live: false, apiText: c.apiText, apiOrigin: 'api.json', parts: RULES_PARTS, ...ns, ...(rules ? { apiFor: 'rules' as const } : {}) });
  return snapshot;
}

describe('the narrow read equals the whole parse, narrowed, or gives way to it', () => {
  for (const c of captures()) {
    it(`${c.label} (${c.path})`, () => {
      const whole = rulesApiWhole(c.apiText, 'api.json');
      const narrow = readRulesApi(c.apiText, 'api.json');
      if (c.path === 'whole') {
        expect(narrow).toBeNull();
      } else {
        expect(narrow).not.toBeNull();
        expect(narrow).toStrictEqual(whole);
        expect(JSON.stringify(narrow)).toBe(JSON.stringify(whole));
      }
      const before = { ...rulesApiReads };
      expect(parseRulesApi(c.apiText, 'api.json')).toStrictEqual(whole);
      expect(rulesApiReads[c.path]).toBe(before[c.path] + 1);
      // The live load's early parse is the same read.
      expect(earlyApi(c.apiText, 'api.json', true).result).toStrictEqual(whole);
      // Without `rulesOnly`, the whole parse (its objects counted: the too-deep one is too deep to compare).
      const plain = earlyApi(c.apiText, 'api.json').result;
      const reference = parseK8sObjects(c.apiText, 'api.json');
      expect(plain.diagnostics).toEqual(reference.diagnostics);
      expect(Object.entries(plain.value).map(([k, v]) => [k, (v as unknown[]).length])).toEqual(Object.entries(reference.value).map(([k, v]) => [k, (v as unknown[]).length]));
    });
  }

  it('the odd texts reach what they are for (diagnostics, unread, the node by address, ClientIP kept, the list version)', () => {
    const cs = captures();
    const get = (end: string) => cs.find((x) => x.label.startsWith('lab-iptables') && x.label.endsWith(end))!.apiText;
    expect(rulesApiWhole(get('bad items, a duplicate, an unknown kind'), 'api.json').diagnostics.length).toBeGreaterThan(2);
    expect(readRulesApi(get('unread kinds'), 'api.json')!.value.unread).toEqual(['servicecidrs: forbidden (RBAC)', 'ipaddresses: not served by this cluster']);
    expect(readRulesApi(get('a ClientIP Service'), 'api.json')!.value.services.map((s) => [s.meta.name, s.sessionAffinityTimeoutSeconds])).toEqual([['sticky', 600]]);
    expect(readRulesApi(get('a ClientIP Service without apiVersion'), 'api.json')!.value.services[0]!.apiVersion).toBe('v1');
    expect(readRulesApi(get('blank lines first'), 'api.json')!.value.nodes[0]!.source.line).toBe(3);
    for (const bad of ['a Service with a port of the wrong type', 'a Service with clusterIP none', 'a slice with an address of the other family', 'a slice without addressType', 'a Pod with a finding', 'a Node with a finding', 'too deep']) {
      expect(rulesApiWhole(get(bad), 'api.json').diagnostics.length, bad).toBeGreaterThan(0);
    }
  });
});

describe('show rules from the narrow read prints what the whole parse prints', () => {
  for (const c of captures()) {
    it(c.label, async () => {
      const before = { ...rulesApiReads };
      const ours = await load(c, true);
      expect(rulesApiReads[c.path]).toBe(before[c.path] + 1);
      const reference = await load(c, false);
      expect(rulesApiReads.narrow + rulesApiReads.whole).toBe(before.narrow + before.whole + 1);
      expect(ours.meta).toEqual(reference.meta);
      expect(outputs(ours)).toEqual(outputs(reference));
      expect(ours.api?.value?.endpointSlices).toEqual([]);
      expect(ours.api?.diagnostics).toEqual(reference.api?.diagnostics);
      // -n NAMESPACE narrows the narrowed objects as it narrows the whole ones.
      expect(outputs(await load(c, true, 'kube-system'))).toEqual(outputs(await load(c, false, 'kube-system')));
    });
  }
});

const ODD_VALUES: JsonValue[] = [null, '', 'None', 'none', 'ClientIP', 'IPv6', 'TCP', 'tcp', 'x', 'fd00::1', '10.0.0.1', 0, 80, 1.5, -1, true, false, [], ['a'], [1], [{}], [{ name: 'z' }], {}, { a: 'b' }, { a: 1 }];

/** Every path to a value inside `v` (objects and lists), the root excluded. */
function paths(v: JsonValue, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (Array.isArray(v)) v.forEach((x, i) => (out.push([...at, i]), paths(x, [...at, i], out)));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) (out.push([...at, k]), paths(x, [...at, k], out));
  return out;
}

/** `o` with the value at `p` set to `value` (or removed: undefined), or a field added beside it. */
function mutated(o: JsonObject, p: (string | number)[], value: JsonValue | undefined, add: string | undefined): JsonObject {
  const copy = structuredClone(o) as JsonObject;
  let parent: Record<string | number, JsonValue> = copy as Record<string, JsonValue>;
  for (const k of p.slice(0, -1)) parent = parent[k] as Record<string | number, JsonValue>;
  const last = p[p.length - 1]!;
  if (add !== undefined && !Array.isArray(parent)) parent[add] = value ?? null;
  else if (value === undefined && !Array.isArray(parent)) delete parent[last];
  else parent[last] = value ?? null;
  return copy;
}

const SPEC_FIELDS = ['type', 'clusterIP', 'clusterIPs', 'ports', 'selector', 'externalName', 'externalIPs', 'sessionAffinity', 'sessionAffinityConfig', 'externalTrafficPolicy', 'internalTrafficPolicy', 'trafficDistribution', 'publishNotReadyAddresses', 'healthCheckNodePort', 'loadBalancerSourceRanges', 'ipFamilies', 'ipFamilyPolicy'];
const SLICE_FIELDS = ['addressType', 'ports', 'endpoints', 'metadata', 'apiVersion'];
const ENDPOINT_FIELDS = ['addresses', 'conditions', 'hints', 'targetRef', 'hostname', 'nodeName', 'zone'];

describe('the check-only tests say clean only when the straight converter reads it and nothing is reported', () => {
  const gen = writeGeneratedBundles(tmpDir(), { services: 40, endpoints: 3, seed: 'rules-api-clean', modes: ['cilium'], conntrack: 0 });
  const items = (JSON.parse(readFileSync(path.join(gen[0]!, 'api.json'), 'utf8')) as { items: JsonObject[] }).items;
  const lab = ['lab-cilium', 'lab-iptables', 'lab-nftables'].flatMap((n) => (JSON.parse(readFileSync(path.join(fixtureDir(n), 'api.json'), 'utf8')) as { items: JsonObject[] }).items);
  const all = [...items, ...lab];
  const source = { origin: 'api.json', line: 1 };
  const findings = (o: JsonObject) => parseK8sObjects(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [o] }), 'api.json').diagnostics;
  // Clean: read straight; the whole parse of a List of it reports nothing (a name is the reader's own check), and the narrow read is the reference's.
  const judge = (o: JsonObject, tally: { clean: number; not: number; narrow: number }) => {
    const kind = o['kind'];
    const clean = kind === 'Service' ? serviceClean(o) : endpointSliceClean(o);
    if (clean) {
      tally.clean++;
      expect(kind === 'Service' ? serviceFast(o, { source }) : endpointSliceFast(o, { source })).toBeDefined();
      expect(findings(o).filter((d) => d.code !== 'missing-name')).toEqual([]);
    } else {
      tally.not++;
    }
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [o] });
    const narrow = readRulesApi(text, 'api.json');
    if (narrow === null) return;
    tally.narrow++;
    expect(clean).toBe(true);
    expect(narrow).toStrictEqual(rulesApiWhole(text, 'api.json'));
  };

  it('every Service and EndpointSlice of the captures is clean', () => {
    const ofKind = all.filter((o) => o['kind'] === 'Service' || o['kind'] === 'EndpointSlice');
    expect(ofKind.length).toBeGreaterThan(80);
    for (const o of ofKind) expect(o['kind'] === 'Service' ? serviceClean(o) : endpointSliceClean(o)).toBe(true);
  });

  it('seeded mutations of every field: clean implies read straight and no finding', () => {
    const random = seededRandom(23);
    const tally = { clean: 0, not: 0, narrow: 0 };
    const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
    const ofKind = all.filter((o) => o['kind'] === 'Service' || o['kind'] === 'EndpointSlice');
    for (let round = 0; round < 3000; round++) {
      let o = pick(ofKind);
      const kind = o['kind'];
      const kindOf = (_: JsonObject) => kind ?? null;
      const n = 1 + Math.floor(random() * 2);
      for (let m = 0; m < n; m++) {
        const ps = paths(o);
        // Half the time a named field (absent ones included), else any value inside.
        const named = o['kind'] === 'Service' ? ['spec', pick(SPEC_FIELDS)] : random() < 0.5 ? [pick(SLICE_FIELDS)] : ['endpoints', 0, pick(ENDPOINT_FIELDS)];
        const p = random() < 0.5 && ps.length > 0 ? pick(ps) : named;
        const value = random() < 0.1 ? undefined : pick(ODD_VALUES);
        try {
          o = mutated(o, p, value, random() < 0.1 ? 'extra' : undefined);
        } catch {
          // A path through a value that is not a container: leave it.
        }
      }
      // The checks are of a kind already known: the kind itself stays.
      o = { ...o, kind: kindOf(o) };
      judge(o, tally);
    }
    // Both answers were reached many times.
    expect(tally.clean).toBeGreaterThan(300);
    expect(tally.not).toBeGreaterThan(300);
    expect(tally.narrow).toBeGreaterThan(300);
  });
});

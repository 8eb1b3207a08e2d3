/**
 * The JSON List item scan (src/parsers/json-list.ts) and the API narrowing `trace` does with
 * it (src/sources/api-select.ts): items, their watched values and the List without items are
 * what `JSON.parse` gives; text `JSON.parse` refuses, or that the scan does not read the same
 * way, is answered null; the narrowing by the scan keeps the same objects as the narrowing by
 * one whole `JSON.parse` (issue 23 item 3).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import { fieldText, listHead, scanJsonList } from '../../src/parsers/json-list.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { apiTextFor, apiTextForParsed } from '../../src/sources/api-select.js';
import { fixtureDir } from '../helpers/fixtures.js';

const tmp: string[] = [];
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

const WATCH = [['kind'], ['metadata', 'name'], ['metadata', 'labels', 'kubernetes.io/service-name'], ['spec', 'ports']];

/** The value at `p` as `JSON.parse` reads it (undefined through a non-object). */
function at(v: unknown, p: readonly string[]): unknown {
  return p.reduce<unknown>((x, k) => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>)[k] : undefined), v);
}

/** Checks a scan of `text` against `JSON.parse(text)`. */
function expectSameAsParse(text: string): void {
  const list = scanJsonList(text, WATCH);
  expect(list, text.slice(0, 200)).not.toBeNull();
  const whole = JSON.parse(text) as { items: unknown[] };
  expect({ ...(JSON.parse(listHead(text, list!)) as object), items: whole.items }).toEqual(whole);
  expect(Object.keys(JSON.parse(listHead(text, list!)) as object)).toEqual(Object.keys(whole));
  expect(list!.items.length).toBe(whole.items.length);
  list!.items.forEach((item, i) => {
    expect(JSON.parse(text.slice(item.start, item.end))).toEqual(whole.items[i]);
    WATCH.forEach((p, w) => {
      const raw = fieldText(text, item, w);
      expect(raw === undefined ? undefined : JSON.parse(raw), `${i} ${p.join('.')}`).toEqual(at(whole.items[i], p));
    });
  });
}

function generated(mode: 'iptables' | 'nftables'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-json-list-'));
  tmp.push(dir);
  writeGeneratedBundles(dir, { services: 50, endpoints: 3, seed: 'json-list', modes: [mode], conntrack: 50 });
  return readFileSync(path.join(dir, mode, 'api.json'), 'utf8');
}

const labs = ['lab-iptables', 'lab-nftables', 'lab-cilium'].map((l) => [l, () => readFileSync(path.join(fixtureDir(l), 'api.json'), 'utf8')] as const);
const captures = [...labs, ['a generated iptables capture', () => generated('iptables')] as const, ['a generated nftables capture', () => generated('nftables')] as const];

describe('scanJsonList', () => {
  it.each(captures)('%s: items, watched values and the List as JSON.parse reads them', (_name, textOf) => {
    expectSameAsParse(textOf());
  });

  it('reads compact and odd but valid JSON as JSON.parse does (duplicate keys, escapes in values, empty containers, numbers)', () => {
    const items = [
      '{"kind":"Service","metadata":{"name":"a","labels":{"kubernetes.io/service-name":"x"}},"metadata":{"name":"b"}}',
      '{"kind":"EndpointSlice","metadata":{"labels":{"kubernetes.io/service-name":"x"},"labels":{"kubernetes.io/service-name":7}}}',
      '{"kind":"S\\u0065rvice","metadata":{"name":"q\\"uote\\\\"},"spec":{"ports":[{"port":-0.5e+3,"nodePort":1E2},[],{}]}}',
      '{"kind":"Pod","metadata":"not an object","spec":{"ports":null}}',
      '{}',
      '{"kind":"Node","metadata":{"name":"n","name":{"deep":[true,false,null]}}}',
      '{"kind":"x","metadata":{"labels":[{"kubernetes.io/service-name":"in an array"}]}}',
    ];
    expectSameAsParse(`{"kind":"List","items":[${items.join(',')}],"after":{"items2":[1]}}`);
    expectSameAsParse(`\r\n\t {"items": [ ${items.join(' ,\n ')} ] , "kind" : "List"}\n`);
    expectSameAsParse('{"items":[]}');
    expectSameAsParse('{"a":"é ü \u2028 😀","items":[{"kind":"日本"}]}');
  });

  it('answers null to text JSON.parse refuses', () => {
    const bad = [
      '', ' ', '{"items":[{}]} x', '{"items":[{}]}{"items":[]}', '{"items":[{},]}', '{"items":[{"a" 1}]}', '{"items":[{"a":01}]}',
      '{"items":[{"a":1.}]}', '{"items":[{"a":-}]}', '{"items":[{"a":1e}]}', '{"items":[{"a":tru}]}', '{"items":[{"a":"x\ny"}]}',
      '{"items":[{"a":"x\ty"}]}', '{"items":[{"a":"\\x"}]}', '{"items":[{"a":"\\u12g4"}]}', '{"items":[{"a":"open}]}', '{"items":[{"a":[1,2}]}',
      '{"items":[{"a":{"b":1]}]}', '{"items":[{"a":1,}]}', '{"items":[{"a":1}]', '{"items":[{"a":1}],}', '\uFEFF{"items":[]}',
    ];
    for (const text of bad) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(scanJsonList(text, WATCH), text).toBeNull();
    }
  });

  it('answers null to valid JSON it does not read item by item', () => {
    const other = [
      '[]', '{"kind":"List"}', '{"items":{}}', '{"items":[1]}', '{"items":[[]]}', '{"items":["a"]}', '{"items":[],"items":[]}',
      '{"it\\u0065ms":[{}],"items":[]}', '{"items":[{"k\\u0069nd":"Service"}]}', '{"items":[{"metadata":{"n\\u0061me":"a"}}]}', '[{"items":[]}]', '"x"',
    ];
    for (const text of other) {
      expect(() => JSON.parse(text), text).not.toThrow();
      expect(scanJsonList(text, WATCH), text).toBeNull();
    }
    // An escaped key on a watched path (or in the List itself) answers null; elsewhere it is read.
    expect(scanJsonList('{"items":[{"spec":{"\\u0061":1}}],"m\\u0065ta":1}', WATCH)).toBeNull();
    expect(scanJsonList('{"items":[{"spec":{"x":{"\\u0061":1}}}]}', WATCH)).not.toBeNull();
  });
});

describe('apiTextFor by the item scan', () => {
  /** The objects a narrowed text converts to (lines aside: the texts differ). */
  const objects = (text: string) => {
    const r = parseK8sObjects(text, 'api.json');
    return { value: JSON.parse(JSON.stringify(r.value, (k, v: unknown) => (k === 'line' ? undefined : v))) as unknown, codes: r.diagnostics.map((d) => `${d.code} ${d.message}`) };
  };

  it.each(captures)('%s: the same objects as the narrowing by one JSON.parse', (_name, textOf) => {
    const text = textOf();
    const list = JSON.parse(text) as { items: { kind: string; spec?: { clusterIP?: string; ports?: { port: number; nodePort?: number }[] } }[] };
    const services = list.items.filter((i) => i.kind === 'Service');
    const queries = services.slice(0, 5).flatMap((s) => (s.spec?.clusterIP ? [{ address: s.spec.clusterIP, port: s.spec.ports?.[0]?.port ?? null }] : []));
    const nodePort = services.flatMap((s) => s.spec?.ports ?? []).find((p) => p.nodePort !== undefined)?.nodePort;
    queries.push({ address: '10.99.99.99', port: nodePort ?? 30000 }, { address: '10.99.99.99', port: null });
    let narrowed = 0;
    for (const q of queries) {
      const scanned = apiTextFor(text, q);
      const parsed = apiTextForParsed(text, q);
      expect(objects(scanned), JSON.stringify(q)).toEqual(objects(parsed));
      if (scanned.length < text.length) narrowed++;
    }
    expect(narrowed).toBeGreaterThan(0);
  });

  it('keeps what the whole parse keeps when names, labels and affinity are written oddly', () => {
    const items = [
      { kind: 'Service', metadata: { namespace: 'ns', name: 'hit' }, spec: { clusterIP: '10.96.0.1' } },
      { kind: 'Service', metadata: { namespace: 'ns', name: 'esc' }, spec: { clusterIP: '10.96.0.7', externalIPs: ['ESCAPED'] } },
      { kind: 'Service', metadata: { namespace: 'ns', name: 'aff' }, spec: { clusterIP: '10.96.0.8', sessionAffinity: null } },
      { kind: 'Service', metadata: { namespace: 'ns', name: 'np' }, spec: { clusterIP: '10.96.0.9', ports: [{ port: 1, nodePort: '30080' }] } },
      { kind: 'Service', metadata: { namespace: 'ns2', name: 'hit' }, spec: { clusterIP: '10.96.0.10' } },
      { kind: 'Service', metadata: { namespace: 'ns', name: 'other' }, spec: { clusterIP: '10.96.0.21', ports: [{ port: 30080 }] } },
      { kind: 'EndpointSlice', metadata: { name: 's1', labels: { 'kubernetes.io/service-name': 'hit' } } },
      { kind: 'EndpointSlice', metadata: { name: 's2', labels: { 'kubernetes.io/service-name': 'other' } } },
      { kind: 'EndpointSlice', metadata: { name: 's3', labels: { 'kubernetes.io/service-name': 5 } } },
      { kind: 'EndpointSlice', metadata: { name: 's4', annotations: { 'kubernetes.io/service-name': 'other' } } },
    ];
    // A raw escape for the address: the text holds `10.96.0.\u0031`, not the address.
    const text = JSON.stringify({ kind: 'List', items }, null, 2).replace('"ESCAPED"', '"10.96.0.\\u0031"');
    expect(text).toContain('\\u0031');
    const q = { address: '10.96.0.1', port: 30080 };
    const names = (t: string) => (JSON.parse(t) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
    expect(names(apiTextFor(text, q))).toEqual(names(apiTextForParsed(text, q)));
    expect(names(apiTextFor(text, q))).toEqual(['hit', 'esc', 'aff', 'np', 'hit', 's1', 's3', 's4']);
  });
});

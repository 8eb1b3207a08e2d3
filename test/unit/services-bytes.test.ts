/**
 * The List-from-bytes reader of `show services`' API objects (src/parsers/k8s-services-bytes.ts,
 * on src/parsers/json-bytes.ts); the whole parse narrowed (`servicesApiWhole`) is the reference.
 * Proven here: `parseJsonBytes` is `JSON.parse` on its subset (seeded random values) and says
 * undefined outside it; the reader equals the reference (objects and diagnostics, deep and strict)
 * or gives way (null) on the lab captures, the k8s corpus as a List, generated captures of every
 * mode and seeded edits of their items (fields removed, added, reordered, set to null or to odd
 * values, escapes, bytes beyond ASCII, numbers in other forms) — and takes the bytes path on
 * every plain capture.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeGeneratedBundles } from '../../bench/gen/capture.js';
import type { JsonValue } from '../../src/model/k8s.js';
import { parseJsonBytes } from '../../src/parsers/json-bytes.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { readServicesApiBytes, servicesApiWhole } from '../../src/parsers/k8s-services-bytes.js';
import { textOfBytes } from '../../src/sources/read-text.js';
import { fixtureDir, tempDirs } from '../helpers/fixtures.js';
import { seededRandom } from '../helpers/seeded.js';

const tmpDir = tempDirs('services-bytes');
const CORPUS = path.resolve(__dirname, '../../../shared/corpus/k8s-objects');

/** The reader's answer on `text`: 'bytes' when it read it (and then equals the reference), 'whole' when it gave way. */
function check(text: string): 'bytes' | 'whole' {
  const bytes = Buffer.from(text, 'utf8');
  const read = readServicesApiBytes(bytes, 'api.json');
  if (read === null) return 'whole';
  expect(read).toStrictEqual(servicesApiWhole(textOfBytes(bytes), 'api.json'));
  return 'bytes';
}

/** A random JSON value of the subset (and some outside it when `odd`). */
function randomValue(rnd: () => number, depth: number, odd: boolean): JsonValue {
  const pick = Math.floor(rnd() * (depth > 3 ? 5 : 7));
  const str = (): string => {
    const chars = odd ? 'ab c"\\é\u2028/\t' : 'abcXYZ09 -./:_';
    let s = '';
    for (let n = Math.floor(rnd() * 12); n > 0; n--) s += chars[Math.floor(rnd() * chars.length)];
    return s;
  };
  switch (pick) {
    case 0:
      return null;
    case 1:
      return rnd() < 0.5;
    case 2:
      return odd && rnd() < 0.3 ? rnd() * 1000 : Math.floor((rnd() - 0.5) * 10 ** Math.floor(rnd() * 16));
    case 3:
    case 4:
      return str();
    case 5:
      return Array.from({ length: Math.floor(rnd() * 5) }, () => randomValue(rnd, depth + 1, odd));
    default: {
      const o: Record<string, JsonValue> = {};
      for (let n = Math.floor(rnd() * 6); n > 0; n--) o[str()] = randomValue(rnd, depth + 1, odd);
      return o;
    }
  }
}

describe('parseJsonBytes', () => {
  it('is JSON.parse on its subset, and undefined outside it (seeded)', () => {
    const rnd = seededRandom(19);
    let read = 0;
    for (let i = 0; i < 3000; i++) {
      const odd = i % 3 === 0;
      const value = randomValue(rnd, 0, odd);
      const text = JSON.stringify(value, null, i % 2 === 0 ? 4 : undefined);
      const got = parseJsonBytes(Buffer.from(text, 'utf8'));
      if (got !== undefined) {
        read++;
        expect(got).toStrictEqual(JSON.parse(text));
      } else {
        // Undefined only for text outside the subset: a byte beyond printable ASCII, an escape, a fraction or exponent.
        expect(/[^\x20-\x7e\n]|\\|\d[.eE]/.test(text)).toBe(true);
      }
    }
    expect(read).toBeGreaterThan(2000);
  });

  it.each([
    ['an escape', '{"a":"x\\ny"}'],
    ['a byte beyond ASCII', '{"a":"é"}'],
    ['a fraction', '{"a":1.5}'],
    ['an exponent', '{"a":1e3}'],
    ['a leading zero', '{"a":01}'],
    ['16 digits', '{"a":1234567890123456}'],
    ['__proto__', '{"__proto__":{"x":1}}'],
    ['text after the value', '{"a":1} x'],
    ['a trailing comma', '{"a":1,}'],
    ['a cut text', '{"a":[1,2'],
    ['a bare word', '{"a":nul}'],
    ['a byte-order mark', '\ufeff{}'],
    ['nested too deep', `${'['.repeat(200)}${']'.repeat(200)}`],
  ])('says undefined for %s', (_what, text) => {
    expect(parseJsonBytes(Buffer.from(text, 'utf8'))).toBeUndefined();
  });

  it('reads -0, blanks of every kind and empty containers as JSON.parse does', () => {
    for (const text of ['-0', 'null', ' \t\r\n{ "a" : [ ] , "b" : { } , "c" : -0 }\n', '[true,false,null,"",0]']) expect(parseJsonBytes(Buffer.from(text))).toStrictEqual(JSON.parse(text));
  });
});

describe('readServicesApiBytes', () => {
  const gen = writeGeneratedBundles(tmpDir(), { services: 50, endpoints: 3, seed: 'services-bytes', modes: ['iptables', 'nftables', 'cilium'], conntrack: 0 });
  const plain = [...['lab-cilium', 'lab-iptables', 'lab-nftables'].map((n) => fixtureDir(n)), ...gen].map((dir) => ({ label: path.basename(dir), text: readFileSync(path.join(dir, 'api.json'), 'utf8') }));

  it.each(plain.map((c) => [c.label, c.text] as const))('reads %s from the bytes, equal to the whole parse', (_label, text) => {
    expect(check(text)).toBe('bytes');
  });

  it.skipIf(!existsSync(CORPUS))('equals the whole parse on the k8s corpus, as one List', () => {
    for (const file of readdirSync(CORPUS).filter((f) => f.endsWith('.txt'))) {
      const objects = parseK8sObjects(readFileSync(path.join(CORPUS, file), 'utf8'), file).value;
      const items = [...objects.services, ...objects.endpointSlices, ...objects.pods, ...objects.nodes].map((o) => o.raw);
      check(JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 4));
    }
  });

  it('equals the whole parse or gives way on seeded edits of the items', () => {
    const rnd = seededRandom(23);
    const base = JSON.parse(plain[3]!.text) as { items: Record<string, JsonValue>[] };
    const edits: ((o: Record<string, JsonValue>) => void)[] = [
      (o) => delete (o['spec'] as Record<string, JsonValue> | undefined)?.['selector'],
      (o) => (o['extra'] = { z: [1, 'x'] }),
      (o) => Object.assign(o, Object.fromEntries(Object.entries(o).reverse())),
      (o) => (o['metadata'] = { ...(o['metadata'] as object), labels: { 'app.kubernetes.io/name': 'ünï' } }),
      (o) => (o['metadata'] = { ...(o['metadata'] as object), annotations: { note: 'a "quoted"\nline' } }),
      (o) => ((o['spec'] as Record<string, JsonValue> | undefined) ? ((o['spec'] as Record<string, JsonValue>)['ipFamilies'] = ['IPv4', 'IPv6']) : undefined),
      (o) => ((o['spec'] as Record<string, JsonValue> | undefined) ? ((o['spec'] as Record<string, JsonValue>)['clusterIPs'] = ['10.96.0.77', 'fd00::77']) : undefined),
      (o) => (Array.isArray(o['endpoints']) ? (o['endpoints'] = (o['endpoints'] as Record<string, JsonValue>[]).map((e) => ({ ...e, conditions: { ready: false, serving: true, terminating: true } }))) : undefined),
      (o) => (Array.isArray(o['endpoints']) ? (o['endpoints'] = (o['endpoints'] as Record<string, JsonValue>[]).map((e) => ({ ...e, hints: { forZones: [{ name: 'z1' }] }, targetRef: { kind: 'Pod', name: 'p', namespace: 'default' }, nodeName: null }))) : undefined),
      (o) => (Array.isArray(o['endpoints']) ? (o['endpoints'] = null) : undefined),
      (o) => (Array.isArray(o['endpoints']) ? (o['endpoints'] = (o['endpoints'] as Record<string, JsonValue>[]).map((e) => ({ ...e, addresses: ['fd00::1'] }))) : undefined),
      (o) => (Array.isArray(o['endpoints']) ? (o['endpoints'] = (o['endpoints'] as Record<string, JsonValue>[]).map((e) => ({ ...e, conditions: { ready: 'yes' } }))) : undefined),
      (o) => (o['addressType'] !== undefined ? (o['addressType'] = null) : undefined),
      (o) => delete o['addressType'],
      (o) => ((o['spec'] as Record<string, JsonValue> | undefined) ? ((o['spec'] as Record<string, JsonValue>)['type'] = 'Weird') : undefined),
      (o) => ((o['spec'] as Record<string, JsonValue> | undefined) ? ((o['spec'] as Record<string, JsonValue>)['ports'] = [{ port: 80, protocol: 'UDP', targetPort: 'http' }]) : undefined),
      (o) => (o['metadata'] = { ...(o['metadata'] as object), name: '' }),
      (o) => (o['kind'] = 'Secret'),
    ];
    const paths = { bytes: 0, whole: 0 };
    for (let round = 0; round < 60; round++) {
      const items = base.items.map((o) => structuredClone(o));
      for (let n = 1 + Math.floor(rnd() * 3); n > 0; n--) edits[Math.floor(rnd() * edits.length)]!(items[Math.floor(rnd() * items.length)]!);
      let text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, round % 2 === 0 ? 4 : undefined);
      // Numbers in other forms (the same value to JSON.parse): the bytes path gives way.
      if (round % 7 === 0) text = text.replace(/"port": ?(\d+)/, '"port": $1.0');
      paths[check(text)]++;
    }
    expect(paths.bytes).toBeGreaterThan(5);
    expect(paths.whole).toBeGreaterThan(5);
  });
});

/**
 * Hostile api.json (issue 24 item 8): an endpoint address that is not an IP, a selector
 * nested thousands of levels deep, and a one-line file of N duplicate Services. Each is a
 * diagnostic (never a BugError or RangeError), and the duplicates parse in linear work.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { JsonValue } from '../../src/model/k8s.js';
import { shortJson } from '../../src/parsers/k8s-convert.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { packageRoot } from '../../src/paths.js';
import { makeEndpointSlice, makeService } from './builders/k8s.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });
const root = mkdtempSync(path.join(tmpdir(), 'nodescope-api-hostile-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A copy of the lab-iptables fixture whose api.json items `edit` changes (written on one line). */
function bundleWith(name: string, edit: (items: Record<string, any>[]) => string | void): string {
  const dir = path.join(root, name);
  cpSync(path.join(packageRoot(), 'fixtures', 'lab-iptables'), dir, { recursive: true });
  const api = JSON.parse(readFileSync(path.join(dir, 'api.json'), 'utf8')) as { items: Record<string, any>[] };
  const text = edit(api.items) ?? JSON.stringify(api);
  writeFileSync(path.join(dir, 'api.json'), text);
  return dir;
}

/** `{"a":{"a":…1…}}` nested `depth` levels. */
const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('an EndpointSlice address that is not an IP', () => {
  it('is an invalid-address warning at its line; the endpoint is left out, the others kept', () => {
    const text = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [makeEndpointSlice({ endpoints: [{ address: 'not-an-ip' }, { address: '10.244.0.9' }, { address: 'fd00::1' }] })],
    }, null, 2);
    const r = parseK8sObjects(text, 'api.json');
    expect(r.value.endpointSlices[0]!.endpoints.map((e) => e.addresses)).toEqual([['10.244.0.9']]);
    const bad = r.diagnostics.filter((d) => d.code === 'invalid-address');
    expect(bad.map((d) => [d.severity, d.text.trim()])).toEqual([
      ['warning', '"not-an-ip"'],
      ['warning', '"fd00::1"'],
    ]);
  });

  const bundle = () =>
    bundleWith('not-an-ip', (items) => {
      const slice = items.find((i) => i['kind'] === 'EndpointSlice' && i['metadata']['name'].startsWith('web-') && !i['metadata']['name'].startsWith('web-headless'))!;
      slice['endpoints'][0]['addresses'] = ['not-an-ip'];
    });

  it.each([
    ['show compare', ['show', 'compare']],
    ['show services', ['show', 'services']],
  ])('%s (real binary): exit 0, no internal error, the diagnostic printed where the API objects are shown', (what, args) => {
    const r = run(...args, '--replay', bundle());
    expect(r.stderr).not.toMatch(/internal error|BugError/);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^! .*api\.json:1: EndpointSlice default\/web-\S+: endpoint address "not-an-ip" is not an IPv4 address: left out/m);
    if (what === 'show services') expect(r.stdout).not.toContain('not-an-ip @');
  });
});

describe('a spec.selector nested 6,000 levels deep', () => {
  it('parses without a RangeError: a wrong-type warning with a cut excerpt, the Service kept', () => {
    const svc = JSON.stringify(makeService({ name: 'web' })).replace('"selector":{"app":"web"}', `"selector":${deep(6000)}`);
    expect(svc).toContain('"a":{"a"');
    const r = parseK8sObjects(`{"apiVersion":"v1","kind":"List","items":[${svc}]}`, 'api.json');
    expect(r.value.services.map((s) => s.meta.name)).toEqual(['web']);
    const d = r.diagnostics.find((x) => x.code === 'wrong-type')!;
    expect(d.message).toMatch(/spec\.selector\.a: expected a string, got \{"a":\{"a":/);
    expect(d.message.length).toBeLessThan(200);
  });

  it('show rules and show services (real binary) work on a bundle with it', () => {
    const dir = bundleWith('deep', (items) => {
      items.find((i) => i['kind'] === 'Service' && i['metadata']['name'] === 'web')!['spec']['selector'] = '@DEEP@';
      return JSON.stringify({ apiVersion: 'v1', kind: 'List', items }).replace('"@DEEP@"', deep(6000));
    });
    const rules = run('show', 'rules', '--replay', dir);
    expect(rules.status, rules.stderr).toBe(0);
    expect(rules.stdout).toContain('KUBE-SERVICES');
    const services = run('show', 'services', '--replay', dir);
    expect(services.status, services.stderr).toBe(0);
    expect(services.stdout).toMatch(/^default +web +/m);
    expect(services.stdout).toMatch(/^! .*spec\.selector\.a: expected a string/m);
  });

  it('shortJson prints what JSON.stringify prints, cut, without recursion', () => {
    const samples: JsonValue[] = [{ a: [1, "x", { b: null }], c: true }, [], {}, "é\"", 5, [[["a"]]]];
    for (const v of samples) expect(shortJson(v, 500)).toBe(JSON.stringify(v));
    expect(shortJson(JSON.parse(deep(100_000)), 20)).toBe('{"a":{"a":{"a":{"a":');
    expect(shortJson(Array.from({ length: 1_000_000 }, (_, i) => i), 12)).toBe('[0,1,2,3,4,5');
  });
});

describe('a one-line api.json of N duplicate Services', () => {
  /** One line, N copies of the same Service: N − 1 duplicate-object warnings. */
  const oneLine = (n: number) => JSON.stringify({ apiVersion: 'v1', kind: 'List', items: Array.from({ length: n }, () => makeService({ name: 'web' })) });

  /**
   * Characters the parse copies with Buffer.from (how the parser gives a diagnostic its
   * own line: the copy of the whole line per diagnostic was the quadratic step).
   */
  function copiedChars(text: string): { chars: number; duplicates: number } {
    const spy = vi.spyOn(Buffer, 'from');
    try {
      const r = parseK8sObjects(text, 'api.json');
      const chars = spy.mock.calls.reduce((sum, [arg]) => sum + (typeof arg === 'string' ? arg.length : 0), 0);
      return { chars, duplicates: r.diagnostics.filter((d) => d.code === 'duplicate-object').length };
    } finally {
      spy.mockRestore();
    }
  }

  it('copies a bounded excerpt per diagnostic: work grows with N, not N × the line', () => {
    const n = 500;
    const small = copiedChars(oneLine(n));
    const large = copiedChars(oneLine(2 * n));
    expect(small.duplicates).toBe(n - 1);
    expect(large.duplicates).toBe(2 * n - 1);
    // Each diagnostic copies at most its 201-character excerpt: ≤ 250 characters each.
    expect(large.chars).toBeLessThanOrEqual(250 * large.duplicates);
    // Doubling N at most doubles the copying (quadratic work would make it 4×).
    expect(large.chars).toBeLessThanOrEqual(2.2 * small.chars);
  });
});

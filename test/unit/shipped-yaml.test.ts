/**
 * readShippedYaml: the bundle's build-time parse of a shipped YAML file is used only while
 * the file on disk still has the text it was made from (the bundler fills in the global
 * __NODESCOPE_SHIPPED_YAML__; here the test sets it).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { packageRoot } from '../../src/paths.js';
import { readShippedYaml } from '../../src/shipped-yaml.js';

const g = globalThis as { __NODESCOPE_SHIPPED_YAML__?: string };
const probes = path.join(packageRoot(), 'commands', 'probes.yaml');
/** What the bundler inlines: package-relative path → the text it parsed and a stand-in parse. */
const shipped = (rel: string, text: string, value: unknown) => JSON.stringify({ [rel]: { text, value } });

afterEach(() => {
  delete g.__NODESCOPE_SHIPPED_YAML__;
});

describe('readShippedYaml', () => {
  it('parses the file when nothing was inlined (tsc output, vitest)', () => {
    expect(readShippedYaml(probes)).toEqual(parse(readFileSync(probes, 'utf8')));
  });

  it('returns the inlined parse while the file has the same text', () => {
    g.__NODESCOPE_SHIPPED_YAML__ = shipped('commands/probes.yaml', readFileSync(probes, 'utf8'), { marker: 'inlined' });
    expect(readShippedYaml(probes)).toEqual({ marker: 'inlined' });
  });

  it('parses the file when its text changed since the bundle, or when it is another file', () => {
    g.__NODESCOPE_SHIPPED_YAML__ = shipped('commands/probes.yaml', 'probes: []\n', { marker: 'stale' });
    expect(readShippedYaml(probes)).toEqual(parse(readFileSync(probes, 'utf8')));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-shipped-'));
    try {
      const other = path.join(dir, 'probes.yaml');
      writeFileSync(other, 'probes: []\n');
      expect(readShippedYaml(other)).toEqual({ probes: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

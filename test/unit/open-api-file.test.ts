/** `--api-file` that yields no API objects is refused at open time, with the parser's diagnostic. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { openSource, closeSource } from '../../src/sources/open.js';
import { fixtureDir } from '../helpers/fixtures.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-apifile-'));
let n = 0;
/** Writes `text` to a fresh file and returns its path. */
function apiFile(text: string): string {
  const file = path.join(dir, `api-${n++}.json`);
  writeFileSync(file, text);
  return file;
}
const service = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80, protocol: 'TCP' }] } });
const open = (file: string) => openSource({ replay: fixtureDir('lab-iptables'), apiFile: file }, { progress: () => {} });

async function refusal(file: string): Promise<UserError> {
  const e = await open(file).then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(UserError);
  return e as UserError;
}

describe('--api-file checked at open time', () => {
  it('refuses JSON that does not parse, with the line and text of the parser diagnostic and a hint', async () => {
    const file = apiFile('{bad\n');
    const e = await refusal(file);
    expect(e.message).toContain(file);
    expect(e.message).toContain(`${file}:1:`);
    expect(e.message).toContain('{bad');
    expect(e.hint).toMatch(/kubectl get/);
  });

  it('refuses valid JSON of another shape, and plain text', async () => {
    for (const text of ['{"foo": 1}', '[1, 2]', 'hello\n']) {
      const e = await refusal(apiFile(text));
      expect(e.message).toMatch(/no API objects/);
    }
  });

  it('refuses an empty file and one it cannot read', async () => {
    expect((await refusal(apiFile(''))).message).toMatch(/empty/);
    expect((await refusal(dir)).message).toMatch(/cannot read/);
  });

  it('keeps a partial file: its objects open, its diagnostics stay in the parse', async () => {
    const text = `${service('web')}\n{bad\n`;
    expect(parseK8sObjects(text, 'x').diagnostics.some((d) => d.severity === 'error')).toBe(true);
    const source = await open(apiFile(text));
    expect(source.apiText).toBe(text);
    await closeSource(source);
  });

  it('accepts an empty List (a cluster with nothing in it)', async () => {
    const source = await open(apiFile(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [] })));
    expect(source.apiText).toContain('List');
    await closeSource(source);
  });
});

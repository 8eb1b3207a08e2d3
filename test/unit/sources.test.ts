import { mkdtempSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { catalog, fillArgv, loadCatalog } from '../../src/sources/catalog.js';
import { readBundle, sha256, writeBundle } from '../../src/sources/bundle.js';
import { LocalTransport, runProcess } from '../../src/sources/local.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';

function tempCatalog(probesYaml: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-cat-'));
  writeFileSync(path.join(dir, 'probes.yaml'), probesYaml);
  writeFileSync(path.join(dir, 'wrappers.yaml'), readFileSync(path.join(import.meta.dirname, '../../commands/wrappers.yaml')));
  return dir;
}

describe('probe catalog', () => {
  it('declares every probe read-only (writes only on demand) with a parser and a timeout', () => {
    const cat = catalog();
    expect(cat.probes.length).toBeGreaterThan(10);
    for (const p of cat.probes) {
      expect(p.readOnly || p.onDemand, p.id).toBe(true);
      expect(p.parser, p.id).not.toBe('');
      expect(p.timeoutMs, p.id).toBeGreaterThan(0);
    }
    expect(cat.probes.map((p) => p.id)).toEqual(expect.arrayContaining(['iptables-save', 'ip6tables-save', 'ip-addr', 'ip-route', 'conntrack', 'uname']));
  });

  it('refuses a placeholder value that does not match its pattern', () => {
    const cat = catalog();
    expect(fillArgv(['{bpfRoot}/m'], cat.params, {})).toEqual(['/sys/fs/bpf/tc/globals/m']);
    expect(() => fillArgv(['{bpfRoot}/m'], cat.params, { bpfRoot: '/x; rm -rf /' })).toThrow(UserError);
  });
});

describe('local transport and probe runner', () => {
  it('reports a missing binary without throwing', async () => {
    const r = await runProcess(['nodescope-no-such-binary-xyz'], 2000);
    expect(r.missing).toBe(true);
    expect(r.exitCode).toBeNull();
  });

  it('kills a probe at its timeout', async () => {
    const r = await runProcess(['sleep', '5'], 100);
    expect(r.timedOut).toBe(true);
    expect(r.durationMs).toBeLessThan(4000);
  });

  it('falls back to an alternative when the first binary is missing, and keeps going after a failure', async () => {
    const dir = tempCatalog(`probes:
  - {id: alt, description: d, argv: [no-such-binary-abc, x], alternatives: [[echo, from-alternative]], requires: echo, timeoutMs: 2000, parser: p, readOnly: true}
  - {id: fails, description: d, argv: [sh, -c, 'echo oops >&2; exit 3'], requires: sh, timeoutMs: 2000, parser: p, readOnly: true}
  - {id: fine, description: d, argv: [echo, hello], requires: echo, timeoutMs: 2000, parser: p, readOnly: true}
`);
    const runs = await runProbes(new LocalTransport(), { catalog: loadCatalog(dir) });
    expect(runs.map((r) => [r.id, r.status])).toEqual([['alt', 'ok'], ['fails', 'failed'], ['fine', 'ok']]);
    expect(runs[0]!.argv).toEqual(['echo', 'from-alternative']);
    expect(runs[0]!.result.stdout).toBe('from-alternative\n');
    expect(runs[1]!.result.exitCode).toBe(3);
    expect(runs[1]!.result.stderr).toBe('oops\n');
  });
});

describe('capture bundle and replay', () => {
  it('replays exactly what was captured, keyed by the catalog argv', async () => {
    const dir = tempCatalog(`probes:
  - {id: a, description: d, argv: [printf, 'x\\ny\\n'], requires: printf, timeoutMs: 2000, parser: p, readOnly: true}
  - {id: b, description: d, argv: [sh, -c, 'echo err >&2; exit 2'], requires: sh, timeoutMs: 2000, parser: p, readOnly: true}
`);
    const cat = loadCatalog(dir);
    const runs = await runProbes(new LocalTransport(), { catalog: cat });
    const out = mkdtempSync(path.join(tmpdir(), 'nodescope-bundle-'));
    writeBundle(out, { capturedAt: '2026-11-29T00:00:00.000Z', nodescopeVersion: 't', node: 'n1', source: { kind: 'local', label: 'local' }, toolVersions: {}, runs, apiText: '{"kind":"List","items":[]}' });
    const replay = new ReplayTransport(out);
    const again = await runProbes(replay, { catalog: cat });
    expect(again.map((r) => [r.id, r.status, r.result.stdout, r.result.stderr, r.result.exitCode])).toEqual(runs.map((r) => [r.id, r.status, r.result.stdout, r.result.stderr, r.result.exitCode]));
    expect(replay.apiText()).toBe('{"kind":"List","items":[]}');
    const m = readBundle(out).manifest;
    expect(m.probes[0]!.sha256.stdout).toBe(sha256('x\ny\n'));
    const notCaptured = await replay.exec(['iptables-save', '-c'], { timeoutMs: 1 });
    expect(notCaptured.missing).toBe(true);
  });

  it('takes the path of a bundle\'s manifest.json as its directory (--replay DIR/manifest.json)', async () => {
    const out = mkdtempSync(path.join(tmpdir(), 'nodescope-bundle-'));
    writeBundle(out, { capturedAt: '2026-11-29T00:00:00.000Z', nodescopeVersion: 't', node: 'n1', source: { kind: 'local', label: 'local' }, toolVersions: {}, runs: [], apiText: '{"kind":"List","items":[]}' });
    const manifest = path.join(out, 'manifest.json');
    expect(readBundle(manifest).dir).toBe(out);
    const replay = new ReplayTransport(manifest);
    expect(replay.bundle.dir).toBe(out);
    expect(replay.label).toBe(`replay:${out}`);
    expect(replay.apiText()).toBe('{"kind":"List","items":[]}');
    // Another file of the bundle is still not a bundle.
    expect(() => readBundle(path.join(out, 'api.json'))).toThrow(UserError);
  });

  it('refuses a directory that is not a bundle, and a future format version', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-nob-'));
    expect(() => new ReplayTransport(dir)).toThrow(UserError);
    mkdirSync(path.join(dir, 'x'));
    writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ formatVersion: 99 }));
    expect(() => readBundle(dir)).toThrow(/format version 99/);
  });
});

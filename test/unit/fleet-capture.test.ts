/**
 * The fleet capture's orchestration (src/fleet/capture.ts) over real transports: each
 * "node" is a replay of the lab-iptables fixture (the replay transport is a real
 * transport, not a mock); failures and hangs are nodes whose open throws or never ends.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readFleetManifest } from '../../src/fleet/bundle.js';
import { captureFleet } from '../../src/fleet/capture.js';
import { etaMs, progressLine } from '../../src/fleet/progress.js';
import { chooseNodes, parseSshFile, splitList } from '../../src/fleet/targets.js';
import { readBundle } from '../../src/sources/bundle.js';
import type { OpenedSource } from '../../src/sources/open.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { said, UserError } from '../../src/errors.js';
import { fixtureDir, snapshotOfDir } from '../helpers/fixtures.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-'));
  dirs.push(d);
  return d;
};

/** A replay of lab-iptables as one node's source; `closed` counts its closes. */
function replayNode(closed: string[], name: string): OpenedSource {
  const transport = new ReplayTransport(fixtureDir('lab-iptables'));
  const close = transport.close.bind(transport);
  transport.close = async () => {
    closed.push(name);
    await close();
  };
  return { transport, live: false, apiText: undefined, apiOrigin: undefined };
}

describe('captureFleet', () => {
  it('captures every node, records a failed one with its reason, times out a hung one and closes its late source', async () => {
    const dir = path.join(tempDir(), 'fleet');
    const closed: string[] = [];
    const apiText = readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json'), 'utf8');
    let lateResolve: ((s: OpenedSource) => void) | undefined;
    const lines: string[] = [];
    const manifest = await captureFleet({
      dir, nodes: ['node-a', 'node-b', 'node-bad', 'node-hung'], parallel: 2, nodeTimeoutMs: 1500, via: 'node-debug-pod', apiText, tickMs: 0,
      progress: (l) => lines.push(l),
      openNode: async (name) => {
        if (name === 'node-bad') throw new UserError(said('err.noSuchNode', { node: 'node-bad' }));
        if (name === 'node-hung') return new Promise<OpenedSource>((resolve) => (lateResolve = resolve));
        return replayNode(closed, name);
      },
    });
    expect(manifest.nodes.map((n) => [n.name, n.status])).toEqual([['node-a', 'ok'], ['node-b', 'ok'], ['node-bad', 'failed'], ['node-hung', 'failed']]);
    expect(manifest.nodes.find((n) => n.name === 'node-bad')!.reason).toBe('--node node-bad: the cluster has no such node');
    expect(manifest.nodes.find((n) => n.name === 'node-hung')!.reason).toBe('timed out after 2 s while opening the node');
    expect(readFleetManifest(dir)).toEqual(manifest);
    expect(closed.sort()).toEqual(['node-a', 'node-b']);
    // The hung open finishes after its node gave up: its source is closed then.
    lateResolve!(replayNode(closed, 'node-hung'));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toContain('node-hung');

    // Each node bundle is a normal bundle, its api.json the fleet's one copy (a hard link).
    const a = readBundle(path.join(dir, 'nodes/node-a'));
    expect(a.manifest.node).toBe('node-a');
    expect(a.manifest.probes.length).toBeGreaterThan(10);
    expect(statSync(path.join(dir, 'nodes/node-a/api.json')).ino).toBe(statSync(path.join(dir, 'api.json')).ino);
    const snap = await snapshotOfDir(path.join(dir, 'nodes/node-b'));
    expect(snap.iptables?.value?.tables.length).toBeGreaterThan(0);
    expect(snap.api?.value?.services.length).toBeGreaterThan(0);
    // A failed node leaves no half bundle.
    expect(() => statSync(path.join(dir, 'nodes/node-bad'))).toThrow();

    expect(lines).toContain('fleet: node-bad failed: --node node-bad: the cluster has no such node');
    expect(lines.at(-1)).toMatch(/^fleet: 4\/4 done \(2 failed\), 0 running, 0 waiting — \d+ s elapsed, ETA 0 s$/);
  }, 30_000);

  it('never has more than `parallel` nodes open at once', async () => {
    let open = 0;
    let most = 0;
    const closed: string[] = [];
    await captureFleet({
      dir: tempDir(), nodes: ['a', 'b', 'c', 'd', 'e'], parallel: 2, nodeTimeoutMs: 10_000, via: 'ssh', tickMs: 0,
      openNode: async (name) => {
        open++;
        most = Math.max(most, open);
        const s = replayNode(closed, name);
        const close = s.transport.close.bind(s.transport);
        s.transport.close = async () => {
          open--;
          await close();
        };
        return s;
      },
    });
    expect(most).toBe(2);
    expect(closed.sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
  }, 30_000);
});

describe('progress and targets', () => {
  it('estimates the time left from the throughput so far', () => {
    expect(etaMs({ total: 10, done: 0, failed: 0, running: 3 }, 5000)).toBeNull();
    expect(etaMs({ total: 10, done: 4, failed: 1, running: 3 }, 8000)).toBe(12_000);
    expect(progressLine({ total: 10, done: 4, failed: 1, running: 3 }, 8000)).toBe('fleet: 4/10 done (1 failed), 3 running, 3 waiting — 8 s elapsed, ETA 12 s');
    expect(progressLine({ total: 3, done: 0, failed: 0, running: 3 }, 75_000)).toBe('fleet: 0/3 done, 3 running, 0 waiting — 1 min 15 s elapsed, ETA ?');
  });

  it('reads node lists and SSH host files', () => {
    expect(splitList(' a, b,,a ,c')).toEqual(['a', 'b', 'c']);
    expect(parseSshFile('# hosts\nroot@n1\n\n n2:2222  # second\n', 'f')).toEqual(['root@n1', 'n2:2222']);
    expect(() => parseSshFile('# none\n', 'f')).toThrow(UserError);
    const listed = [{ name: 'w2', labels: {} }, { name: 'w1', labels: {} }];
    expect(chooseNodes(listed, undefined)).toEqual(['w1', 'w2']);
    expect(() => chooseNodes(listed, ['w1', 'w9'])).toThrow(/no node w9/);
  });
});

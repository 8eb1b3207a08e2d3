/**
 * The TUI's live load counts the Cilium LB table from the dumps' tallies
 * (src/parsers/bpftool-lb-tally.ts, src/collect/lb-lazy.ts `tallyLbPart`) and decodes and
 * joins it only when a view first reads it (the LB pane): no dump decoded for the header's
 * evidence. Proven equal to the old paths kept as references: the same live session with each
 * dump decoded beside the next (`lbDumpsAtLoad: 'decode'`, the join on first read:
 * `lazyLbPart`) for the frames and the header, and the eager
 * build (`buildSnapshot`) for the LB part's diagnostics, counts and table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { act } from 'react';
import React from 'react';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateWorld, writeModeBundle } from '../../bench/gen/capture.js';
import { buildSnapshot } from '../../src/collect/build-snapshot.js';
import { lazyLbJoins } from '../../src/collect/lb-lazy.js';
import { Session } from '../../src/collect/session.js';
import { lbCountOf } from '../../src/parsers/bpftool-lb-count.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import type { Transport } from '../../src/sources/transport.js';
import { EAGER_SERVICES } from '../../src/ui/diagnosis-view.js';
import { App } from '../../src/ui/App.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { renderApp } from '../helpers/render.js';
import { withPinnedListing } from '../helpers/pinned-listing.js';

// Every LB map decode, wherever it is made (beside the dumps, in the build, on first read), counted.
const decodes = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/collect/early-parse.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/collect/early-parse.js')>();
  return { ...real, decodeLbMapRun: (...a: Parameters<typeof real.decodeLbMapRun>) => (decodes.count++, real.decodeLbMapRun(...a)) };
});

const PINNED = ['cilium_ct4_global', 'cilium_lb4_backends_v3', 'cilium_lb4_reverse_nat', 'cilium_lb4_services_v2', 'cilium_lb6_backends_v3', 'cilium_lb6_reverse_nat', 'cilium_lb6_services_v2'];
const line2 = (frame: string) => frame.split('\n')[1]!;

describe('the TUI live load on a Cilium capture: the LB table counted from the tallies, decoded on first read', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  function generated(services: number, seed: string): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-lb-tally-gen-'));
    dirs.push(dir);
    writeModeBundle(generateWorld({ services, endpoints: 2, seed, modes: ['cilium'], conntrack: 10 }), 'cilium', dir);
    return withPinnedListing(dir, PINNED, dirs);
  }

  /** The capture as a live node: a local transport answering from it (a live session, its parse cache, the dumps tallied beside). */
  function liveTransport(dir: string): { transport: Transport; apiText: string } {
    const replay = new ReplayTransport(dir);
    return { transport: { kind: 'local', label: 'live-copy', exec: (argv, o) => replay.exec(argv, o), close: async () => {} }, apiText: replay.apiText()! };
  }

  // `big`: past the eager diagnosis' size (src/ui/diagnosis-view.ts), so no view reads the table at load.
  const SOURCES = [
    ['lab-cilium', () => withPinnedListing(fixtureDir('lab-cilium'), PINNED, dirs), false],
    ['a generated capture of 150 Services', () => generated(150, 'lb-tally-150'), false],
    ['a generated capture past the eager diagnosis', () => generated(EAGER_SERVICES + 100, 'lb-tally-big'), true],
  ] as const;

  describe.each(SOURCES)('on %s', (_name, make, big) => {
    let dir: string;
    beforeAll(() => {
      dir = make();
    });

    it('shows the same header and panes as the decoding load, and the LB part equals the eager build', async () => {
      const eagerTransport = new ReplayTransport(dir);
      const runs = await runProbes(eagerTransport, {});
      const eager = buildSnapshot({ runs, apiText: eagerTransport.apiText()!, source: { kind: 'replay', label: 'x', live: false }, capturedAt: runs[0]!.result.startedAt });
      // The reference: the same live load with each dump decoded beside the next (the join on first read).
      const refLive = liveTransport(dir);
      const refSession = new Session({ transport: refLive.transport, apiText: refLive.apiText, live: true, intervalMs: 3_600_000, lbDumpsAtLoad: 'decode' });
      const ref = await renderApp(<App session={refSession} lang="en" width={120} height={24} now={() => 0} />, 120, 24);
      const refLines: string[] = [];
      refSession.subscribe(() => refLines.push(line2(ref.frame())));
      await act(async () => {
        await refSession.start();
      });
      const refFrames = [ref.frame()];

      const { transport, apiText } = liveTransport(dir);
      const session = new Session({ transport, apiText, live: true, intervalMs: 3_600_000 });
      const r = await renderApp(<App session={session} lang="en" width={120} height={24} now={() => 0} />, 120, 24);
      const lines: string[] = [];
      session.subscribe(() => lines.push(line2(r.frame())));
      const [joins, decoded] = [lazyLbJoins.count, decodes.count];
      await act(async () => {
        await session.start();
      });
      const snapshot = session.getState().snapshot!;
      const lbRuns = snapshot.lbMapsRead.length;
      expect(lbRuns).toBeGreaterThan(0);
      // The header's evidence from the tallies: no dump decoded, no join (a small node's diagnosis reads the table at once).
      if (big) expect([decodes.count - decoded, lazyLbJoins.count - joins]).toEqual([0, 0]);
      else expect([decodes.count - decoded, lazyLbJoins.count - joins]).toEqual([lbRuns, 1]);
      // The header's lines in order (the mode named early, then its evidence) as the decoding load's, frame for frame at the end.
      expect([...new Set(lines)]).toEqual([...new Set(refLines)]);
      expect(r.frame().split('\n').slice(2)).toEqual(refFrames[0]!.split('\n').slice(2));
      expect(line2(r.frame())).toBe(line2(ref.frame()));

      // The LB part as the eager build makes it: diagnostics, counts, then the table (read last: it makes the join).
      expect(snapshot.lbMapsRead).toEqual(eager.lbMapsRead);
      expect(JSON.stringify(snapshot.lb!.diagnostics)).toBe(JSON.stringify(eager.lb!.diagnostics));
      expect(lbCountOf(snapshot.lb!)).toEqual(lbCountOf(refSession.getState().snapshot!.lb!));
      expect(snapshot.lb!.probe).toEqual(eager.lb!.probe);

      // The LB pane makes the join once (decoding each dump once), and shows what the decoding load shows.
      await r.press('3');
      expect([decodes.count - decoded, lazyLbJoins.count - joins]).toEqual([lbRuns, 1]);
      const [joinsRead, decodedRead] = [lazyLbJoins.count, decodes.count];
      await ref.press('3');
      expect(r.frame().split('\n').slice(2)).toEqual(ref.frame().split('\n').slice(2));
      expect(JSON.stringify(snapshot.lb!.value)).toBe(JSON.stringify(eager.lb!.value));
      await r.press('1');
      await ref.press('1');
      expect(r.frame().split('\n').slice(2)).toEqual(ref.frame().split('\n').slice(2));
      // Read again: no second decode or join.
      expect(snapshot.lb!.value).toBe(snapshot.lb!.value);
      expect([decodes.count - decodedRead, lazyLbJoins.count - joinsRead]).toEqual([0, big ? 1 : 0]);
      r.unmount();
      ref.unmount();
      await session.stop();
      await refSession.stop();
    });
  });
});

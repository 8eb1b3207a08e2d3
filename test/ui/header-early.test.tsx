/**
 * The header before the data: a replay's node name comes from its manifest at once (the
 * first snapshot waits for the API objects to parse), and the mode line says the rules are
 * being read instead of a bare `…`, until the rulesets are parsed.
 */
import { act } from 'react';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { buildFirstSnapshot, buildSnapshot, type SnapshotInput } from '../../src/collect/build-snapshot.js';
import { readBundle } from '../../src/sources/bundle.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { Session, staticSession } from '../../src/collect/session.js';
import { App } from '../../src/ui/App.js';
import { t, type Lang } from '../../src/text/i18n.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { renderApp } from '../helpers/render.js';

const CAPTURE = 'lab-iptables';

function replaySession(): Session {
  const transport = new ReplayTransport(fixtureDir(CAPTURE));
  const apiText = transport.apiText();
  return new Session({ transport, live: false, ...(apiText !== undefined ? { apiText } : {}) });
}

const lines = (frame: string) => frame.split('\n');

describe('the header before the first snapshot', () => {
  it("a replay session knows the manifest's node before it starts", () => {
    const node = readBundle(fixtureDir(CAPTURE)).manifest.node;
    expect(node).not.toBe('');
    expect(replaySession().getState().node).toBe(node);
    expect(replaySession().getState().capturedAt).toBe(readBundle(fixtureDir(CAPTURE)).manifest.capturedAt);
    expect(replaySession().getState().snapshot).toBeNull();
  });

  it.each(['en', 'ja'] as const)('shows the node and "reading rules" at once, then the mode (%s)', async (lang: Lang) => {
    const node = readBundle(fixtureDir(CAPTURE)).manifest.node;
    const session = replaySession();
    const r = await renderApp(<App session={session} lang={lang} width={80} height={20} now={() => 0} />, 80, 20);
    const before = r.frame();
    expect(lines(before)[0]).toContain(`${t(lang, 'header.node')} ${node} │`);
    // The capture time too, from the manifest (the first snapshot waits for the API objects).
    const at = readBundle(fixtureDir(CAPTURE)).manifest.capturedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z').slice(0, 10);
    expect(lines(before)[0]).toContain(at);
    expect(lines(before)[1]).toBe(`${t(lang, 'header.mode')}: ${t(lang, 'header.modeReading')}`);
    await act(async () => {
      await session.start();
    });
    const after = r.frame();
    expect(lines(after)[0]).toContain(`${t(lang, 'header.node')} ${node} │`);
    expect(lines(after)[1]).toMatch(new RegExp(`^${t(lang, 'header.mode')}: iptables — `));
    r.unmount();
    await session.stop();
  });

  it('says "reading rules" while the first snapshot has the rulesets pending, and no mode after a failed load', async () => {
    const transport = new ReplayTransport(fixtureDir(CAPTURE));
    const runs = await runProbes(transport, {});
    const input: SnapshotInput = { runs, apiText: transport.apiText()!, source: { kind: 'replay', label: CAPTURE, live: false }, capturedAt: runs[0]!.result.startedAt };
    const first = buildFirstSnapshot(input);
    expect(first.pending).toContain('iptables');
    const r = await renderApp(<App session={staticSession(first)} lang="en" width={80} height={20} now={() => 0} />, 80, 20);
    expect(lines(r.frame())[1]).toBe('mode: … (reading rules)');
    r.unmount();
    const whole = await renderApp(<App session={staticSession(buildSnapshot(input))} lang="en" width={80} height={20} now={() => 0} />, 80, 20);
    expect(lines(whole.frame())[1]).toMatch(/^mode: iptables — /);
    whole.unmount();
    const failed = await renderApp(<App session={staticSession(null, { error: 'no such bundle', loading: false })} lang="en" width={80} height={20} now={() => 0} />, 80, 20);
    expect(lines(failed.frame())[1]).toBe('mode: —');
    expect(lines(failed.frame())[0]).toContain('node …');
    failed.unmount();
  });

  it("shows the session's API error (an --api-file version without objects) on the first line", async () => {
    const transport = new ReplayTransport(fixtureDir(CAPTURE));
    const runs = await runProbes(transport, {});
    const snapshot = buildSnapshot({ runs, apiText: transport.apiText()!, source: { kind: 'replay', label: CAPTURE, live: false }, capturedAt: runs[0]!.result.startedAt });
    const apiError = 'the file is empty (--api-file /tmp/objects.json: showing the objects read before)';
    const r = await renderApp(<App session={staticSession(snapshot, { apiError })} lang="en" width={120} height={20} now={() => 0} />, 120, 20);
    expect(lines(r.frame())[0]).toMatch(/^nodescope │ API: the file is empty \(--api-file .* │ node lab-node │ replay /);
    r.unmount();
  });
});

/**
 * `-n default` over lab-iptables in the TUI: the Services list shows default's objects, yet the
 * DNS pane (key 5) still asks kube-system/kube-dns — the cluster DNS Service lives there
 * whatever `-n` shows (src/model/api-namespace.ts `apiOfCluster`). A real Session over the replay.
 */
import React from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { Session } from '../../src/collect/session.js';
import { closeSource, openSource, type OpenedSource } from '../../src/sources/open.js';
import { App } from '../../src/ui/App.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';

const opened: { source: OpenedSource; session: Session }[] = [];
afterEach(async () => {
  for (const { source, session } of opened.splice(0)) {
    await session.stop();
    await closeSource(source);
  }
});

/** The TUI's session over lab-iptables with `-n default` (as src/cli.tsx openSession builds it). */
async function sessionInDefault(): Promise<Session> {
  const source = await openSource({ replay: fixtureDir('lab-iptables'), namespace: 'default', apiAllNamespaces: true });
  const session = new Session({ transport: source.transport, live: false, apiText: source.apiText!, apiOrigin: source.apiOrigin ?? 'api.json', apiNamespace: 'default' });
  opened.push({ source, session });
  await session.start();
  return session;
}

describe.each(FRAME_WIDTHS)('the DNS pane with -n default at %i columns', (width) => {
  it.each(['en', 'ja'] as const)("answers default/empty's names through kube-system/kube-dns (%s)", async (lang) => {
    const session = await sessionInDefault();
    // -n still narrows what the lists show.
    expect(session.getState().snapshot?.api?.value?.services.map((s) => s.meta.namespace)).toContain('default');
    expect(session.getState().snapshot?.api?.value?.services.map((s) => s.meta.namespace)).not.toContain('kube-system');
    const r = await renderApp(<App session={session} lang={lang} width={width} height={30} now={() => 0} />, width, 30);
    await r.press('5');
    await expect.poll(() => session.getState().dns?.loading, { timeout: 5000 }).toBe(false);
    expect(session.getState().dns?.error ?? null).toBeNull();
    const frame = r.frame();
    expect(frame).not.toContain('kube-system/kube-dns) in the API');
    expect(frame).toMatch(/empty\.default\.svc\S*\s+A NOERROR/);
    r.unmount();
  });
});

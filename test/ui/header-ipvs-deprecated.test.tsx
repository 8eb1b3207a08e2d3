/**
 * An IPVS node's header carries IPVS mode's deprecation (KEP-5495, Kubernetes 1.35), in the
 * TUI (80 and 120 columns, English and Japanese) and in every `show` document's head.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { iptablesDumpNotes } from '../../src/analysis/iptables-faults.js';
import { staticSession } from '../../src/collect/session.js';
import { showHead } from '../../src/report/header.js';
import { App } from '../../src/ui/App.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { ipvsSnapshot } from '../helpers/ipvs-fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';

/** The IPVS listings plus a kube-ipvs0 interface: a node detected in IPVS mode. */
async function ipvsNode(): Promise<NodeSnapshot> {
  const snap = await ipvsSnapshot();
  const ifaces = snap.addrs!.value!;
  return { ...snap, addrs: { ...snap.addrs!, value: [...ifaces, { ...ifaces[0]!, ifname: 'kube-ipvs0', addresses: [] }] } };
}

describe.each(FRAME_WIDTHS)('IPVS deprecation in the header at %i columns', (width) => {
  it.each([['en', 'IPVS deprecated (KEP-5495)'], ['ja', 'IPVSは非推奨（KEP-5495）']] as const)('%s', async (lang, note) => {
    const r = await renderApp(<App session={staticSession(await ipvsNode())} lang={lang} width={width} height={24} />, width, 24);
    const header = r.frame().split('\n').slice(0, 3).join('\n');
    expect(header).toContain(note);
    expect(header).toMatch(/ipvs/);
    r.unmount();
  });
});

describe('the deprecation note', () => {
  it('is in show documents of an IPVS node, and absent elsewhere', async () => {
    const ipvs = await ipvsNode();
    expect(iptablesDumpNotes(ipvs).map((n) => n.text).join('\n')).toContain('KEP-5495');
    expect(showHead(ipvs).notes?.join('\n')).toContain('deprecated since Kubernetes 1.35');
    expect(iptablesDumpNotes(await snapshotOf('lab-nftables')).map((n) => n.text).join('\n')).not.toContain('KEP-5495');
  });
});

/**
 * ServiceCIDR / IPAddress (KEP-1880) a cluster does not serve (404) or RBAC refuses (403): the
 * reader skips them and names them; the note shows in the TUI header (80 and 120 columns,
 * English and Japanese), in `show services`' head and in `diagnose -o json`'s header, and a
 * capture's objects text carries it (x-nodescope-unread).
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { apiUnreadNote } from '../../src/analysis/api-notes.js';
import { staticSession } from '../../src/collect/session.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { showDiagnose } from '../../src/report/diagnose.js';
import { showServices } from '../../src/report/services.js';
import { headText, showHead } from '../../src/report/header.js';
import { App } from '../../src/ui/App.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';

/** The nftables capture with its objects text as a cluster refusing IPAddresses and not serving ServiceCIDRs prints it. */
async function unreadNode(): Promise<NodeSnapshot> {
  const s = await snapshotOf('lab-nftables');
  const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: [], 'x-nodescope-unread': ['servicecidrs: not served by this cluster', 'ipaddresses: forbidden (RBAC)\u001b[2J'] };
  const parsed = parseK8sObjects(JSON.stringify(list), 'api').value;
  return { ...s, api: { ...s.api!, value: { ...s.api!.value!, unread: parsed.unread! } } };
}

describe('the objects text carries the kinds not read', () => {
  it('parsed from the List, absent when there are none', async () => {
    const s = await unreadNode();
    expect(s.api!.value!.unread).toEqual(['servicecidrs: not served by this cluster', 'ipaddresses: forbidden (RBAC)\u001b[2J']);
    expect((await snapshotOf('lab-nftables')).api!.value!.unread).toBeUndefined();
    expect(apiUnreadNote((await snapshotOf('lab-nftables')).api!.value)).toBeNull();
  });
});

describe.each(FRAME_WIDTHS)('the TUI header at %i columns', (width) => {
  it.each([['en', 'ServiceCIDR, IPAddress not read'], ['ja', 'ServiceCIDR, IPAddressを読めず']] as const)('%s', async (lang, note) => {
    const r = await renderApp(<App session={staticSession(await unreadNode())} lang={lang} width={width} height={24} />, width, 24);
    const header = r.frame().split('\n').slice(0, 3).join('\n');
    expect(header).toContain(note);
    r.unmount();
  });
});

describe('show and diagnose heads', () => {
  it('show services text and diagnose JSON name the kinds and why, terminal-safe in text', async () => {
    const s = await unreadNode();
    const head = showHead(s);
    expect(head.notes).toEqual([expect.stringContaining('servicecidrs: not served by this cluster; ipaddresses: forbidden (RBAC)')]);
    expect(headText(head)).toContain('note: API objects not read: servicecidrs: not served by this cluster');
    expect(headText(head)).not.toContain('\u001b');
    const json = JSON.parse(showDiagnose(s, 'json').out) as { notes?: string[] };
    expect(showServices(s, 'text')).toContain('note: API objects not read');
    expect(json.notes?.join('\n')).toContain('ipaddresses: forbidden (RBAC)');
    expect(showHead(await snapshotOf('lab-nftables')).notes).toBeUndefined();
  });
});

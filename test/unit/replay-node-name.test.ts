/**
 * The node a replay is of: the capture's manifest.json `node` (the node that was opened),
 * not the capture host's `uname -n` ("vm" in lab-iptables), when the API objects name no
 * Node owning one of its addresses — `show services` compares endpoints' `nodeName` with it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveNodeName } from '../../src/collect/build-snapshot.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { showServices } from '../../src/report/services.js';
import { loadSnapshot } from '../../src/collect/session.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { fixtureDir } from '../helpers/fixtures.js';

type Item = { kind: string; metadata: { name: string } };
const CAPTURE = fixtureDir('lab-iptables');
const base = JSON.parse(readFileSync(path.join(CAPTURE, 'api.json'), 'utf8')) as { items: Item[] };

/** lab-iptables' API objects without the kinds in `drop`, as a List text. */
function apiWithout(...drop: string[]): string {
  return JSON.stringify({ ...base, items: base.items.filter((o) => !drop.includes(o.kind)) });
}

/** `show services -o json` of the lab-iptables replay with `apiText` as its --api-file. */
async function servicesJson(apiText: string): Promise<{ node: string; services: { endpoints: { nodeName: string | null; onNode: boolean | null }[] }[] }> {
  const transport = new ReplayTransport(CAPTURE);
  const { snapshot } = await loadSnapshot({ transport, live: false, apiText, apiOrigin: 'api.json' });
  return JSON.parse(showServices(snapshot, 'json')) as never;
}

describe('a replay names the node its manifest recorded', () => {
  it('uses manifest.json `node` over `uname -n` when the API objects hold no Node', async () => {
    const manifest = JSON.parse(readFileSync(path.join(CAPTURE, 'manifest.json'), 'utf8')) as { node: string };
    const out = await servicesJson(apiWithout('Node'));
    expect(out.node).toBe(manifest.node);
    const endpoints = out.services.flatMap((s) => s.endpoints).filter((e) => e.nodeName !== null);
    expect(endpoints.length).toBeGreaterThan(0);
    // Endpoints on the opened node are on it; the others (lab-node2) are not.
    for (const e of endpoints) expect(e.onNode).toBe(e.nodeName === manifest.node);
    expect(endpoints.some((e) => e.onNode === true)).toBe(true);
  });

  it('gives the same node and onNode as with the Node objects', async () => {
    const withNodes = await servicesJson(apiWithout());
    const withoutNodes = await servicesJson(apiWithout('Node'));
    expect(withoutNodes.node).toBe(withNodes.node);
    expect(withoutNodes.services.map((s) => s.endpoints.map((e) => e.onNode))).toEqual(withNodes.services.map((s) => s.endpoints.map((e) => e.onNode)));
  });
});

describe('resolveNodeName', () => {
  const api = parseK8sObjects(apiWithout(), 'api.json').value;

  it('takes the API Node owning one of the addresses over a recorded name', () => {
    expect(resolveNodeName('vm', ['192.168.49.3'], api, 'lab-node')).toBe('lab-node2');
  });

  it('takes the recorded name over the host name when no Node owns an address', () => {
    expect(resolveNodeName('vm', ['10.9.9.9'], api, 'lab-node')).toBe('lab-node');
    expect(resolveNodeName('vm', [], null, 'lab-node')).toBe('lab-node');
  });

  it('keeps the host name (or the Node named like it) without a recorded name: live sources', () => {
    expect(resolveNodeName('vm', [], null)).toBe('vm');
    expect(resolveNodeName('lab-node2', [], api)).toBe('lab-node2');
  });
});

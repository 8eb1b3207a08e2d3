/**
 * Frames of the Services pane's issue-21 columns at 80 and 120 columns, in English and
 * Japanese: the selected Service's policy line (trafficDistribution, iTP/eTP, affinity,
 * families, ipMode) and the THIS NODE column saying which endpoints this node uses for
 * cluster and external traffic and why (src/analysis/node-expectation.ts).
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { expectServiceRow } from '../../src/analysis/node-expectation.js';
import { buildServiceView } from '../../src/analysis/service-view.js';
import type { Lang } from '../../src/text/i18n.js';
import { ServicesPane } from '../../src/ui/panes/ServicesPane.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';
import { makeEndpointSlice, makeNode, makeService, objectsOf } from '../unit/builders/k8s.js';

const objects = objectsOf(
  makeNode({ name: 'node-a', zone: 'zone-a' }),
  makeService({ name: 'zonal', trafficDistribution: 'PreferClose', sessionAffinity: 'ClientIP', timeoutSeconds: 600, ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' }),
  makeEndpointSlice({ service: 'zonal', endpoints: [
    { address: '10.244.1.5', nodeName: 'node-a', zone: 'zone-a', forZones: ['zone-a'] },
    { address: '10.244.2.5', nodeName: 'node-b', zone: 'zone-b', forZones: ['zone-b'] },
  ] }),
  makeService({
    name: 'lb', type: 'LoadBalancer', externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local', clusterIP: '10.96.0.13',
    ports: [{ name: 'http', port: 80, targetPort: 8080, nodePort: 30080 }], healthCheckNodePort: 30500,
    lbIngress: [{ ip: '198.51.100.2', ipMode: 'Proxy' }],
  }),
  makeEndpointSlice({ service: 'lb', endpoints: [{ address: '10.244.2.8', nodeName: 'node-b', zone: 'zone-b' }] }),
);
const rows = buildServiceView(objects, { nodeName: 'node-a' }).rows;
const index = (name: string) => rows.findIndex((r) => r.name === name);

function frame(name: string, width: number, lang: Lang): string {
  const row = rows[index(name)]!;
  const expectation = expectServiceRow(objects, { name: 'node-a' }, row);
  return renderAt(<ServicesPane rows={rows} diagnostics={[]} cursor={index(name)} width={width} height={16} focused lang={lang} expectation={expectation} />, width).frame();
}

describe.each(FRAME_WIDTHS)('Services pane, what this node does, at %i columns', (width) => {
  it('en: PreferClose is PreferSameZone; the zone-a endpoint is used, the zone-b one left out by hint', () => {
    const f = frame('zonal', width, 'en');
    expect(f).toContain('PreferClose (= PreferSameZone) · iTP Cluster · eTP Cluster · ClientIP 600s · IPv4 SingleStack'.slice(0, width - 4));
    expect(f).toContain('THIS NODE');
    expect(f).toMatch(/10\.244\.1\.5 .*✓ hinted for/);
    expect(f).toMatch(/10\.244\.2\.5 .*✗ not hinted/);
    expect(f.split('\n').every((l) => l.length <= width)).toBe(true);
    expect(f).toMatchSnapshot();
  });

  it('en: iTP and eTP Local with no local endpoint; the ipMode Proxy LB IP named', () => {
    const f = frame('lb', width, 'en');
    expect(f).toContain('cluster+external DROP (no local endpoint) · no trafficDistribution');
    if (width >= 120) expect(f).toContain('iTP Local · eTP Local · no affinity');
    expect(f).toMatch(/10\.244\.2\.8 .*✗ on node-b/);
    expect(f).toMatchSnapshot();
  });

  it('ja: the same in Japanese', () => {
    const f = frame('zonal', width, 'ja');
    expect(f).toContain('このノードでの扱い'.slice(0, 4));
    expect(f).toMatch(/10\.244\.1\.5 .*✓ zone-a/);
    expect(f).toMatchSnapshot();
    const lb = frame('lb', width, 'ja');
    expect(lb).toMatch(/10\.244\.2\.8 .*✗ node-b/);
    expect(lb).toMatchSnapshot();
  });
});

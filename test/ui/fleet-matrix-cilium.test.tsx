/**
 * Frames of the fleet matrix over a Cilium fleet (test/helpers/fleet-cilium-fixtures.ts) at 80
 * and 120 columns, in English and Japanese: the freshness row under the node names says each
 * node's agent state — lab-node2 with a frontend still Pending, lab-node's last frontend change,
 * lab-node3's agent not reached — and the stale Cilium backend is named in the cursor cell.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import React from 'react';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnoseFleet, type FleetDiagnosis } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import { FleetMatrixPane } from '../../src/ui/fleet/FleetMatrixPane.js';
import { frontendsText, statusText } from '../helpers/cilium-agent-text.js';
import { writeCiliumFleet } from '../helpers/fleet-cilium-fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

const LANGS = ['en', 'ja'] as const;
const OK = [['cilium-health-ep', '14s ago', 'never', 0, 'no error']] as const;
const web = (status: string, since: string) => frontendsText([['10.96.12.34:80/TCP', 'ClusterIP', 'default/web', 'http', '10.244.0.23:8080/TCP', status, since, '']]);
let dir: string;
let data: FleetDiagnosis;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-cui-'));
  writeCiliumFleet(dir, {
    'lab-node': { status: statusText('Ok   1.34', OK), frontends: web('Done', '5m2s') },
    'lab-node2': { status: statusText('Ok   1.34', OK), frontends: web('Pending', '3m5s') },
  });
  data = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(FRAME_WIDTHS.flatMap((w) => LANGS.map((l) => [w, l] as const)))('Cilium fleet matrix at %i columns (%s)', (width, lang) => {
  it('shows each node\'s freshness under its name and the stale backend in the findings of the cursor cell', () => {
    const row = data.services.findIndex((s) => s.name === 'web');
    const r = renderAt(<FleetMatrixPane data={data} dir="fleet" cursor={{ row, col: 0 }} width={width} height={20} lang={lang} notice={null} />, width);
    const frame = r.frame();
    const header = frame.split('\n').find((l) => l.includes('lab-node2'))!;
    expect(header.indexOf('lab-node2')).toBeLessThan(header.indexOf('lab-node3'));
    expect(frame).toMatch(lang === 'en' ? /^freshness +pend 3m05s +\? +sync 5m02s *$/m : /^鮮度 +保留 3m05s +不明 +同期 5m02s前 *$/m);
    // The finding sentence in the pane's language (its `said` key, not the English message).
    expect(frame).toContain(lang === 'en' ? '10.96.12.34:80/TCP → 10.244.1.99:8080: in no EndpointSlice' : '10.96.12.34:80/TCP → 10.244.1.99:8080: Service のどの EndpointSlice にも');
    expect(frame.split('\n').every((l) => [...l].length <= width)).toBe(true);
    expect(frame).toMatchSnapshot();
    r.unmount();
  });
});

/**
 * A followed `--api-file` emptied while the TUI runs, at 80 columns: the header says what is
 * wrong and when the objects shown were read, whole, and keeps the node's name; the Services
 * stay; the `?` help has the whole reason with what to do.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import React from 'react';
import { afterAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/collect/session.js';
import { clockTime } from '../../src/text/clock.js';
import type { ApiProblem } from '../../src/sources/cluster-api.js';
import { closeSource, openSource } from '../../src/sources/open.js';
import { App } from '../../src/ui/App.js';
import { Header, type HeaderProps } from '../../src/ui/components/Header.js';
import { t, tf } from '../../src/text/i18n.js';
import { cellWidth } from '../../src/text/cells.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { renderApp, renderAt } from '../helpers/render.js';

const WIDTH = 80;
const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-header-api-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const firstLine = (frame: string) => frame.split('\n')[0]!;

/** A replay's header props with `apiProblem` set (the Header alone). */
function props(lang: 'en' | 'ja', apiProblem: ApiProblem): HeaderProps {
  return {
    node: 'lab-node', live: false, sourceLabel: 'replay:fixtures/lab-iptables', capturedAt: '2026-11-29T14:37:42.448Z', mode: 'iptables', evidence: 'KUBE-SERVICES in nat',
    ageSeconds: null, error: null, apiError: apiProblem.detail, apiProblem, refreshing: false, pane: 'services', width: WIDTH, lang,
  };
}

describe('Header with a refused --api-file version at 80 columns', () => {
  const keptAt = Date.parse('2026-11-29T23:41:07Z');
  it.each(['en', 'ja'] as const)('names the problem and the time of the objects shown, whole, then the node (%s)', (lang) => {
    for (const kind of ['empty', 'no-objects', 'invalid', 'gone', 'unreadable'] as const) {
      const problem: ApiProblem = { kind, detail: `a long reason naming /srv/nodescope/cluster-objects.json (${kind})`, keptAt };
      const r = renderAt(<Header {...props(lang, problem)} />, WIDTH);
      const line = firstLine(r.frame());
      r.unmount();
      const short = tf(lang, 'header.apiKept', { what: t(lang, `api.${kind}`), time: clockTime(keptAt) });
      // The reason leads (after `nodescope │ ` when the node still fits), the node's name follows whole.
      expect(line.replace(/^nodescope │ /, '').startsWith(`${short} │ ${t(lang, 'header.node')} lab-node`)).toBe(true);
      expect(line).not.toContain('/srv/nodescope');
      expect(cellWidth(line)).toBeLessThanOrEqual(WIDTH);
    }
  });
});

describe('the app over a replay whose --api-file is emptied (80 columns)', () => {
  it('keeps the Services and the node, says so in the header, and gives the whole reason under ?', async () => {
    const file = path.join(dir, 'a.json');
    writeFileSync(file, readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json')));
    const source = await openSource({ replay: fixtureDir('lab-iptables'), apiFile: file, interval: 0.02 }, { progress: () => {} });
    const session = new Session({ transport: source.transport, live: source.live, api: source.api! });
    await session.start();
    const r = await renderApp(<App session={session} lang="en" width={WIDTH} height={24} />, WIDTH, 24);
    expect(firstLine(r.frame())).toMatch(/^nodescope │ node lab-node │ /);
    const servicesBefore = r.frame().split('\n').slice(3).join('\n');
    expect(servicesBefore).toContain('web');

    const refused = new Promise<void>((resolve) => {
      const off = session.subscribe(() => {
        if (session.getState().apiProblem) (off(), resolve());
      });
    });
    writeFileSync(file, '{"items":[]}\n');
    await refused;
    await r.press(); // let the frame follow
    await new Promise((res) => setTimeout(res, 50));
    const problem = session.getState().apiProblem!;
    expect(problem.kind).toBe('no-objects');
    const frame = r.frame();
    expect(firstLine(frame)).toMatch(new RegExp(`^API: no objects in file — showing objects read ${clockTime(problem.keptAt)} │ node lab-node │ re`));
    expect(cellWidth(firstLine(frame))).toBeLessThanOrEqual(WIDTH);
    expect(frame.split('\n').slice(3).join('\n')).toContain('web');

    await r.press('?');
    // The box keeps to the pane: its title and borders drawn, the keys that do not fit cut at its bottom.
    const rows = r.frame().split('\n');
    expect(rows.length).toBeLessThanOrEqual(24);
    expect(rows[3]).toMatch(/^╭─+╮$/);
    expect(rows[4]).toMatch(/^│ Keys +│$/);
    expect(rows.filter((l) => /^╰─+╯$/.test(l))).toHaveLength(1);
    // The help box wraps the reason: read it without the box's borders and line breaks.
    const help = r.frame().split('\n').map((l) => l.replace(/^[\s│]+|[\s│]+$/g, '')).join(' ');
    expect(help).toContain(`API objects not updated: no API objects in it (an empty list) (--api-file ${file}: showing the objects read at ${clockTime(problem.keptAt)}`);
    expect(help).toContain('kubectl get services,endpointslices,pods,nodes -A -o json > FILE');
    r.unmount();
    await session.stop();
    await closeSource(source);
  });
});

/**
 * Issue 22: `--from POD|IP|node|ADDRESS` with `--to`/`--to-service` as a TUI startup option.
 * The options become `:trace` words (src/cli/tui-trace.ts); the App opens the Step pane on
 * that walk, or leaves the `:trace` line open saying which name the capture does not hold.
 */
import React from 'react';
import { describe, expect, it } from 'vitest';
import { staticSession } from '../../src/collect/session.js';
import { tuiStartTrace } from '../../src/cli/tui-trace.js';
import { UserError } from '../../src/errors.js';
import { App } from '../../src/ui/App.js';
import { snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderApp } from '../helpers/render.js';

async function opened(width: number, opts: Parameters<typeof tuiStartTrace>[0]): Promise<string> {
  const startTrace = tuiStartTrace(opts)!;
  const r = await renderApp(<App session={staticSession(await snapshotOf('lab-iptables'))} lang="en" width={width} height={30} startTrace={startTrace} />, width, 30);
  await r.press();
  const frame = r.frame();
  r.unmount();
  return frame;
}

describe.each(FRAME_WIDTHS)('the TUI opened with --from at %i columns', (width) => {
  it('--from a Pod by name --to-service NS/NAME:PORT opens the Step pane on that walk', async () => {
    const frame = await opened(width, { from: 'web-7c9d8b5f4-2xkqp', toService: 'default/web:80' });
    const pod = (await snapshotOf('lab-iptables')).api!.value!.pods.find((p) => p.meta.name === 'web-7c9d8b5f4-2xkqp')!;
    expect(frame).toMatch(new RegExp(`tcp ${pod.podIPs[0]!.replace(/\./g, '\\.')}:\\d+ → 10\\.96\\.12\\.34:80`));
    expect(frame).toMatch(/step 1 of \d+|1\/\d+/);
  });

  it('--entry host --to IP:PORT/PROTO --flags ACK walks an established packet from the node', async () => {
    const frame = await opened(width, { entry: 'host', to: '10.96.12.34:80/tcp', flags: 'ACK' });
    expect(frame).toMatch(/→ 10\.96\.12\.34:80/);
    expect(frame).toMatch(/ACK|established/i);
  });

  it('a name the capture does not hold leaves the :trace line open, naming it', async () => {
    const frame = await opened(width, { from: 'web-abc', toService: 'default/web:80' });
    expect(frame).toContain(':trace from web-abc to default/web:80▏');
    expect(frame).toContain('no Pod web-abc in the API objects');
    const svc = await opened(width, { from: 'client', toService: 'default/nope:80' });
    expect(svc, svc).toContain('no Service default/nope');
  });
});

describe('tuiStartTrace', () => {
  it('maps the trace options to :trace words, and refuses what needs no snapshot to refuse', () => {
    expect(tuiStartTrace({})).toBeUndefined();
    expect(tuiStartTrace({ from: 'ns/pod', toService: 'default/web:http' })).toEqual({ words: 'from ns/pod to default/web:http' });
    expect(tuiStartTrace({ from: '10.244.0.9', to: '10.96.0.10:53/udp', entry: 'pod', flags: 'syn' })).toEqual({ words: 'from 10.244.0.9 to 10.96.0.10:53/udp pod' });
    expect(tuiStartTrace({ from: 'outside', to: '192.168.49.2:30080/tcp', flags: 'FIN' })).toEqual({ words: 'from outside to 192.168.49.2:30080/tcp', flags: 'FIN' });
    expect(() => tuiStartTrace({ from: 'client' })).toThrow(UserError);
    expect(() => tuiStartTrace({ from: 'client', to: '10.96.12.34:80/tcp', toService: 'default/web' })).toThrow(/not both/);
    expect(() => tuiStartTrace({ to: '10.96.12.34:80/tcp' })).toThrow(/--from/);
  });
});

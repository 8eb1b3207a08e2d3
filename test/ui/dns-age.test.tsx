/**
 * Issue 22 item 7: the DNS pane and `show dns` say when a replay's recorded answers were taken
 * relative to the capture, and warn past the limit. The lab bundles' answers were recorded
 * 40–220 min after their probes: the expected minutes are read from their files here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import React from 'react';
import { describe, expect, it } from 'vitest';
import { answersAge, DNS_AGE_LIMIT_MIN } from '../../src/analysis/dns-age.js';
import { resolveServiceDns } from '../../src/dns/resolve.js';
import { dnsTransportFor } from '../../src/dns/open.js';
import { showDns } from '../../src/report/dns.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { DnsPane } from '../../src/ui/panes/DnsPane.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { FRAME_WIDTHS, renderAt } from '../helpers/render.js';

/** The bundle's capture time and its first recorded answer for `fqdn`, minutes apart, from the files. */
function minutesApart(capture: string, fqdn: string): number {
  const dir = fixtureDir(capture);
  const captured = Date.parse((JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { capturedAt: string }).capturedAt);
  const exchanges = (JSON.parse(readFileSync(path.join(dir, 'extra', 'dns.json'), 'utf8')) as { exchanges: { qname: string; startedAt: string }[] }).exchanges;
  const first = Math.min(...exchanges.filter((e) => e.qname.endsWith(fqdn)).map((e) => Date.parse(e.startedAt)));
  return Math.round((first - captured) / 60_000);
}

async function recorded(capture: string, service: string) {
  const snapshot = await snapshotOf(capture);
  const dns = dnsTransportFor(new ReplayTransport(fixtureDir(capture)));
  const result = await resolveServiceDns({ api: snapshot.api!.value!, service, dns, expect: { zone: 'cluster.local' } });
  return { snapshot, result };
}

describe.each(FRAME_WIDTHS)('the DNS pane on a replay at %i columns', (width) => {
  it.each(['lab-iptables', 'lab-nftables', 'lab-cilium'])('says how long after the capture %s recorded its answers, and warns past the limit', async (capture) => {
    const { snapshot, result } = await recorded(capture, 'default/web');
    const minutes = minutesApart(capture, 'web.default.svc.cluster.local');
    expect(minutes).toBeGreaterThan(DNS_AGE_LIMIT_MIN);
    for (const lang of ['en', 'ja'] as const) {
      const r = renderAt(<DnsPane data={{ kind: 'result', result }} width={width} height={30} focused cursor={0} lang={lang} capture={{ at: snapshot.meta.capturedAt, live: false }} />, width);
      const frame = r.frame();
      r.unmount();
      expect(frame).toContain(lang === 'en' ? `answers taken ${minutes} min after the capture` : `応答はキャプチャの ${minutes} 分後に取得`);
      if (lang === 'en') expect(frame).toContain(`more than ${DNS_AGE_LIMIT_MIN} min apart`);
    }
    // A live source asks now: no age line.
    const live = renderAt(<DnsPane data={{ kind: 'result', result }} width={width} height={30} focused cursor={0} lang="en" capture={{ at: snapshot.meta.capturedAt, live: true }} />, width);
    expect(live.frame()).not.toContain('answers taken');
    live.unmount();
  });
});

describe('show dns on a replay', () => {
  it('says when the answers were taken in text and JSON', async () => {
    const { snapshot, result } = await recorded('lab-iptables', 'default/web');
    const minutes = minutesApart('lab-iptables', 'web.default.svc.cluster.local');
    const text = showDns(snapshot, [result], 'text');
    expect(text).toMatch(new RegExp(`^answers taken ${minutes} min after the capture: more than ${DNS_AGE_LIMIT_MIN} min apart`, 'm'));
    const doc = JSON.parse(showDns(snapshot, [result], 'json')) as { dns: { answersTakenAfterCaptureMin?: number }[] };
    expect(doc.dns[0]!.answersTakenAfterCaptureMin).toBe(minutes);
  });

  it('answersAge: within the limit is no warning; before the capture is negative; none recorded is null', async () => {
    const { snapshot, result } = await recorded('lab-iptables', 'default/web');
    const first = Math.min(...result.checks.map((c) => Date.parse(c.exchange.startedAt)));
    expect(answersAge(result, new Date(first - 3 * 60_000).toISOString(), false)).toEqual({ minutes: 3, late: false });
    expect(answersAge(result, new Date(first + 30 * 60_000).toISOString(), false)).toEqual({ minutes: -30, late: true });
    expect(answersAge({ ...result, checks: [] }, snapshot.meta.capturedAt, false)).toBeNull();
    expect(answersAge(result, snapshot.meta.capturedAt, true)).toBeNull();
  });
});

/**
 * Issue 19 item 1: Cilium from the agent's listings alone (the raw maps absent or failing, an
 * old capture). Bundles are the lab-cilium capture with its bpftool dumps taken out and the
 * listings this project wrote (fixtures/cilium-maps, or the texts below) put in, read through
 * the real replay pipeline.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { mergeCiliumListings } from '../../src/analysis/cilium-listings.js';
import { parseCiliumBpfLbList } from '../../src/parsers/cilium-bpf-lb-list.js';
import { parseCiliumServiceList } from '../../src/parsers/cilium-service-list.js';
import { CILIUM_TABWRITER, tabwrite } from '../../src/parsers/cilium-tabwriter.js';
import { sha256 } from '../../src/sources/bundle.js';
import { showLb } from '../../src/report/lb.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { traceFromSnapshot } from '../../src/trace/choose-engine.js';
import { copyFixture, fixtureDir } from '../helpers/fixtures.js';
import { openSource } from '../../src/sources/open.js';
import { loadSnapshot } from '../../src/collect/session.js';
import type { NodeSnapshot } from '../../src/model/snapshot.js';

/** A bundle as `--replay DIR` opens it: its recorded cilium-agent probes replayed too. */
async function snapshotOfDir(dir: string): Promise<NodeSnapshot> {
  const source = await openSource({ replay: dir });
  const { snapshot } = await loadSnapshot({ transport: source.transport, live: false, ...(source.apiText !== undefined ? { apiText: source.apiText } : {}), ...(source.ciliumAgent ? { ciliumAgent: source.ciliumAgent } : {}) });
  return snapshot;
}

const MAP_PROBES = /^bpf-lb[46]-/;
const fixtureText = (f: string) => readFileSync(path.join(fixtureDir('cilium-maps'), f), 'utf8');

/** lab-cilium without its bpftool dumps, with `cilium-dbg bpf lb list` / `service list` outputs added. */
function listingBundle(o: { lbList?: string; serviceList?: string; keepMaps?: boolean }): string {
  const dir = copyFixture('lab-cilium');
  const manifestFile = path.join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { capturedAt: string; probes: { id: string; stdoutFile: string; stderrFile: string }[] };
  if (!o.keepMaps) {
    for (const p of manifest.probes.filter((x) => MAP_PROBES.test(x.id))) {
      rmSync(path.join(dir, p.stdoutFile));
      rmSync(path.join(dir, p.stderrFile));
    }
    manifest.probes = manifest.probes.filter((p) => !MAP_PROBES.test(p.id));
  }
  const add = (id: string, argv: string[], stdout: string) => {
    writeFileSync(path.join(dir, 'probes', `${id}.stdout`), stdout);
    writeFileSync(path.join(dir, 'probes', `${id}.stderr`), '');
    manifest.probes.push({
      id,
      argv,
      executedArgv: argv,
      status: 'ok',
      exitCode: 0,
      startedAt: manifest.capturedAt,
      durationMs: 5,
      stdoutFile: `probes/${id}.stdout`,
      stderrFile: `probes/${id}.stderr`,
      sha256: { stdout: sha256(stdout), stderr: sha256('') },
    } as never);
  };
  if (o.lbList !== undefined) add('cilium-bpf-lb-list', ['cilium-dbg', 'bpf', 'lb', 'list'], o.lbList);
  if (o.serviceList !== undefined) add('cilium-service-list', ['cilium-dbg', 'service', 'list'], o.serviceList);
  writeFileSync(manifestFile, JSON.stringify(manifest, null, 1));
  return dir;
}

/** `cilium-dbg bpf lb list` rows as the agent's TablePrinter writes them (key, entries). */
const lbListing = (header: string, groups: [string, string[]][]) =>
  tabwrite(`SERVICE ADDRESS\t${header}\n${groups.flatMap(([k, es]) => es.map((e, i) => `${i === 0 ? k : ''}\t${e}\t\n`)).join('')}`, CILIUM_TABWRITER);

/** `cilium-dbg service list` rows: [id, frontend, type, backends]. */
const serviceListing = (rows: [number, string, string, string[]][]) =>
  tabwrite(
    `ID\tFrontend\tService Type\tBackend\t\n${rows.flatMap(([id, fe, type, bes]) => (bes.length ? bes : ['']).map((b, i) => (i === 0 ? `${id}\t${fe}\t${type}\t${b}\t\n` : `\t\t\t${b}\t\n`))).join('')}`,
    CILIUM_TABWRITER,
  );

describe('issue 19 item 1 — cilium-dbg bpf lb list prints no count: unknown is not zero', () => {
  it('fixtures/cilium-maps/bpf-lb-list.txt alone: a Service with listed backends is `unknown`, never "count 0"', async () => {
    const snap = await snapshotOfDir(listingBundle({ lbList: fixtureText('bpf-lb-list.txt') }));
    expect(snap.lb?.value?.source).toBe('bpf-lb-list');
    const r = traceFromSnapshot(snap, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(r.verdict.kind).toBe('unknown');
    const text = runTraceCommand(snap, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(text).not.toMatch(/count 0/);
    expect(text).toMatch(/backend count is unknown, not zero/);
    // The candidates are named, and what would decide.
    for (const ep of ['10.244.0.23:8080', '10.244.0.31:8080', '10.244.1.15:8080']) expect(text).toContain(ep);
    expect(text).toContain('cilium-dbg service list');
  });

  it('a frontend with no slot in the listing has no backend: dropped/rejected (certain: count ≤ slots)', async () => {
    const snap = await snapshotOfDir(listingBundle({ lbList: fixtureText('bpf-lb-list.txt') }));
    const r = traceFromSnapshot(snap, { to: '10.96.50.5:80/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(['rejected', 'dropped']).toContain(r.verdict.kind);
    expect(r.steps.at(-1)?.reason).toMatch(/no backend slot in the listing/);
  });

  it('joined with fixtures/cilium-maps/service-list.txt: only active backends take new flows', async () => {
    const snap = await snapshotOfDir(listingBundle({ lbList: fixtureText('bpf-lb-list.txt'), serviceList: fixtureText('service-list.txt') }));
    expect(snap.lb?.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
    const web = snap.lb?.value?.services.find((s) => s.frontend.ip === '10.96.12.34');
    expect([web?.count, web?.qcount]).toEqual([2, 1]);
    const r = traceFromSnapshot(snap, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(r.verdict.kind).toBe('forwarded');
    expect(r.verdict.endpoint).toBe('10.244.0.23:8080');
    const choice = r.steps.find((s) => s.branches !== null);
    expect(choice?.branches?.map((b) => b.endpoint)).toEqual(['10.244.0.23:8080', '10.244.0.31:8080']);
    expect(() => traceFromSnapshot(snap, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23', endpoint: '10.244.1.15:8080' })).toThrow(UserError);
    expect(showLb(snap, 'text')).toMatch(/10\.96\.12\.34:80\/TCP .* count 2 qcount 1/);
  });
});

describe('cilium#3905, cilium#29581, cilium#31503: every bpf lb list era; master rows are not backends', () => {
  it('2018 listing: the `0.0.0.0:0 (0)` master row is the frontend, not a backend, wherever it sits', () => {
    const text = lbListing('BACKEND ADDRESS', [
      ['10.97.1.1:8080', ['10.32.0.7:80 (14)', '0.0.0.0:0 (0)', '10.32.0.9:80 (14)']],
      ['10.97.1.2:53', ['0.0.0.0:0 (0)', '10.32.0.4:53 (11)']],
    ]);
    const r = parseCiliumBpfLbList(text, 't');
    expect(r.diagnostics).toEqual([]);
    expect(r.value.services.map((s) => [s.id, s.slots.map((x) => x.backend?.ip)])).toEqual([
      [14, ['10.32.0.7', '10.32.0.9']],
      [11, ['10.32.0.4']],
    ]);
  });

  it('`[FLAGS: …]` master rows (~1.6) and ≤1.14 continuation rows out of slot order', () => {
    const text = lbListing('BACKEND ADDRESS (REVNAT_ID) (SLOT)', [
      ['10.97.2.1:9090', ['10.32.1.3:9090 (21) (2)', '0.0.0.0:0 (21) (0) [FLAGS: NONE]', '10.32.1.2:9090 (21) (1)']],
    ]);
    const r = parseCiliumBpfLbList(text, 't');
    expect(r.diagnostics).toEqual([]);
    const svc = r.value.services[0]!;
    expect(svc).toMatchObject({ id: 21, type: null, flags: null, count: null });
    expect(svc.slots.map((x) => [x.slot, x.backend?.ip])).toEqual([
      [1, '10.32.1.2'],
      [2, '10.32.1.3'],
    ]);
  });

  it('1.15+ `/UDP` keys out of order, an L7 frontend with its proxy port: the walk redirects to the proxy', async () => {
    const lbList = lbListing('BACKEND ADDRESS (REVNAT_ID) (SLOT)', [
      ['10.96.0.10:53/UDP (2)', ['10.244.0.3:53/UDP (5) (2)']],
      ['10.96.12.34:80/TCP (0)', ['0.0.0.0:0 (1) (0) [ClusterIP, non-routable, l7-load-balancer] (L7LB Proxy Port: 14127)']],
      ['10.96.0.10:53/UDP (0)', ['0.0.0.0:0 (5) (0) [ClusterIP, non-routable] ']],
      ['10.96.0.10:53/UDP (1)', ['10.244.0.2:53/UDP (5) (1)']],
    ]);
    const snap = await snapshotOfDir(listingBundle({ lbList }));
    const dns = snap.lb?.value?.services.find((s) => s.frontend.protocol === 'UDP');
    expect(dns?.slots.map((s) => s.slot)).toEqual([1, 2]);
    const r = traceFromSnapshot(snap, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(r.verdict.kind).toBe('local');
    expect(r.verdict.reason).toMatch(/L7 proxy \(proxy port 14127\)/);
    expect(showLb(snap, 'text')).toMatch(/10\.96\.12\.34:80\/TCP .*L7 proxy port 14127/);
    expect(JSON.parse(showLb(snap, 'json')).lb.frontends.find((f: { ip: string }) => f.ip === '10.96.12.34').l7ProxyPort).toBe(14127);
  });
});

describe('cilium#18814, cilium#25863, cilium#31840: service list states — only active backends take new flows', () => {
  const lbList = lbListing('BACKEND ADDRESS (REVNAT_ID) (SLOT)', [
    ['10.96.12.34:80/TCP (0)', ['0.0.0.0:0 (1) (0) [ClusterIP, non-routable] ']],
    ['10.96.12.34:80/TCP (1)', ['10.244.0.23:8080/TCP (1) (1)']],
    ['10.96.12.34:80/TCP (2)', ['10.244.0.31:8080/TCP (1) (2)']],
  ]);

  it('a frontend with only terminating backends drops new flows; established ones continue', async () => {
    const serviceList = serviceListing([[1, '10.96.12.34:80/TCP', 'ClusterIP', ['1 => 10.244.0.23:8080/TCP (terminating)', '2 => 10.244.0.31:8080/TCP (terminating)']]]);
    const snap = await snapshotOfDir(listingBundle({ lbList, serviceList }));
    const r = traceFromSnapshot(snap, { to: '10.96.12.34:80/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(['dropped', 'rejected']).toContain(r.verdict.kind);
    expect(r.steps.at(-1)?.reason).toMatch(/count 0.*2 slots after count hold terminating/);
    expect(r.notes.join('\n')).toMatch(/established ones continue/);
  });

  it('the listings disagree (a backend in one only; active backends not in slots 1..count): said, naming both', async () => {
    const serviceList = serviceListing([[1, '10.96.12.34:80/TCP', 'ClusterIP', ['1 => 10.244.0.23:8080/TCP (terminating)', '2 => 10.244.0.31:8080/TCP (active)', '3 => 10.244.9.9:8080/TCP (active)']]]);
    const m = mergeCiliumListings(parseCiliumBpfLbList(lbList, 'l').value, parseCiliumServiceList(serviceList, 's').value, { lbList: 'l', serviceList: 's' });
    const msgs = m.diagnostics.map((d) => d.message);
    expect(msgs.some((x) => /service list` has backend 10\.244\.9\.9:8080 .*bpf lb list` has no slot/.test(x))).toBe(true);
    expect(msgs.some((x) => /not hold them in slots 1\.\.1: slot 1 10\.244\.0\.23:8080 terminating, slot 2 10\.244\.0\.31:8080 active/.test(x))).toBe(true);
    expect(m.table?.disagreements?.length).toBe(2);
  });
});

describe('issue 19 item 1 — maps and listings disagree: said, naming both', () => {
  it('the lab maps (bpftool) with a service list that has another backend: a warning and a walk note', async () => {
    const serviceList = fixtureText('service-list.txt').replace('10.244.0.52:8443/TCP (active)', '10.244.0.53:8443/TCP (active)');
    const snap = await snapshotOfDir(listingBundle({ keepMaps: true, serviceList }));
    expect(snap.lb?.value?.source).toBe('bpf-maps');
    const d = snap.lb?.diagnostics.filter((x) => x.code === 'maps-listing-disagree') ?? [];
    expect(d.map((x) => x.text)).toEqual(['10.96.40.7:443/TCP']);
    expect(d[0]?.message).toMatch(/pinned maps \(bpftool\) has backends \[10\.244\.0\.52:8443\], `cilium-dbg service list` \[10\.244\.0\.53:8443\]/);
    const r = traceFromSnapshot(snap, { to: '10.96.40.7:443/tcp', entry: 'pod', from: '10.244.0.23' });
    expect(r.verdict.endpoint).toBe('10.244.0.52:8443');
    expect(r.notes.join('\n')).toMatch(/sources disagree on 10\.96\.40\.7:443\/TCP/);
  });
});

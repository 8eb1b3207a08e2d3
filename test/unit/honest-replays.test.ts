/**
 * Issue 19 item 11 — honest replays: what a bundle does not hold is "not in this capture",
 * never a fact about the node; a DNS capture that cannot be read is said; `show rules
 * --service` filters or refuses, never ignores the option.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { ReplayDnsTransport } from '../../src/dns/replay.js';
import { dig, digText } from '../../src/dns/dig.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { showRules } from '../../src/report/rules.js';
import { buildLbView } from '../../src/analysis/lb-view.js';
import { copyFixture, snapshotOf, snapshotOfDir } from '../helpers/fixtures.js';

describe('issue 19 item 11: a probe missing from a bundle is "not in this capture"', () => {
  it('a bundle without the Cilium map dumps says so, not "bpftool is not installed on the node"', async () => {
    const dir = copyFixture('lab-cilium');
    const manifestFile = path.join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { probes: { id: string }[] };
    manifest.probes = manifest.probes.filter((p) => !/^bpf-lb[46]-/.test(p.id) && p.id !== 'nft-json' && p.id !== 'nft-text');
    writeFileSync(manifestFile, JSON.stringify(manifest));
    const snap = await snapshotOfDir(dir);
    const view = buildLbView(snap);
    expect(view.status).toBe('absent');
    expect(view.absentReason).toMatch(/not in this capture/);
    expect(view.absentReason).not.toMatch(/not found|not installed/);
    expect(snap.nft?.error).toBe('not in this capture');
    expect(JSON.stringify(snap, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toMatch(/is not installed on the node/);
  });
});

describe('issue 19 item 11: an extra/dns.json that cannot be read is a diagnostic', () => {
  const api = () => parseK8sObjects(readFileSync(path.join(copyFixture('lab-iptables'), 'api.json'), 'utf8'), 'api').value;

  it('a damaged line is named in the note dig prints, with its line number', async () => {
    const dir = copyFixture('lab-iptables');
    const file = path.join(dir, 'extra', 'dns.json');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = '{"qname": "web.default.svc.cluster.local", broken';
    writeFileSync(file, lines.join('\n'));
    const dns = ReplayDnsTransport.fromBundle(dir);
    expect(dns.diagnostics.map((d) => [d.code, d.line])).toContainEqual(['not-json', 2]);
    const r = await dig({ name: 'nothing.default.svc.cluster.local', dns, api: api() });
    expect(digText(r)).toMatch(/NOTE: .*could not all be read — .*dns\.json:2: not a JSON exchange/);
  });

  it('a dns.json that is not a readable file (a directory) is a diagnostic, not a crash', async () => {
    const dir = copyFixture('lab-iptables');
    const file = path.join(dir, 'extra', 'dns.json');
    rmSync(file);
    mkdirSync(file);
    const dns = ReplayDnsTransport.fromBundle(dir);
    expect(dns.diagnostics.map((d) => d.code)).toEqual(['unreadable']);
    expect(dns.note).toMatch(/could not all be read — .*dns\.json: cannot read/);
  });
});

describe('issue 19 item 11: show rules --service filters or is refused, never ignored', () => {
  it('iptables: only rules naming default/web (KUBE-SERVICES entries, its KUBE-SVC and KUBE-SEP chains)', async () => {
    const snap = await snapshotOf('lab-iptables');
    const all = JSON.parse(showRules(snap, 'json'));
    const doc = JSON.parse(showRules(snap, 'json', { service: 'default/web' }));
    const rules = doc.rulesets.flatMap((rs: { tables: { chains: { name: string; rules: { comment: string | null; raw: string }[] }[] }[] }) => rs.tables.flatMap((t) => t.chains.flatMap((c) => c.rules.map((r) => ({ chain: c.name, ...r })))));
    const count = (d: typeof all) => JSON.stringify(d.rulesets).length;
    expect(count(doc)).toBeLessThan(count(all));
    expect(rules.length).toBeGreaterThan(0);
    for (const r of rules) expect(`${r.comment} ${r.raw}`).toMatch(/default\/web[:\s"]/);
    const chains = new Set(rules.map((r: { chain: string }) => r.chain));
    expect([...chains].some((c) => String(c).startsWith('KUBE-SVC-'))).toBe(true);
    expect([...chains].some((c) => String(c).startsWith('KUBE-SEP-'))).toBe(true);
    expect(chains.has('KUBE-SERVICES')).toBe(true);
  });

  it('nftables: the Service chains whole, and only its set elements', async () => {
    const snap = await snapshotOf('lab-nftables');
    const text = showRules(snap, 'text', { service: 'default/web' });
    expect(text).toContain('service-SUSTUHLJ-default/web/tcp/http');
    expect(text).not.toMatch(/default\/api|kube-system\/kube-dns/);
  });

  it('a Service nothing names, or a malformed name: refused with a UserError', async () => {
    const snap = await snapshotOf('lab-iptables');
    expect(() => showRules(snap, 'text', { service: 'default/nope' })).toThrow(UserError);
    expect(() => showRules(snap, 'text', { service: 'web' })).toThrow(UserError);
    // `default/web` does not name `default/web2` — the whole name must stand.
    expect(() => showRules(snap, 'text', { service: 'default/we' })).toThrow(UserError);
  });
});

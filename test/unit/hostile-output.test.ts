/**
 * Issue 24, item 1: a hostile capture bundle (escape sequences, C1 controls and bidi
 * overrides in an iptables and an nft comment, a Service's namespace and name, an endpoint's
 * nodeName, a DNS CNAME, the manifest's node name and a conntrack line that gets a diagnostic)
 * through every `show` kind, `dig` and `trace` of the real binary: nothing raw reaches stdout
 * or stderr, the payload shows escaped, and JSON keeps the exact values.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { HOSTILE, makeHostileBundle, PAYLOAD_SHOWN, RAW_CONTROL } from '../helpers/hostile-bundle.js';

// NODESCOPE_BIN: run the same sweep against another build (e.g. main's, to see it fail there).
const binary = process.env.NODESCOPE_BIN ?? path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
let bundle = '';
const run = (...args: string[]) => spawnSync('node', [binary, ...args, '--replay', bundle], { encoding: 'utf8', input: '', env: { ...process.env, LANG: 'C.UTF-8' } });

beforeAll(() => {
  bundle = makeHostileBundle();
});
afterAll(() => rmSync(bundle, { recursive: true, force: true }));

function expectClean(r: ReturnType<typeof run>): void {
  expect(r.stdout, 'stdout').not.toMatch(RAW_CONTROL);
  expect(r.stderr, 'stderr').not.toMatch(RAW_CONTROL);
}

describe('a hostile bundle through every text output of the binary', () => {
  it.each([
    ['show services', ['show', 'services'], [HOSTILE.serviceName, HOSTILE.serviceNamespace]],
    ['show services -o wide', ['show', 'services', '-o', 'wide'], [HOSTILE.serviceName, HOSTILE.serviceNamespace, HOSTILE.nodeName]],
    // YAML escapes by its own rules (the payload's form differs): only clean is checked.
    ['show services -o yaml', ['show', 'services', '-o', 'yaml'], []],
    // show rules reads no conntrack table (issue 23: each command reads what it needs); show conntrack prints that payload.
    ['show rules', ['show', 'rules'], [HOSTILE.iptablesComment, HOSTILE.nftComment]],
    ['show lb', ['show', 'lb'], []],
    ['show conntrack', ['show', 'conntrack'], [HOSTILE.conntrackLine]],
    ['show dns', ['show', 'dns', '--service', 'default/web'], [HOSTILE.cname]],
    ['show compare', ['show', 'compare'], [`${HOSTILE.serviceNamespace}/${HOSTILE.serviceName}`]],
    ['dig', ['dig', 'web.default.svc.cluster.local'], [HOSTILE.cname]],
    ['trace', ['trace', '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp'], []],
  ])('%s: no raw control, bidi or format character; the payloads show escaped', (_what, args, payloads) => {
    const r = run(...args, ...(args.includes('-o') ? [] : ['-o', 'text']));
    expect(r.status, r.stderr).toBe(0);
    expectClean(r);
    // The manifest's node name heads every show/trace document, its newline escaped too.
    if (args[0] !== 'dig' && !args.includes('yaml')) expect(r.stdout).toContain(`node lab-node${PAYLOAD_SHOWN}\\nforged line (`);
    for (const p of payloads) expect(r.stdout).toContain(p.replace(/x\x1b[^]*?evil/g, PAYLOAD_SHOWN).replace(/\n/g, '\\n').replace(/\.$/, ''));
    // A newline inside a value never starts a line of its own.
    expect(r.stdout + r.stderr).not.toMatch(/^!? ?forged/m);
  });

  it('diagnose -o text: the hostile names show escaped, no forged line (exit 1: default/empty has no endpoint)', () => {
    const r = run('diagnose', '-o', 'text');
    expect(r.status, r.stderr).toBe(1);
    expectClean(r);
    expect(r.stdout).toContain(`node lab-node${PAYLOAD_SHOWN}\\nforged line (`);
    expect(r.stdout).toContain(`${HOSTILE.serviceNamespace}/${HOSTILE.serviceName}`.replace(/x\x1b[^]*?evil/g, PAYLOAD_SHOWN).replace(/\n/g, '\\n'));
    expect(r.stdout + r.stderr).not.toMatch(/^!? ?forged/m);
  });

  it('an error quoting the API on stderr (the hint lists a hostile Service name) is escaped', () => {
    const r = run('show', 'services', '--service', `${HOSTILE.serviceNamespace.slice(0, 2)}/svc`);
    expect(r.status).toBe(1);
    expectClean(r);
    expect(r.stderr).toContain(`ns${PAYLOAD_SHOWN}/svc${PAYLOAD_SHOWN}`);
  });

  it.each([
    ['show services', ['show', 'services']],
    ['show rules', ['show', 'rules']],
    ['show conntrack', ['show', 'conntrack']],
    ['show dns', ['show', 'dns', '--service', 'default/web']],
    ['show compare', ['show', 'compare']],
    ['dig', ['dig', 'web.default.svc.cluster.local']],
    ['trace', ['trace', '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp']],
  ])('%s -o json: no raw control character, and the exact hostile values parse back', (_what, args) => {
    const r = run(...args, '-o', 'json');
    expect(r.status, r.stderr).toBe(0);
    expectClean(r);
    const doc = JSON.parse(r.stdout) as { node?: string };
    if (args[0] !== 'dig') expect(doc.node).toBe(HOSTILE.manifestNode);
    const values = JSON.stringify(doc);
    // Each value exactly, JSON-escaped (inside a longer string for a rule's text).
    const holds = (v: string) => expect(values).toContain(JSON.stringify(v).slice(1, -1));
    if (args[1] === 'rules') [HOSTILE.iptablesComment, HOSTILE.nftComment, HOSTILE.traceComment].forEach(holds);
    if (args[1] === 'services') [HOSTILE.nodeName, HOSTILE.serviceName, HOSTILE.serviceNamespace].forEach(holds);
    if (args[0] === 'trace') holds(HOSTILE.traceComment);
    if (args[0] === 'dig' || args[1] === 'dns') holds(HOSTILE.cname);
  });
});

/**
 * Lab, issue 24 item 1: the repro in a real network namespace. An iptables rule in
 * nat KUBE-SERVICES and an nft rule carry comments with OSC 0 (retitle), OSC 52 (clipboard),
 * CSI 2J (clear screen), a C1 CSI and a bidi override; `show rules --netns … -o text` prints
 * them escaped and nothing raw, `-o json` keeps the exact bytes (JSON-escaped).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { labAvailable } from '../helpers/lab.js';
import { PAYLOAD, PAYLOAD_SHOWN, RAW_CONTROL } from '../helpers/hostile-bundle.js';

const PREFIX = 'nsesc-';
const NS = `${PREFIX}node-${process.pid}`;
const binary = process.env.NODESCOPE_BIN ?? path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const IPT_COMMENT = `ipt ${PAYLOAD}`;
const NFT_COMMENT = `nft ${PAYLOAD}`;
const labOk = labAvailable(['ip', 'iptables', 'nft']);

function inNs(args: readonly string[], input?: string) {
  const r = spawnSync('ip', ['netns', 'exec', NS, ...args], { encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
  if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stderr}`);
  return r;
}

const show = (format: 'text' | 'json') => spawnSync('node', [binary, 'show', 'rules', '--netns', NS, '-o', format], { encoding: 'utf8', input: '' });

describe.skipIf(!labOk)('a hostile comment in a live namespace (show rules --netns)', () => {
  beforeAll(() => {
    spawnSync('ip', ['netns', 'del', NS]);
    expect(spawnSync('ip', ['netns', 'add', NS]).status).toBe(0);
    inNs(['iptables', '-t', 'nat', '-N', 'KUBE-SERVICES']);
    inNs(['iptables', '-t', 'nat', '-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', IPT_COMMENT, '-j', 'RETURN']);
    // nft reads a quoted string with any byte but `"` and newline.
    inNs(['nft', '-f', '-'], `table inet hostile {\n chain input {\n  type filter hook input priority 0; policy accept;\n  accept comment "${NFT_COMMENT}"\n }\n}\n`);
  });
  afterAll(() => {
    spawnSync('ip', ['netns', 'del', NS]);
  });

  it('the kernel really holds the raw bytes (the premise of the test)', () => {
    expect(inNs(['iptables-save', '-t', 'nat']).stdout).toContain(IPT_COMMENT);
    expect(inNs(['nft', 'list', 'table', 'inet', 'hostile']).stdout).toContain(NFT_COMMENT);
  });

  it('-o text shows both comments escaped and writes no raw control, C1 or bidi character', () => {
    const r = show('text');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stdout).toContain(`ipt ${PAYLOAD_SHOWN}`);
    expect(r.stdout).toContain(`nft ${PAYLOAD_SHOWN}`);
  });

  it('-o json keeps the exact comments (JSON escapes, nothing raw)', () => {
    const r = show('json');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    const doc = JSON.parse(r.stdout) as {
      rulesets: Array<{ tables: Array<{ name: string; chains: Array<{ name: string; rules: Array<{ comment: string | null }> }> }> }>;
      nft: { tables: Array<{ name: string; chains: Array<{ rules: Array<{ comment: string | null }> }> }> } | null;
    };
    const ipt = doc.rulesets.flatMap((rs) => rs.tables).filter((t) => t.name === 'nat').flatMap((t) => t.chains).find((c) => c.name === 'KUBE-SERVICES');
    expect(ipt?.rules.map((x) => x.comment)).toEqual([IPT_COMMENT]);
    const nft = doc.nft?.tables.find((t) => t.name === 'hostile');
    expect(nft?.chains.flatMap((c) => c.rules.map((x) => x.comment))).toEqual([NFT_COMMENT]);
  });
});

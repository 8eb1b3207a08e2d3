/**
 * Issue 19 item 10 on the real nft (netavark#1303): the rules are loaded into a network
 * namespace's kernel and listed with the lab's own `nft -j` (1.0.6 prints fib flags as a list
 * even for one flag, and a flag mask as a plain list); nodescope must read every rule without a
 * diagnostic, print each as `nft list ruleset` does, and name the nft that wrote the JSON.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labAvailable } from '../helpers/lab.js';
import { findChain } from '../../src/model/nftables.js';
import { nftMetainfoOf, parseNftJson } from '../../src/parsers/nft-json.js';
import { formatRule } from '../../src/parsers/nft-format.js';

const PREFIX = 'nsnd-';
const NS = `${PREFIX}drift`;
const available = labAvailable(['nft', 'ip']);

function run(argv: string[], input?: string): string {
  const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
  if (r.status !== 0) throw new Error(`${argv.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const RULES = ['tcp flags & (fin | syn | rst | ack) == syn drop', 'fib saddr . iif oif missing drop', 'fib daddr type local accept', 'fib daddr . iif type != { local, broadcast } counter packets 0 bytes 0 drop'];

describe.skipIf(!available)('netavark#1303: fib flags and flag masks as the real nft prints them in JSON', () => {
  beforeAll(() => {
    spawnSync('ip', ['netns', 'del', NS]);
    run(['ip', 'netns', 'add', NS]);
    run(['ip', 'netns', 'exec', NS, 'nft', '-f', '-'], `table inet drift {\n\tchain in {\n${RULES.map((r) => `\t\t${r}\n`).join('')}\t}\n}\n`);
  });
  afterAll(() => {
    spawnSync('ip', ['netns', 'del', NS]);
  });

  it('every rule reads without a diagnostic and prints back as nft lists it', () => {
    const json = run(['ip', 'netns', 'exec', NS, 'nft', '-j', 'list', 'ruleset']);
    const listed = run(['ip', 'netns', 'exec', NS, 'nft', 'list', 'ruleset'])
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.includes('fib') || l.includes('tcp flags'));
    const r = parseNftJson(json, 'nft -j');
    expect(r.diagnostics).toEqual([]);
    const printed = findChain(r.value.tables[0]!, 'in')!.rules.map((x) => formatRule(x).replace(/ # handle \d+$/, ''));
    expect(printed).toEqual(listed);
    const version = run(['nft', '--version']).match(/v(\d+\.\d+\.\d+)/)?.[1];
    expect(nftMetainfoOf(r.value)).toMatchObject({ version, jsonSchemaVersion: 1 });
  });
});

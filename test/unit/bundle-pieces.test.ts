/**
 * Reading a bundle file in line-aligned pieces (issue 10: a replay's 220 MB conntrack
 * table is parsed without ever being held whole): the pieces join to the file's text,
 * whatever the piece size and wherever a multi-byte character or a line falls.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBundleFile, readBundleFilePieces, type Bundle } from '../../src/sources/bundle.js';
import { runProbes } from '../../src/sources/probe-runner.js';
import { ReplayTransport } from '../../src/sources/replay.js';
import { loadSnapshot, Session } from '../../src/collect/session.js';
import { fixtureDir } from '../helpers/fixtures.js';

/** A bundle directory holding one file `f` with `text` (only `dir` of the bundle is read). */
function bundleWith(text: string): Bundle {
  const dir = mkdtempSync(path.join(tmpdir(), 'ns-pieces-'));
  writeFileSync(path.join(dir, 'f'), text);
  return { dir } as Bundle;
}

const TEXTS: Readonly<Record<string, string>> = {
  'lines with a final newline': 'ipv4 2 tcp 6 10 ESTABLISHED\nsecond line\nthird\n',
  'no final newline': 'a\nbb\nccc',
  'multi-byte characters across every boundary': 'héllo → wörld\nnode-ノード\n€€€€\nend',
  'a line longer than a piece': `${'x'.repeat(50)}\nshort\n${'y'.repeat(23)}`,
  'blank lines': '\n\n\nx\n\n',
  empty: '',
};

describe('readBundleFilePieces', () => {
  for (const [name, text] of Object.entries(TEXTS)) {
    it(`${name}: pieces of every small size join to the file's text, each but the last ending a line`, () => {
      const bundle = bundleWith(text);
      for (let size = 1; size <= 9; size++) {
        const pieces = [...readBundleFilePieces(bundle, 'f', size)];
        expect(pieces.join(''), `size ${size}`).toBe(readBundleFile(bundle, 'f'));
        for (const p of pieces.slice(0, -1)) expect(p.endsWith('\n'), `size ${size}: ${JSON.stringify(p)}`).toBe(true);
        expect(pieces.every((p) => p !== '')).toBe(true);
      }
    });
  }

  it('a line past maxLineChars is cut between characters into pieces of at least that many (multi-byte text, ASCII first)', () => {
    const text = `${'a'.repeat(30)}\n${'ノé😀x'.repeat(40)}\nshort\n${'b'.repeat(70)}`;
    const bundle = bundleWith(text);
    for (let size = 1; size <= 13; size++) {
      const pieces = [...readBundleFilePieces(bundle, 'f', size, 16)];
      expect(pieces.join(''), `size ${size}`).toBe(text);
      for (const p of pieces.slice(0, -1)) expect(p.endsWith('\n') || p.length >= 16, `size ${size}: ${JSON.stringify(p)}`).toBe(true);
      expect(pieces.some((p) => !p.endsWith('\n') && p !== pieces.at(-1)), `size ${size}: a long line is cut`).toBe(true);
    }
  });

  it('yields nothing for an absent file', () => {
    expect([...readBundleFilePieces(bundleWith('x'), 'absent')]).toEqual([]);
  });
});

describe('replay transport, stdout in pieces', () => {
  it('answers with pieces only when asked, and they join to the recorded stdout', async () => {
    const transport = new ReplayTransport(fixtureDir('lab-iptables'));
    const [whole] = await runProbes(transport, { ids: ['conntrack'] });
    const [pieced] = await runProbes(transport, { ids: ['conntrack'], stdoutAsPieces: ['conntrack'] });
    expect(whole!.result.stdoutPieces).toBeUndefined();
    expect(whole!.result.stdout).toMatch(/src=/);
    expect(pieced!.result.stdout).toBe('');
    expect([...pieced!.result.stdoutPieces!()].join('')).toBe(whole!.result.stdout);
    expect(pieced!.status).toBe(whole!.status);
    // Other probes of the same call are read whole.
    const [rules] = await runProbes(transport, { ids: ['iptables-save'], stdoutAsPieces: ['conntrack'] });
    expect(rules!.result.stdoutPieces).toBeUndefined();
    expect(rules!.result.stdout).toMatch(/^\*/m);
  });
});

describe('session over a replay', () => {
  it('reads the conntrack table, the nft rulesets and the iptables dumps in pieces and ends with the one-shot snapshot', async () => {
    const replay = new ReplayTransport(fixtureDir('lab-iptables'));
    const pieced: string[] = [];
    const transport = {
      kind: replay.kind,
      label: replay.label,
      exec: (argv: readonly string[], o: Parameters<ReplayTransport['exec']>[1]) => replay.exec(argv, o),
      execInPieces: async (argv: readonly string[], o: Parameters<ReplayTransport['exec']>[1]) => {
        const r = await replay.execInPieces(argv, o);
        if (r.stdoutPieces) pieced.push(argv.join(' '));
        return r;
      },
      close: async () => {},
    };
    const options = { transport, live: false, apiText: replay.apiText()! };
    const { snapshot: once } = await loadSnapshot(options);
    expect(pieced).toEqual([]); // a one-shot load reads whole texts
    const session = new Session(options);
    await session.start();
    expect(pieced.sort()).toEqual(['conntrack -L -o extended', 'ip6tables-save -c', 'iptables-legacy-save -c', 'iptables-save -c', 'nft -j list ruleset', 'nft list ruleset']);
    expect(session.getState().snapshot).toEqual(once);
    expect(session.getState().snapshot?.conntrack?.value?.entries.length).toBeGreaterThan(0);
    await session.stop();
  });
});

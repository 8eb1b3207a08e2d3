/** `completion`, `help CMD`, examples in every `--help` (issue 22 item 3), on the real binary and in a real bash. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { addExamples, EXAMPLES } from '../../src/cli/help.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });
const bashAvailable = spawnSync('bash', ['--version']).status === 0;

/** What the generated bash completion offers for `line` (the cursor at its end; a trailing space starts a new word). */
function complete(script: string, line: string): string[] {
  const words = line.split(' ');
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'nodescope-compl-')), 'c.bash');
  writeFileSync(file, script);
  const quoted = words.map((w) => `'${w}'`).join(' ');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', `source '${file}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; COMP_LINE='${line}'; _nodescope; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.split('\n').filter((l) => l !== '');
}

describe('nodescope completion', () => {
  it.skipIf(!bashAvailable)('bash: the script loads into bash and completes subcommands, flags and their choices', () => {
    const r = run('completion', 'bash');
    expect(r.status, r.stderr).toBe(0);
    const script = r.stdout;
    expect(complete(script, 'nodescope ')).toEqual(expect.arrayContaining(['show', 'trace', 'dig', 'diagnose', 'capture', 'tour', 'fleet', 'completion', 'dash', 'replay']));
    expect(complete(script, 'nodescope sh')).toEqual(['show']);
    expect(complete(script, 'nodescope show ')).toEqual(['services', 'rules', 'lb', 'conntrack', 'dns', 'compare']);
    expect(complete(script, 'nodescope show services -o ')).toEqual(['text', 'wide', 'json', 'yaml', 'name']);
    expect(complete(script, 'nodescope show services --kube')).toEqual(['--kubeconfig']);
    expect(complete(script, 'nodescope trace --ent')).toEqual(['--entry']);
    expect(complete(script, 'nodescope trace --entry ')).toEqual(['pod', 'host', 'external']);
    expect(complete(script, 'nodescope --replay x fleet ')).toEqual(['capture', 'diagnose']);
    expect(complete(script, 'nodescope fleet capture --sel')).toEqual(['--selector']);
    expect(complete(script, 'nodescope tour ')).toEqual(['no-endpoints', 'second-packet', 'where-rewritten']);
    expect(complete(script, 'nodescope completion ')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete(script, 'nodescope he')).toEqual(['help']);
    expect(complete(script, 'nodescope help ')).toEqual(expect.arrayContaining(['show', 'trace', 'diagnose', 'dig', 'fleet', 'completion', 'replay']));
    expect(complete(script, 'nodescope help tr')).toEqual(['trace']);
    expect(complete(script, 'nodescope trace -o ')).toEqual(['text', 'json', 'yaml']);
    expect(complete(script, 'nodescope -')).toEqual(expect.arrayContaining(['-n', '--namespace', '-A', '--all-namespaces', '--replay', '--help', '--version']));
  });

  it('zsh and fish scripts are generated from the same tree; an unknown shell is refused', () => {
    const zsh = run('completion', 'zsh').stdout;
    expect(zsh).toContain('bashcompinit');
    expect(zsh).toContain('complete -o default -F _nodescope nodescope');
    const fish = run('completion', 'fish').stdout;
    expect(fish).toContain("complete -c nodescope -n '__fish_use_subcommand' -a show");
    expect(fish).toMatch(/complete -c nodescope -n '__fish_seen_subcommand_from show' -s o -l output -x -a 'text wide json yaml name'/);
    expect(fish).toMatch(/complete -c nodescope -n '__fish_seen_subcommand_from capture' .*-l selector/);
    expect(fish).toContain("complete -c nodescope -n '__fish_use_subcommand' -a help");
    expect(fish).toMatch(/complete -c nodescope -n '__fish_seen_subcommand_from help' -a '[^']*\btrace\b/);
    expect(zsh).toMatch(/" help"\) words='[^']*\bdiagnose\b/);
    const bad = run('completion', 'tcsh');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('one of bash, zsh, fish');
  });
});

describe('help', () => {
  it('help CMD prints that command\'s help; every command\'s --help ends with examples', () => {
    const h = run('help', 'show');
    expect(h.status, h.stderr).toBe(0);
    expect(h.stdout).toMatch(/^Usage: nodescope show /);
    expect(h.stdout).toContain('Examples:\n  nodescope show ');
    for (const cmd of ['', 'show', 'diagnose', 'trace', 'dig', 'capture', 'tour', 'fleet', 'fleet capture', 'fleet diagnose', 'completion', 'dash', 'replay']) {
      const r = run(...(cmd ? cmd.split(' ') : []), '--help');
      expect(r.status, cmd).toBe(0);
      expect(r.stdout, cmd).toMatch(/\nExamples:\n {2}(source <\()?nodescope /);
    }
  }, 120_000);

  it('every command of the tree has examples (addExamples over the real tree)', async () => {
    // The tree as the bin builds it, without running it: cli.tsx parses argv at import, so walk a copy of its names.
    const names = run('completion', 'bash').stdout.match(/case "\$path \$w" in\n\s+(.*)\) path=/)![1]!.split('|').map((q) => q.replace(/^" |"$/g, ''));
    for (const n of ['', ...names]) expect(EXAMPLES[n], n || '(program)').toBeDefined();
    const seen: string[] = [];
    addExamples({ addHelpText: (_w: string, t: string) => void seen.push(t), commands: [] } as unknown as Command, ['show']);
    expect(seen[0]).toContain('nodescope show services -o wide');
  });

  it('tour alone lists the tours with their titles', () => {
    const r = run('tour');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ {2}where-rewritten +where is the destination rewritten$/m);
  });
});

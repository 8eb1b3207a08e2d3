#!/usr/bin/env node
/**
 * nodescope's command line: argument parsing (commander), choosing the source,
 * and rendering the app or a `show` document. Exit codes: 0 ok, 1 the user can fix
 * it (UserError), 2 anything else (a bug or a broken transport).
 */
import { Command, Option } from 'commander';
import { render } from 'ink';
import React from 'react';
import { runCleanups } from './cleanup.js';
import { BugError, ParseError, TransportError, UserError } from './errors.js';
import { packageVersion } from './paths.js';
import { showRules } from './report/rules.js';
import { showServices } from './report/services.js';
import { captureBundle } from './capture.js';
import { loadSnapshot, Session } from './session.js';
import { closeSource, openSource, type OpenedSource, type SourceOptions } from './sources/open.js';
import { App } from './ui/App.js';
import { detectLang } from './ui/i18n.js';

interface GlobalOptions extends SourceOptions {
  readonly interval: string;
  readonly lang?: string;
  readonly bpfRoot?: string;
}

function addSourceOptions(cmd: Command): Command {
  return cmd
    .option('--local', 'read this machine (live)')
    .option('--netns <name>', 'read inside a network namespace of this machine (live, implies --local)')
    .option('--replay <dir>', 'replay a capture bundle')
    .option('--api-file <file>', 'API objects as printed by `kubectl get … -o json`')
    .option('--ssh <target>', 'read a node over SSH: [user@]host[:port] or a Host of ~/.ssh/config (live)')
    .option('--node <name>', 'read a node through a debug pod, like kubectl debug node/NAME (live)')
    .option('--context <name>', 'kubeconfig context (default: the current one)')
    .option('-n, --namespace <ns>', 'API objects of this namespace only (default: all); also where --node puts its pod')
    .option('--accept-new-host-key', "--ssh: add an unknown host key to known_hosts (a changed key is never accepted)")
    .option('--image <image>', '--node: debug pod image (default busybox:1.36.1)')
    .option('--bpf-root <path>', "directory of Cilium's pinned tc maps", undefined)
    .option('--interval <seconds>', 'live refresh period in seconds', '2')
    .option('--lang <lang>', 'UI language: en or ja (default from LANG)');
}

function params(opts: GlobalOptions): Record<string, string | undefined> {
  return { bpfRoot: opts.bpfRoot };
}

/** What Session and loadSnapshot need from an opened source. */
function sessionSource(source: OpenedSource) {
  return {
    transport: source.transport,
    live: source.live,
    ...(source.apiText !== undefined ? { apiText: source.apiText } : {}),
    ...(source.apiOrigin ? { apiOrigin: source.apiOrigin } : {}),
    ...(source.api ? { api: source.api } : {}),
    ...(source.ciliumAgent ? { ciliumAgent: source.ciliumAgent } : {}),
  };
}

async function runTui(opts: GlobalOptions): Promise<void> {
  const source = await openSource(opts);
  const interval = Number(opts.interval);
  if (!(interval > 0)) throw new UserError(`--interval ${opts.interval}: must be a positive number of seconds`);
  const session = new Session({ ...sessionSource(source), intervalMs: interval * 1000, params: params(opts) });
  const app = render(<App session={session} lang={detectLang(opts.lang)} />, { exitOnCtrlC: false });
  void session.start();
  await app.waitUntilExit();
  await session.stop();
}

async function runShow(what: string, opts: GlobalOptions & { output: 'json' | 'text'; chain?: string; table?: string }): Promise<void> {
  const source = await openSource(opts);
  const { snapshot } = await loadSnapshot({ ...sessionSource(source), params: params(opts) });
  await closeSource(source);
  let out: string;
  switch (what) {
    case 'services':
      out = showServices(snapshot, opts.output);
      break;
    case 'rules':
      out = showRules(snapshot, opts.output, { ...(opts.chain ? { chain: opts.chain } : {}), ...(opts.table ? { table: opts.table } : {}) });
      break;
    default:
      throw new UserError(`nothing to show called "${what}"`, 'try: services, rules');
  }
  process.stdout.write(out);
}

/** Builds the command tree (exported for tests of argument handling). */
export function buildProgram(): Command {
  const program = addSourceOptions(new Command('nodescope'))
    .description("Open a Kubernetes node and see where a Service's packets really get rewritten")
    .version(packageVersion())
    .enablePositionalOptions()
    .action(async (opts: GlobalOptions) => runTui(opts));

  addSourceOptions(program.command('show').argument('<what>', 'services | rules').description('print what a pane shows, for scripts'))
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--chain <name>', 'rules: only this chain')
    .option('--table <name>', 'rules: only this table')
    .action(async (what: string, opts: GlobalOptions & { output: 'json' | 'text'; chain?: string; table?: string }) => runShow(what, opts));

  addSourceOptions(program.command('capture').description('write a capture bundle of the source'))
    .requiredOption('-o, --output <dir>', 'bundle directory to write')
    .option('--note <text>', 'provenance note stored in the manifest')
    .action(async (opts: GlobalOptions & { output: string; note?: string }) => {
      const source = await openSource(opts);
      const manifest = await captureBundle(source, opts.output, { params: params(opts), ...(opts.note ? { note: opts.note } : {}) });
      process.stderr.write(`captured ${manifest.probes.length} probes of ${manifest.node} into ${opts.output}\n`);
    });

  addSourceOptions(program.command('replay').argument('<dir>', 'capture bundle').description('open the TUI on a capture bundle'))
    .action(async (dir: string, opts: GlobalOptions) => runTui({ ...opts, replay: dir }));
  return program;
}

function report(e: unknown): number {
  if (e instanceof UserError) {
    process.stderr.write(`nodescope: ${e.message}\n${e.hint ? `  try: ${e.hint}\n` : ''}`);
    return 1;
  }
  if (e instanceof ParseError) {
    process.stderr.write(`nodescope: ${e.origin}:${e.line}: ${e.message}\n${e.excerpt ? `  ${e.excerpt}\n` : ''}`);
    return 1;
  }
  if (e instanceof TransportError) {
    process.stderr.write(`nodescope: ${e.node}: ${e.argv.join(' ')}: ${e.message}\n${e.stderrTail}\n`);
    return 2;
  }
  const err = e instanceof Error ? e : new BugError(String(e));
  process.stderr.write(`nodescope: internal error (please report): ${err.stack ?? err.message}\n`);
  return 2;
}

buildProgram()
  .parseAsync(process.argv)
  .then(() => runCleanups())
  .catch(async (e: unknown) => {
    const code = report(e);
    await runCleanups();
    process.exit(code);
  });

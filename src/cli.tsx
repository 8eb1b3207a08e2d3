#!/usr/bin/env node
/**
 * nodescope's command line: argument parsing (commander), choosing the source,
 * and rendering the app or a `show` document. Exit codes (README "Exit status"): 0 ok;
 * 2 a usage error (commander's parse errors, a UsageError) in every command, and any error in
 * the commands whose 1 is a finding ({@link FINDING_EXIT_COMMANDS}); elsewhere 1 the user can
 * fix it (UserError, ParseError), 2 anything else (a bug or a broken transport); 9 `dig` got no
 * reply (as dig(1)).
 */
import { Command, CommanderError, Option } from 'commander';
import { addSourceOptions, apiNamespace, ipAddress, kubeconfigOption, langOption, outputOption, podDeadline, positiveInteger, positiveSeconds, type GlobalOptions } from './cli/options.js';
import { exitAfterCleanup, installExitHandlers, onCleanup } from './cleanup.js';
import { BugError, ParseError, said, TransportError, UsageError, UserError } from './errors.js';
import { defaultCaptureDir, packageVersion } from './paths.js';
import type { TraceCommandArgs } from './trace/choose-engine.js';
import { DNS_QUESTION_TYPES } from './model/dns.js';
import type { Session } from './collect/session.js';
import { SHOW_FORMATS, SHOW_WHATS } from './cli/show-names.js';
import type { ShowOptions } from './cli/show.js';
import { addExamples } from './cli/help.js';
import { isAddressArg, podAddress, serviceDestination } from './cli/trace-names.js';
import type { ApiObjects } from './model/k8s.js';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './cli/completion.js';
import { detectLang, t, tf, type Lang } from './text/i18n.js';
import { commanderErrorText, errorLang } from './cli/error-lang.js';
import { guardTerminalStream, terminalSafe } from './text/terminal-safe.js';
import { DEBUG_POD_DEADLINE_S } from './sources/k8s-debug-pod.js';
import type { FleetCaptureArgs } from './fleet/capture-command.js';
import type { LiveFleetArgs } from './fleet/live.js';
import { addTuiTraceOptions, tuiStartTrace, type TuiTraceOptions } from './cli/tui-trace.js';

// stderr carries only nodescope's own messages (Ink and blessed draw on stdout): one guard
// there makes every message that quotes node, API or bundle text safe (issue 24).
guardTerminalStream(process.stderr);

// Before anything loads Ink (and with it signal-exit): see src/cleanup.ts.
installExitHandlers();

/**
 * Ink, React and the app load only for the TUI commands: `show`, `trace` and `capture` never
 * need them (no JSX in this file either: it would import React's JSX runtime for every command).
 */
async function loadUi() {
  const [{ render }, { default: React }, { App }] = await Promise.all([import('ink'), import('react'), import('./ui/App.js')]);
  return { render, createElement: React.createElement, App };
}

/** The TUI reads keys in raw mode: without a terminal say so, rather than fail inside Ink. */
function requireTerminal(): void {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UserError(said('err.tty'), said('err.tty.hint'));
  }
}

/** The TUI's session over the opened source (the source's API text is then the session's alone to drop). */
async function openSession(opts: GlobalOptions): Promise<Session> {
  const [{ askedProbes, clusterDomainFor, params, sessionSource }, { openSource }, { Session }] = await Promise.all([import('./cli/load.js'), import('./sources/open.js'), import('./collect/session.js')]);
  const probes = askedProbes(opts);
  // The first snapshot parses the --api-file's objects anyway: the check reuses that parse.
  // A live cluster lists every namespace: the snapshot narrows to `-n`, and the DNS pane still
  // finds kube-system/kube-dns behind that view (src/model/api-namespace.ts `apiOfCluster`).
  const source = await openSource({ ...opts, apiAllNamespaces: true }, { parseApiFileAtOpen: true });
  // A --cluster-domain that is not a domain name is refused before the screen opens.
  if (opts.clusterDomain !== undefined) await clusterDomainFor(opts, source.transport);
  return new Session({ ...sessionSource(source, opts), intervalMs: opts.interval * 1000, params: params(opts), probes, ...(opts.clusterDomain !== undefined ? { clusterDomain: opts.clusterDomain } : {}) });
}

/**
 * `--fleet` without DIR: the nodes chosen by `--nodes`/`--selector` (default: all) captured
 * now through the cluster of `--context`/`--kubeconfig` into a temporary fleet bundle, shown,
 * and the bundle deleted when the TUI ends.
 */
async function runLiveFleetTui(opts: GlobalOptions): Promise<void> {
  requireTerminal();
  const { withLiveFleet } = await import('./fleet/live.js');
  const args = {
    parallel: 10, nodeTimeout: 120,
    ...(opts.nodes !== undefined ? { nodes: opts.nodes } : {}), ...(opts.selector !== undefined ? { selector: opts.selector } : {}),
    ...(opts.context !== undefined ? { context: opts.context } : {}), ...(opts.kubeconfig !== undefined ? { kubeconfig: opts.kubeconfig } : {}),
    ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}), ...(opts.image !== undefined ? { image: opts.image } : {}),
    ...(opts.podDeadline !== undefined ? { podDeadline: opts.podDeadline } : {}), ...(opts.bpfRoot !== undefined ? { bpfRoot: opts.bpfRoot } : {}),
    ...(opts.apiFile !== undefined ? { apiFile: opts.apiFile } : {}),
  };
  await withLiveFleet(args, (m) => void process.stderr.write(`nodescope: ${m}\n`), (dir) => runFleetTui(dir, opts.lang));
}

/** `--fleet DIR`: the fleet matrix over a fleet bundle; Enter opens a node's bundle as `--replay` would. */
async function runFleetTui(dir: string, lang: string | undefined): Promise<void> {
  requireTerminal();
  const [{ render }, { default: React }, { FleetApp }, { diagnoseFleet }, { fleetDiagnoseNode }, { readFleetManifest }, { openReplaySession }, path] = await Promise.all([
    import('ink'), import('react'), import('./ui/fleet/FleetApp.js'), import('./fleet/diagnose.js'), import('./fleet/node-diagnosis.js'), import('./fleet/bundle.js'), import('./collect/replay-session.js'), import('node:path'),
  ]);
  const manifest = readFleetManifest(dir);
  process.stderr.write(`nodescope: diagnosing ${manifest.nodes.length} nodes of ${dir}…\n`);
  const data = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
  const openNode = async (node: string) => {
    const entry = manifest.nodes.find((n) => n.name === node);
    if (!entry || entry.status !== 'ok') throw new UserError(said('ue.fleet.notCaptured', { node }));
    const session = await openReplaySession(path.join(dir, entry.dir));
    void session.start();
    return { session, stop: () => session.stop() };
  };
  const app = render(React.createElement(FleetApp, { data, dir, lang: detectLang(lang), openNode }), { exitOnCtrlC: false });
  const leave = onCleanup('leave the TUI', () => app.unmount());
  await app.waitUntilExit();
  leave();
}

/**
 * Switches the terminal to its alternate screen (xterm's `CSI ? 1049 h`, as less, vim and
 * k9s do) so that quitting gives the shell back as it was; returns the switch back, which
 * is also registered for exits by a signal or an error. Ink draws into whichever is shown.
 */
function alternateScreen(): () => void {
  process.stdout.write('\x1b[?1049h\x1b[H');
  let left = false;
  const back = () => {
    if (left) return;
    left = true;
    process.stdout.write('\x1b[?1049l');
  };
  const unregister = onCleanup('leave the alternate screen', back);
  return () => {
    back();
    unregister();
  };
}

async function runTui(opts: GlobalOptions & TuiTraceOptions): Promise<void> {
  if (opts.fleet === true) return runLiveFleetTui(opts);
  if (opts.fleet) return runFleetTui(opts.fleet, opts.lang);
  const startTrace = tuiStartTrace(opts);
  requireTerminal();
  const session = await openSession(opts);
  const { render, createElement, App } = await loadUi();
  const leaveScreen = alternateScreen();
  const app = render(createElement(App, { session, lang: detectLang(opts.lang), ...(startTrace ? { startTrace } : {}) }), { exitOnCtrlC: false });
  // On any exit (q, a signal, a closed terminal, an error) the screen is given back first,
  // then the session stops, then what it created goes (latest registered runs first); the
  // whole is bounded, so an API server that does not answer cannot hold the quit.
  onCleanup('stop the live session', () => session.stop());
  const leave = onCleanup('leave the TUI', () => app.unmount());
  void session.start();
  await app.waitUntilExit();
  leave();
  leaveScreen();
}

/** `tour` alone: the shipped tours, one a line with its title. */
async function listTours(): Promise<void> {
  const { loadTour, tourNames } = await import('./tour/load.js');
  const names = tourNames();
  const w = Math.max(0, ...names.map((n) => n.length));
  process.stdout.write(`nodescope tour NAME: a guided tour, one of\n${names.map((n) => `  ${n.padEnd(w)}  ${terminalSafe(loadTour(n).title.en)}\n`).join('')}e.g. nodescope tour ${names[0] ?? 'NAME'}\n`);
}

async function runTour(name: string, lang: string | undefined): Promise<void> {
  const [{ render, createElement, App }, { loadTour, tourNames }, { tourSessions }] = await Promise.all([loadUi(), import('./tour/load.js'), import('./tour/sessions.js')]);
  // A name that is no tour is a usage error, said before the terminal is asked for.
  const names = tourNames();
  if (!names.includes(name)) throw new UsageError(said('ue.tour.none', { name: JSON.stringify(name) }), said('ue.tour.oneOf', { list: names.join(', ') }));
  requireTerminal();
  const tour = loadTour(name);
  const sessions = tourSessions(tour);
  const leaveScreen = alternateScreen();
  const app = render(createElement(App, { session: sessions.session(tour.steps[0]!.capture), lang: detectLang(lang), tour: sessions }), { exitOnCtrlC: false });
  await app.waitUntilExit();
  leaveScreen();
  await sessions.stop();
}

async function runDashCommand(opts: GlobalOptions & { service: string }): Promise<void> {
  requireTerminal();
  const [{ askedProbes, params, sessionSource }, { openSource }, { Session }] = await Promise.all([import('./cli/load.js'), import('./sources/open.js'), import('./collect/session.js')]);
  const source = await openSource(opts);
  const session = new Session({ ...sessionSource(source, opts), intervalMs: opts.interval * 1000, params: params(opts), probes: askedProbes(opts) });
  const { runDash } = await import('./dash/run.js');
  const dash = runDash({ session, service: opts.service, lang: detectLang(opts.lang) });
  onCleanup('stop the live session', () => session.stop());
  void session.start();
  await dash.done;
}

/**
 * `nodescope diagnose`: one verdict per Service (issue 17). Exit status as diff(1): 0 every
 * Service ok, 1 some degraded or broken, 2 could not run or could not decide (the error is
 * printed as for any command; any error is 2 here, see {@link FINDING_EXIT_COMMANDS}).
 */
async function runDiagnose(opts: GlobalOptions & { output: DocumentOutput; service?: string; from?: string }): Promise<void> {
  const [{ clusterDomainFor, loadOnce, writeDocument }, { closeSource }, { showDiagnose }, { dnsLayerOfSource }, { diagnoseExitStatus }] = await Promise.all([
    import('./cli/load.js'), import('./sources/open.js'), import('./report/diagnose.js'), import('./dns/diagnose-dns.js'), import('./analysis/diagnose/index.js'),
  ]);
  const { source, snapshot } = await loadOnce(opts, { allApi: true });
  const namespace = apiNamespace(opts).apiNamespace;
  let result: ReturnType<typeof showDiagnose>;
  try {
    const api = snapshot.api?.value;
    const dns = api ? await dnsLayerOfSource(source.transport, api, async () => (await clusterDomainFor(opts, source.transport)).name) : undefined;
    const more = { ...(opts.from !== undefined ? { from: opts.from } : {}), ...(dns ? { dns } : {}), lang: detectLang(opts.lang) };
    result = showDiagnose(snapshot, opts.output, { ...(opts.service !== undefined ? { service: opts.service } : {}), ...(namespace !== undefined ? { namespace } : {}), ...more });
  } finally {
    await closeSource(source);
  }
  writeDocument(result.out, opts.output);
  process.exitCode = diagnoseExitStatus(result.diagnosis);
}

/** `nodescope dig NAME` (and `dig +search NAME`): one question, or a resolver's search, through the source's DNS path. */
function addDigCommand(program: Command): void {
  addSourceOptions(program.command('dig').argument('<NAME...>', 'DNS name to resolve; +search (dig(1) style) before it expands it with the search list').description('ask the cluster DNS (kube-dns ClusterIP) one question, as a pod would'))
    .addOption(new Option('--type <type>', 'record type').choices([...DNS_QUESTION_TYPES]).default('A'))
    .addOption(new Option('--server <ip>', 'DNS server (default: the kube-dns ClusterIP from the API objects)').argParser(ipAddress))
    .option('--search', "expand the name with a resolv.conf's search list and ndots as the pod's resolver does (same as +search)")
    .option('--resolv-conf <file>', "--search: this resolv.conf (default: a ClusterFirst Pod's in -n's namespace, else default, as kubelet writes it)")
    .option('--node-resolv-conf', "--search: the node's own resolv.conf (what a hostNetwork Pod with dnsPolicy Default has)")
    .addOption(outputOption('dig', DOCUMENT_OUTPUTS, t('en', 'err.why.dig')))
    .action(async (words: string[], opts: GlobalOptions & { type: string; server?: string; output: DocumentOutput; search?: boolean; resolvConf?: string; nodeResolvConf?: boolean }) => {
      const [{ dig, digExitCode, digOutput }, { digSearch, digWords, nodeResolvConf, readResolvConfFile }, { digSearchJson, digSearchText }, { dnsTransportFor }, { clusterDomainFor, writeDocument }, { closeSource, openSource }] = await Promise.all([
        import('./dns/dig.js'), import('./dns/dig-search.js'), import('./report/dig-search.js'), import('./dns/open.js'), import('./cli/load.js'), import('./sources/open.js'),
      ]);
      const { name, search: plus } = digWords(words);
      const search = plus ?? opts.search === true;
      if ((opts.resolvConf || opts.nodeResolvConf) && !search) throw new UsageError(said('err.resolvConf', { flag: opts.resolvConf ? '--resolv-conf' : '--node-resolv-conf' }), said('err.resolvConf.hint'));
      if (opts.resolvConf && opts.nodeResolvConf) throw new UsageError(said('err.resolvConfBoth'));
      // Read before anything opens: a bad path is the user's to fix, not a source to clean up.
      const given = opts.resolvConf ? readResolvConfFile(opts.resolvConf) : null;
      // Every namespace's objects whatever `-n` says: kube-dns lives in kube-system, and a Pod's
      // search reaches any namespace's Services by FQDN; `-n` is only the Pod's namespace here.
      const source = await openSource({ ...opts, apiAllNamespaces: true });
      const api = source.apiText !== undefined ? (await import('./parsers/k8s-objects.js')).parseK8sObjects(source.apiText, source.apiOrigin ?? 'api').value : null;
      const ns = apiNamespace(opts).apiNamespace;
      const dns = dnsTransportFor(source.transport);
      try {
        const domain = await clusterDomainFor(opts, source.transport);
        if (search) {
          const nodeResolv = given ? null : await nodeResolvConf(source.transport);
          if (opts.nodeResolvConf && !nodeResolv) throw new UserError(said('err.noNodeResolvConf'), said('err.noNodeResolvConf.hint'));
          const resolv = given ?? (opts.nodeResolvConf && nodeResolv ? { conf: nodeResolv, origin: 'node' as const } : null);
          const pod = { namespace: ns ?? 'default', namespaceGiven: ns !== undefined, clusterDomain: domain, nodeResolv };
          const run = await digSearch({ name, dns, resolv, pod, api, ...(opts.server ? { server: opts.server } : {}) });
          writeDocument(opts.output === 'text' ? digSearchText(run, dns.note ?? null, detectLang(opts.lang)) : digSearchJson(run, dns.note ?? null, opts.output), opts.output);
          // Like dig(1): 9 when no server ever replied.
          process.exitCode = run.steps.length > 0 && run.steps.every((st) => st.exchanges.every((e) => digExitCode(e) === 9)) ? 9 : 0;
          return;
        }
        const args = { name, type: opts.type, dns, api, format: opts.output, expect: { zone: domain.name }, ...(opts.server ? { server: opts.server } : {}) };
        const result = await dig(args);
        writeDocument(digOutput(result, args, domain, detectLang(opts.lang)), opts.output);
        // Like dig(1): 9 when the server never replied (the text says why).
        process.exitCode = digExitCode(result.exchange);
      } finally {
        await dns.close();
        await closeSource(source);
      }
    });
}

/** `nodescope fleet capture|diagnose`: many nodes at once (src/fleet/). */
function addFleetCommands(program: Command): void {
  const fleet = program.command('fleet').description('many nodes at once: capture each through the cluster (or SSH), then compare them');
  addLiveFleetOptions(fleet.command('capture').description('capture every chosen node (one short-lived debug pod per node, or --ssh) into a fleet bundle'))
    .requiredOption('-o, --output <dir>', 'fleet bundle directory to write')
    .option('--force', 'write into a non-empty directory, removing the fleet bundle there')
    .action(async (opts: FleetCaptureArgs) => {
      // Loaded on use: it pulls in the Kubernetes client, which the other commands load only when asked.
      const { runFleetCapture } = await import('./fleet/capture-command.js');
      const manifest = await runFleetCapture(opts, (m) => void process.stderr.write(`nodescope: ${m}\n`));
      const failed = manifest.nodes.filter((n) => n.status === 'failed');
      process.stderr.write(`captured ${manifest.nodes.length - failed.length} of ${manifest.nodes.length} nodes into ${opts.output}${failed.length ? `; failed: ${failed.map((n) => n.name).join(', ')}` : ''}\n`);
      // 2: no node could be read; 1: some could not (each named with its reason in fleet.json).
      if (failed.length) process.exitCode = failed.length === manifest.nodes.length ? 2 : 1;
    });
  addLiveFleetOptions(fleet.command('diagnose').argument('[dir]', 'a fleet bundle (fleet capture -o DIR); without it, the live options choose the nodes to capture first'))
    .description('per Service and node: the verdict, and the nodes whose programmed backends differ from the API and from the majority')
    .addOption(outputOption('fleet diagnose', DOCUMENT_OUTPUTS, t('en', 'err.why.fleet')))
    .addOption(langOption())
    .action(async (dir: string | undefined, opts: LiveFleetArgs & { output: DocumentOutput; lang?: string }) => {
      const [{ diagnoseFleet }, { fleetDiagnoseNode }, report, live, { writeDocument }] = await Promise.all([import('./fleet/diagnose.js'), import('./fleet/node-diagnosis.js'), import('./report/fleet.js'), import('./fleet/live.js'), import('./cli/load.js')]);
      const diagnose = async (d: string) => {
        const result = await diagnoseFleet(d, { diagnose: fleetDiagnoseNode });
        writeDocument(opts.output === 'text' ? report.fleetText(result, detectLang(opts.lang)) : report.fleetJson(result, opts.output), opts.output);
        process.exitCode = report.fleetExitCode(result);
      };
      if (dir !== undefined) {
        if (live.asksLiveFleet(opts)) throw new UsageError(said('ue.fleet.dirAndLive'), said('ue.fleet.dirAndLiveHint'));
        return diagnose(dir);
      }
      await live.withLiveFleet(opts, (m) => void process.stderr.write(`nodescope: ${m}\n`), diagnose);
    });
}

/** The options that choose and open a fleet's nodes (`fleet capture`, live `fleet diagnose`). */
function addLiveFleetOptions(command: Command): Command {
  return command
    .option('--nodes <names>', 'only these nodes (comma-separated)')
    .option('--selector <labels>', 'only the nodes with these labels (a label selector, e.g. pool=web)')
    .addOption(new Option('--parallel <n>', 'nodes captured at once').default(10).argParser(positiveInteger))
    .addOption(new Option('--node-timeout <seconds>', 'one node may take at most this long (then it is recorded as failed)').default(120).argParser(positiveSeconds))
    .option('--ssh <hosts>', 'read these hosts over SSH instead of the API ([user@]host[:port], comma-separated)')
    .option('--ssh-file <file>', 'read the hosts of this file over SSH (one per line)')
    .option('--accept-new-host-key', '--ssh: add the host key of a host known_hosts has no entry for')
    .option('--api-file <file>', 'API objects from this file instead of the cluster')
    .option('--context <name>', 'kubeconfig context (default: the current one)')
    .addOption(kubeconfigOption())
    .option('-n, --namespace <ns>', 'where the debug pods go (default: the context\'s, else default)')
    .option('--image <image>', 'debug pod image (default busybox:1.36.1)')
    .addOption(new Option('--pod-deadline <duration>', `each debug pod ends by itself after this long, even if nodescope is killed (1m–24h; default ${DEBUG_POD_DEADLINE_S / 3600}h)`).argParser(podDeadline))
    .option('--bpf-root <path>', "directory of Cilium's pinned tc maps");
}

/** `trace`'s `--to`/`--to-service` and `--from` as addresses: names resolved through the source's API objects (src/cli/trace-names.ts). */
function traceAddresses(opts: GlobalOptions & { to?: string; toService?: string; from?: string }, api: ApiObjects | null): { to: string; from?: string } {
  if (opts.to !== undefined && opts.toService !== undefined) throw new UsageError(said('err.bothTo'), said('err.bothToHint'));
  if (opts.to === undefined && opts.toService === undefined) throw new UsageError(said('err.noDestination'), said('err.noDestination.hint', { to: '10.96.12.34:80/tcp', service: 'default/web:80' }));
  const to = opts.to ?? serviceDestination(api, opts.toService!);
  if (opts.from === undefined) return { to };
  return { to, from: isAddressArg(opts.from) ? opts.from : podAddress(api, opts.from, apiNamespace(opts).apiNamespace) };
}

/** `trace`'s options as commander gives them. */
type TraceOptions = GlobalOptions & TraceCommandArgs & { allowTrace?: boolean; traceSeconds: string };

/** `nodescope trace`: one packet's walk over the source (src/cli/trace-load.ts reads what it needs); with `--allow-trace`, also the kernel's. */
async function runTrace(opts: TraceOptions): Promise<void> {
  if (opts.allowTrace && opts.replay) throw new UsageError(said('err.allowTraceReplay'), said('err.allowTraceReplay.hint'));
  // A replay's API worker starts as soon as its small module is in, while the rest loads.
  const early = import('./cli/trace-early.js').then(({ startTraceApiForReplay }) => startTraceApiForReplay(opts));
  // The live trace's code loads only for --allow-trace; the seconds are checked either way.
  const [{ traceSeconds }, { loadForTrace }, { runTraceCommand }, { writeDocument }, { closeSource }] = await Promise.all([
    import('./collect/live-trace.js'), import('./cli/trace-load.js'), import('./report/trace.js'), import('./cli/load.js'), import('./sources/open.js'), early,
  ]);
  const seconds = traceSeconds(opts.traceSeconds);
  const { source, snapshot, args } = await loadForTrace(opts, (snap): TraceCommandArgs => ({
    ...traceAddresses(opts, snap.api?.value ?? null),
    ...(opts.entry ? { entry: opts.entry } : {}),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.branch ? { branch: opts.branch } : {}),
    ...(opts.flags ? { flags: opts.flags } : {}),
    ...(opts.mark ? { mark: opts.mark } : {}),
    ...(opts.output ? { output: opts.output } : {}),
    ...(snap.nft?.value ? { nft: snap.nft.value } : {}),
  }));
  if (!opts.allowTrace) await closeSource(source);
  if (!opts.allowTrace) {
    writeDocument(runTraceCommand(snapshot, args, detectLang(opts.lang)), opts.output);
    return;
  }
  try {
    const lang = detectLang(opts.lang);
    const onListening = () => void process.stderr.write(`${tf(lang, 'cli.live.listening', { seconds, node: source.transport.label })}\n`);
    const onNotice = (m: string) => void process.stderr.write(`nodescope: ${m}\n`);
    const { runLiveTraceCommand } = await import('./report/trace-live.js');
    writeDocument(await runLiveTraceCommand({ transport: source.transport, snapshot, args, allowTrace: true, seconds, onListening, onNotice, lang }), opts.output);
  } finally {
    await closeSource(source);
  }
}

/** `nodescope completion SHELL`: the script for the tree the parser uses (src/cli/completion.ts). */
function addCompletionCommand(program: Command): void {
  program
    .command('completion')
    .argument('<shell>', 'bash, zsh or fish')
    .description('print a shell completion script for nodescope (subcommands, flags, their choices)')
    .action(async (shell: string) => {
      if (!(COMPLETION_SHELLS as readonly string[]).includes(shell)) throw new UsageError(said('err.noShell', { shell }), said('err.oneOf', { list: COMPLETION_SHELLS.join(', ') }));
      const { tourNames } = await import('./tour/load.js');
      process.stdout.write(completionScript(program, shell as CompletionShell, { show: SHOW_WHATS.map(([n]) => n), tour: tourNames(), completion: COMPLETION_SHELLS, help: program.commands.map((c) => c.name()) }));
    });
}

/** The `-o` formats of the commands that print one document: text, or the document as JSON or YAML. */
const DOCUMENT_OUTPUTS = ['text', 'json', 'yaml'] as const;
type DocumentOutput = (typeof DOCUMENT_OUTPUTS)[number];

/** `nodescope fleet capture` for a command (the words a user types before `--help`). */
function commandPath(cmd: Command): string {
  const words: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}

/** The line after a usage error: where the command's usage is (kubectl's "See '… --help' for usage."). */
function usageLine(cmd: Command, lang: Lang): string {
  return tf(lang, 'err.usage', { command: commandPath(cmd) });
}

/**
 * Commander's parse errors of `cmd` and every command under it: in `lang`
 * (src/cli/error-lang.ts), followed by the usage line, and thrown (a CommanderError) instead
 * of exiting 1 there, so that {@link report} gives them the usage exit 2.
 */
function configureErrors(cmd: Command, lang: Lang): void {
  cmd.configureOutput({ outputError: (text, write) => write(commanderErrorText(text, lang)) });
  cmd.showHelpAfterError(usageLine(cmd, lang));
  cmd.exitOverride();
  for (const sub of cmd.commands) configureErrors(sub, lang);
}

/**
 * The commands whose exit 1 means "found something" (diagnose: a Service degraded or broken;
 * fleet diagnose: the same on some node; fleet capture: some node failed): any error there
 * exits 2, so that 1 keeps that one meaning.
 */
const FINDING_EXIT_COMMANDS: ReadonlySet<string> = new Set(['nodescope diagnose', 'nodescope fleet diagnose', 'nodescope fleet capture']);

/** The command whose action runs (set before it starts): the usage line and the exit code of its errors. */
let running: Command | null = null;

/** Builds the command tree (exported for tests of argument handling). */
export function buildProgram(): Command {
  const program = addTuiTraceOptions(addSourceOptions(new Command('nodescope')))
    .description("Open a Kubernetes node and see where a Service's packets really get rewritten")
    .version(packageVersion())
    .option('--fleet [dir]', 'open the fleet matrix of a fleet bundle (fleet capture -o DIR); without DIR, of the nodes captured now (--context, --kubeconfig, -n, --nodes, --selector)')
    .option('--nodes <names>', '--fleet without DIR: only these nodes (comma-separated)')
    .option('--selector <labels>', '--fleet without DIR: only the nodes with these labels')
    .enablePositionalOptions()
    .helpCommand('help [command]', 'help for a command: what it does, its flags, examples')
    // A word that is no command reaches the TUI's action, which names it (not "too many arguments").
    .allowExcessArguments()
    .action(async (opts: GlobalOptions & TuiTraceOptions) => {
      if (program.args.length > 0) unknownCommand(program);
      return runTui(opts);
    });

  addSourceOptions(program.command('show').argument('[what]', 'services | rules | lb | conntrack | dns | compare (none: list them)').description('print what a pane shows, for scripts'))
    .addOption(new Option('-o, --output <format>', 'output format: text (plain columns), wide, json, yaml, name').choices(SHOW_FORMATS).default('text'))
    .option('--chain <name>', 'rules: only this chain')
    .option('--table <name>', 'rules: only this table')
    .option('--service <ns/name>', 'services, rules, conntrack, dns, compare: only this Service')
    .addOption(new Option('--dns-server <ip>', 'dns: ask this server instead of the kube-dns ClusterIP').argParser(ipAddress))
    .option('--events', "conntrack: also read conntrack's event stream (conntrack -E) for the probe's declared timeout (a bundle's events are always read)")
    .action(async (what: string | undefined, opts: ShowOptions) => (await import('./cli/show.js')).runShow(what, opts));

  addSourceOptions(program.command('diagnose').description('one verdict per Service: does this node do what the API promises, and if not, which layer is wrong (exit 0 all ok, 1 degraded or broken, 2 could not run)'))
    .addOption(outputOption('diagnose', DOCUMENT_OUTPUTS, t('en', 'err.why.diagnose')))
    .option('--service <ns/name>', 'only this Service')
    .option('--from <who>', 'also walk every frontend from this client: a Pod (ns/name), a Pod IP, node, or an outside address')
    .action(async (opts: GlobalOptions & { output: DocumentOutput; service?: string; from?: string }) => runDiagnose(opts));

  addSourceOptions(program.command('trace').description('walk one packet through every hook, rule by rule (step mode, without the TUI)'))
    .option('--to <ip:port/proto>', 'destination, e.g. 10.96.12.34:80/tcp (or --to-service)')
    .option('--to-service <ns/name[:port]>', "destination: a Service's ClusterIP and port, from the source's API objects (PORT: number or name; optional for a one-port Service)")
    .option('--from <ip[:port]|pod>', 'source: IP[:PORT], or a Pod as NAME or NAMESPACE/NAME (its IP from the API objects); required, except with --entry host: then the node uses its own address')
    .addOption(new Option('--entry <where>', 'where the packet enters (default: inferred)').choices(['pod', 'host', 'external']))
    .option('--endpoint <ip:port>', 'follow the random branch that leads to this endpoint')
    .option('--branch <index>', 'follow the random branch with this 0-based index')
    .option('--flags <tcp flags>', 'TCP flags, e.g. SYN (default) or ACK')
    .option('--mark <mark>', 'packet mark')
    .addOption(outputOption('trace', DOCUMENT_OUTPUTS, t('en', 'err.why.walk')))
    .option('--allow-trace', 'live sources: also trace the packet in the kernel (adds a temporary nft table, removed on exit) and compare')
    .option('--trace-seconds <n>', '--allow-trace: how long nft monitor trace runs (seconds)', '10')
    .action(async (opts: TraceOptions) => runTrace(opts));

  addDigCommand(program);

  addSourceOptions(program.command('capture').description('write a capture bundle of the source'))
    .requiredOption('-o, --output <dir>', 'bundle directory to write')
    .option('--note <text>', 'provenance note stored in the manifest')
    .option('--no-dns', 'do not record the cluster DNS answers of every Service')
    .addOption(new Option('--dns-server <ip>', 'ask this DNS server instead of the kube-dns ClusterIP').argParser(ipAddress))
    .option('--force', 'write into a non-empty directory, removing the bundle files already there')
    .action(async (opts: GlobalOptions & { output: string; note?: string; dns: boolean; dnsServer?: string; force?: boolean }) => {
      const [{ captureBundle, prepareCaptureDir }, { askedProbes, clusterDomainFor, params }, { openSource }] = await Promise.all([import('./collect/capture.js'), import('./cli/load.js'), import('./sources/open.js')]);
      prepareCaptureDir(opts.output, opts.force === true);
      const probes = askedProbes(opts);
      if (!opts.local && !opts.netns && !opts.replay && !opts.ssh && !opts.node) {
        process.stderr.write(`nodescope: no source given: capturing the embedded default capture (replay of ${defaultCaptureDir()}); name one with --local, --netns, --ssh, --node or --replay\n`);
      }
      const source = await openSource(opts);
      if (opts.clusterDomain !== undefined) await clusterDomainFor(opts, source.transport);
      const progress = (m: string) => void process.stderr.write(`nodescope: ${m}\n`);
      const manifest = await captureBundle(source, opts.output, { params: params(opts), probes, dns: opts.dns, progress, ...(opts.clusterDomain !== undefined ? { clusterDomain: opts.clusterDomain } : {}), ...(opts.dnsServer ? { dnsServer: opts.dnsServer } : {}), ...(opts.note ? { note: opts.note } : {}) });
      process.stderr.write(`captured ${manifest.probes.length} probes of ${manifest.node} into ${opts.output}\n`);
    });

  program
    .command('tour')
    .argument('[name]', 'a tour of fixtures/tours (none: list them)')
    .description('a guided workshop tour over the shipped captures (n: next, p: previous, .: back to the step)')
    .addOption(langOption())
    .action(async (name: string | undefined, opts: { lang?: string }) => (name === undefined ? listTours() : runTour(name, opts.lang)));

  addFleetCommands(program);
  addCompletionCommand(program);

  addSourceOptions(program.command('dash').description("projector dashboard of one Service: per-endpoint rates, conntrack use, LB map fill"))
    .requiredOption('--service <ns/name>', 'the Service to follow')
    .action(async (opts: GlobalOptions & { service: string }) => runDashCommand(opts));

  addSourceOptions(program.command('replay').argument('<dir>', 'capture bundle').description('open the TUI on a capture bundle'))
    .action(async (dir: string, opts: GlobalOptions) => runTui({ ...opts, replay: dir }));
  addExamples(program);
  configureErrors(program, errorLang(process.argv));
  // Source options given before the subcommand (`nodescope --replay DIR show rules`) hold for it
  // too; the subcommand's own flags win.
  program.hook('preAction', (root, action) => {
    running = action;
    if (action === root) return;
    for (const [key, value] of Object.entries(root.opts())) {
      const mine = action.getOptionValueSource(key);
      if (value !== undefined && root.getOptionValueSource(key) !== 'default' && (mine === undefined || mine === 'default')) action.setOptionValueWithSource(key, value, 'cli');
    }
  });
  return program;
}

/**
 * Commander's "unknown command 'X'" (with its "Did you mean" from the command names) for the
 * first operand of `program`. `unknownCommand` is commander 14's own (lib/command.js), not in
 * its typings; should it go, the same message is made here without the suggestion.
 */
function unknownCommand(program: Command): never {
  const own = (program as unknown as { unknownCommand?: () => never }).unknownCommand;
  if (typeof own === 'function') own.call(program);
  return program.error(`error: unknown command '${program.args[0]}'`, { code: 'commander.unknownCommand' });
}

/**
 * Prints an error as `nodescope: …` (with `  try: …` for a hint) in the language the TUI would
 * use (src/cli/error-lang.ts); returns the exit status: 2 for a usage error (commander's, which
 * it printed already, or a UsageError, followed by the usage line), and for any error of a
 * command in {@link FINDING_EXIT_COMMANDS}; else 1 the user can fix it, 2 anything else.
 */
function report(e: unknown): number {
  if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
  const lang = errorLang(process.argv);
  const finding = running !== null && FINDING_EXIT_COMMANDS.has(commandPath(running));
  if (e instanceof UserError) {
    process.stderr.write(`nodescope: ${e.text(lang)}\n${e.hint ? `  ${tf(lang, 'err.try', { hint: terminalSafe(e.text(lang, 'hint')) })}\n` : ''}`);
    if (e instanceof UsageError) {
      if (running) process.stderr.write(`${usageLine(running, lang)}\n`);
      return 2;
    }
    return finding ? 2 : 1;
  }
  if (e instanceof ParseError) {
    process.stderr.write(`nodescope: ${e.origin}:${e.line}: ${e.message}\n${e.excerpt ? `  ${terminalSafe(e.excerpt)}\n` : ''}`);
    return finding ? 2 : 1;
  }
  if (e instanceof TransportError) {
    process.stderr.write(`nodescope: ${e.node}: ${e.argv.join(' ')}: ${e.message}\n${e.stderrTail}\n`);
    return 2;
  }
  const err = e instanceof Error ? e : new BugError(String(e));
  process.stderr.write(`nodescope: ${tf(lang, 'err.internal', { detail: err.stack ?? err.message })}\n`);
  return 2;
}

// Every way out goes through the cleanup registry (bounded), then exits: a socket that an
// API server stopped answering must not keep the process alive after the work is done.
// `nodescope show rules | head` closing the pipe early is handled there too (exit 0).
buildProgram()
  .parseAsync(process.argv)
  .then(
    () => exitAfterCleanup(Number(process.exitCode ?? 0)),
    (e: unknown) => exitAfterCleanup(report(e)),
  );

/**
 * The options several commands share (the source, `-n`/`-A`, `--kubeconfig`, `--lang`, `-o`)
 * and their argument checks, as commander definitions: the parser, `--help` and the shell
 * completion (src/cli/completion.ts) all read these, so a flag is declared once.
 */
import { isIP } from 'node:net';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { SourceOptions } from '../sources/open.js';
import { namespaceOf } from '../sources/namespace-of.js';
import { DEFAULT_INTERVAL_MS } from '../sources/refresh-interval.js';
import { DEBUG_POD_DEADLINE_S, parsePodDeadline } from '../sources/k8s-debug-pod.js';
import type { OutputFormat } from '../text/document.js';

/** The options every source-reading command takes, as parsed. */
export interface GlobalOptions extends SourceOptions {
  /** Live refresh period, seconds (> 0). */
  readonly interval: number;
  readonly lang?: string;
  readonly bpfRoot?: string;
  readonly clusterDomain?: string;
  /** `--fleet DIR`: the fleet matrix TUI over a fleet bundle; `--fleet` alone (true): over the nodes captured now. */
  readonly fleet?: string | true;
  /** `--fleet` live: only these nodes (comma-separated) / the nodes with these labels. */
  readonly nodes?: string;
  readonly selector?: string;
  /** `--probe ID` (repeatable): heavy dumps to read even when the probe plan skips them. */
  readonly probe?: readonly string[];
}

/** `--kubeconfig FILE`, as kubectl takes it (commands that read a cluster). */
export function kubeconfigOption(): Option {
  return new Option('--kubeconfig <file>', 'kubeconfig file (default: KUBECONFIG, else ~/.kube/config)');
}

/** Adds the source options (and `--lang`, `--interval`) to `cmd`; returns it. */
export function addSourceOptions(cmd: Command): Command {
  return cmd
    .option('--local', 'read this machine (live)')
    .option('--netns <name>', 'read inside a network namespace of this machine (live, implies --local)')
    .option('--replay <dir>', 'replay a capture bundle (its directory, or its manifest.json)')
    .option('--api-file <file>', 'API objects as printed by `kubectl get … -o json`')
    .option('--ssh <target>', 'read a node over SSH: [user@]host[:port] or a Host of ~/.ssh/config (live)')
    .option('--node <name>', 'read a node through a debug pod, like kubectl debug node/NAME (live)')
    .option('--context <name>', 'kubeconfig context (default: the current one)')
    .addOption(kubeconfigOption())
    .option('-n, --namespace <ns>', 'API objects of this namespace only, for every source (--replay and --api-file too; default: all); also where --node puts its pod')
    .option('-A, --all-namespaces', 'API objects of every namespace (the default; wins over -n, as in kubectl)')
    .option('--accept-new-host-key', "--ssh: add the host key of a host known_hosts has no entry for (a changed key, or a key of another type, is never accepted)")
    .option('--image <image>', '--node: debug pod image (default busybox:1.36.1)')
    .addOption(new Option('--pod-deadline <duration>', `--node: the debug pod ends by itself after this long, even if nodescope is killed (1m–24h; default ${DEBUG_POD_DEADLINE_S / 3600}h)`).argParser(podDeadline))
    .option('--bpf-root <path>', "directory of Cilium's pinned tc maps", undefined)
    .option('--probe <id...>', 'also read these dumps when the probe plan skips them for the node\'s mode (e.g. nft-json, nft-text: the header and `?` list what was skipped)')
    .option('--cluster-domain <domain>', "the cluster's DNS domain for show dns, dig, the DNS pane and capture (default: kubelet's clusterDomain, the resolv.conf search list, else cluster.local)")
    .addOption(new Option('--interval <seconds>', 'live refresh period in seconds').default(DEFAULT_INTERVAL_MS / 1000).argParser(positiveSeconds))
    .addOption(langOption());
}

/** `-n` unless `-A`: the namespace whose API objects a command keeps (undefined: all). */
export function apiNamespace(opts: GlobalOptions): { apiNamespace?: string } {
  const ns = namespaceOf(opts);
  return ns !== undefined ? { apiNamespace: ns } : {};
}

/** `--interval`: a positive number of seconds, checked for every command (a replay too). */
export function positiveSeconds(text: string): number {
  const n = Number(text);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError('must be a positive number of seconds');
  return n;
}

/** `--parallel`: a whole number ≥ 1. */
export function positiveInteger(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number ≥ 1');
  return n;
}

/** `--pod-deadline`: 4h, 90m, 3600 (seconds). */
export function podDeadline(text: string): number {
  try {
    return parsePodDeadline(text);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
}

/** `--server`, `--dns-server`: a DNS server's IPv4 or IPv6 address (a name would need a resolver to find the resolver). */
export function ipAddress(text: string): string {
  if (isIP(text) === 0) throw new InvalidArgumentError('not an IP address: expected an IPv4 or IPv6 address, e.g. 10.96.0.10');
  return text;
}

/** `--lang`: one of the UI's languages; absent means from LANG. */
export function langOption(): Option {
  return new Option('--lang <lang>', 'UI language (default from LANG)').choices(['en', 'ja']);
}

/** Every `-o` value some command takes (kubectl's names). */
export const ALL_OUTPUT_FORMATS: readonly OutputFormat[] = ['text', 'wide', 'json', 'yaml', 'name'];

/**
 * `-o, --output FORMAT` of a command that prints `formats` (text the default): its choices (for
 * `--help` and completion) are those; a kubectl format the command has no use for is refused
 * naming the valid ones and `why` (e.g. "a walk has no wider columns and no object names").
 */
export function outputOption(command: string, formats: readonly OutputFormat[], why: string): Option {
  const option = new Option('-o, --output <format>', `output format: ${formats.join(', ')}`).choices(formats).default('text');
  return option.argParser((value: string) => {
    if ((formats as readonly string[]).includes(value)) return value;
    const known = (ALL_OUTPUT_FORMATS as readonly string[]).includes(value);
    throw new InvalidArgumentError(`${command} prints ${formats.join(', ')}${known ? `, not ${value}: ${why}` : ''}`);
  });
}

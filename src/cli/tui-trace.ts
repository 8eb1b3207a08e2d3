/**
 * `nodescope --from WHO --to IP:PORT/PROTO | --to-service NS/NAME[:PORT] [--entry …] [--flags …]`:
 * the TUI opens on the Step pane with that walk (issue 22, `--from` as a startup option). The
 * options become the words of the `:trace` command line (src/analysis/trace-choice.ts), so the
 * TUI and its command line read them one way; a name the API objects do not hold is said on
 * that line, in the TUI, where it can be corrected. Only what needs no snapshot is refused here.
 */
import { Option, type Command } from 'commander';
import { said, UsageError } from '../errors.js';
import type { StartTrace } from '../analysis/trace-choice.js';

/** The trace options the TUI takes, as commander gives them. */
export interface TuiTraceOptions {
  readonly from?: string;
  readonly to?: string;
  readonly toService?: string;
  readonly entry?: string;
  readonly flags?: string;
}

/**
 * The packet to open on, or undefined when no trace option is given. Throws a UsageError for
 * both `--to` and `--to-service`, a destination without a source (other than `--entry host`,
 * where the node sends), or a source or `--entry`/`--flags` without a destination.
 */
export function tuiStartTrace(opts: TuiTraceOptions): StartTrace | undefined {
  const { from, to, toService, entry, flags } = opts;
  if (from === undefined && to === undefined && toService === undefined && entry === undefined && flags === undefined) return undefined;
  if (to !== undefined && toService !== undefined) throw new UsageError(said('err.bothTo'), said('err.bothToHint'));
  const target = to ?? toService;
  if (target === undefined) throw new UsageError(said('err.tuiNoDestination'), said('err.noDestination.hint', { to: '10.96.12.34:80/tcp', service: 'default/web:80' }));
  const source = from ?? (entry === 'host' ? 'node' : undefined);
  if (source === undefined) throw new UsageError(said('err.tuiNoSource'), said('err.tuiNoSource.hint', { from: 'web-5d9c7', service: 'default/web:80' }));
  // A Pod IP given with a port (`10.244.0.9:43210`) is an address word of the `:trace` grammar as it is.
  const words = ['from', source, 'to', target, ...(entry && !(entry === 'host' && source === 'node') ? [entry] : [])];
  // SYN and ACK are the grammar's `first` and `established`; other flags go to the walk as given.
  const upper = flags?.toUpperCase();
  const other = upper !== undefined && upper !== 'SYN' && upper !== 'ACK';
  return { words: [...words, ...(upper === 'ACK' ? ['established'] : [])].join(' '), ...(other ? { flags } : {}) };
}

/** Adds the TUI's `--from`, `--to`, `--to-service`, `--entry`, `--flags` to `cmd`; returns it. */
export function addTuiTraceOptions(cmd: Command): Command {
  return cmd
    .option('--from <who>', 'open on the Step pane with this walk: a Pod (NAME or NAMESPACE/NAME), a Pod IP, node, outside, or an address (with --to or --to-service)')
    .option('--to <ip:port/proto>', 'with --from: the destination, e.g. 10.96.12.34:80/tcp')
    .option('--to-service <ns/name[:port]>', 'with --from: a Service as destination (PORT: number or name; the first when absent)')
    .addOption(new Option('--entry <where>', 'with --from: where the packet enters (default: inferred)').choices(['pod', 'host', 'external']))
    .option('--flags <tcp flags>', 'with --from: TCP flags, SYN (default) or ACK (an established flow)');
}

/**
 * From a catalog argv to what a remote transport runs: the probe it belongs to (a
 * remote transport refuses any argv that is not a catalog probe), the wrappers it
 * needs (`sudo` for root probes as a non-root SSH user, `locale` for stable output),
 * and — for SSH, whose exec request carries one string for the remote shell — the
 * argv quoted as one POSIX `sh` command line.
 */
import { BugError } from '../errors.js';
import { catalog, wrapperArgv, type Catalog, type ProbeSpec } from './catalog.js';

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * Quotes one word for POSIX `sh` the way Python's `shlex.quote` does: left bare when it
 * holds only `[A-Za-z0-9_@%+=:,./-]`, else wrapped in single quotes with each `'`
 * written as `'"'"'`. Inside single quotes `sh` gives no character a meaning (POSIX.1-2017
 * XCU 2.2.2), so no word can break out. Throws `BugError` for a NUL byte, which no argv
 * element can hold.
 */
export function shellQuoteWord(word: string): string {
  if (word.includes('\0')) throw new BugError('an argv element cannot contain a NUL byte');
  if (word === '') return "''";
  if (SAFE.test(word)) return word;
  return `'${word.replace(/'/g, `'"'"'`)}'`;
}

/** Joins an argv into one `sh` command line, every element quoted by {@link shellQuoteWord}. */
export function shellQuote(argv: readonly string[]): string {
  if (argv.length === 0) throw new BugError('cannot run an empty argv');
  return argv.map(shellQuoteWord).join(' ');
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** True when `argv` is `template` with its `{param}` placeholders filled by values matching the params' patterns. */
export function matchesTemplate(template: readonly string[], argv: readonly string[], cat: Catalog): boolean {
  if (template.length !== argv.length) return false;
  return template.every((t, i) => {
    const a = argv[i]!;
    if (!t.includes('{')) return t === a;
    const parts = t.split(/(\{[A-Za-z][A-Za-z0-9]*\})/);
    const values: string[] = [];
    const re = new RegExp(
      '^' + parts.map((p) => (/^\{[A-Za-z][A-Za-z0-9]*\}$/.test(p) ? '(.+)' : escapeRegExp(p))).join('') + '$',
    );
    const m = re.exec(a);
    if (!m) return false;
    values.push(...m.slice(1));
    const names = parts.filter((p) => /^\{.*\}$/.test(p)).map((p) => p.slice(1, -1));
    return names.every((n, j) => cat.params[n]?.pattern.test(values[j]!) ?? false);
  });
}

/**
 * The catalog probe whose argv (or one of its alternatives), with placeholders filled
 * by valid values, is exactly `argv`; undefined when none is. This is how a remote
 * transport keeps the rule that nothing outside `commands/probes.yaml` runs on a node.
 */
export function probeForArgv(argv: readonly string[], cat: Catalog = catalog()): ProbeSpec | undefined {
  return cat.probes.find((p) => [p.argv, ...p.alternatives].some((t) => matchesTemplate(t, argv, cat)));
}

/** How a remote transport wraps a probe. */
export interface RemoteArgvOptions {
  /** The probe needs root and the remote user is not root: prefix the catalog's `sudo` wrapper. */
  readonly sudo: boolean;
  /** Wrapper put first, e.g. `host-root` (`chroot /host`) in a node-debug pod. */
  readonly outer?: string;
}

/**
 * The full argv a remote transport executes for a catalog `argv`:
 * `[outer…] [sudo -n --] env LC_ALL=C argv…`. Throws `BugError` when `argv` is not a
 * catalog probe (a remote transport never runs anything else).
 */
export function remoteArgv(argv: readonly string[], options: RemoteArgvOptions, cat: Catalog = catalog()): string[] {
  if (!probeForArgv(argv, cat)) throw new BugError(`refusing to run ${JSON.stringify(argv)} on a node: it is not a probe of commands/probes.yaml`);
  return [
    ...(options.outer ? wrapperArgv(options.outer, {}, cat) : []),
    ...(options.sudo ? wrapperArgv('sudo', {}, cat) : []),
    ...wrapperArgv('locale', {}, cat),
    ...argv,
  ];
}

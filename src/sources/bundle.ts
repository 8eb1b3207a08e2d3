/**
 * Capture bundles: the raw outputs of every probe, byte for byte, plus the API
 * objects and a manifest. Replay reads the same files back; nothing downstream
 * knows whether data is live (DESIGN.md "One direction of data").
 *
 * Layout of a bundle directory:
 * ```
 * manifest.json           BundleManifest (below)
 * probes/<id>.stdout      what the probe printed on stdout, unchanged
 * probes/<id>.stderr      what it printed on stderr, unchanged
 * api.json                API objects as `kubectl get … -o json` printed them (optional)
 * extra/<name>            other recorded exchanges (DNS answers, kernel traces)
 * ```
 * No secret is ever written: the manifest's `source` holds only the kind and label.
 *
 * A bundle from someone else is untrusted input: every file its manifest names (and
 * manifest.json, extra/ files) must resolve inside the bundle folder — no absolute path,
 * no `..`, no symlink (of the file or of a folder on the way) that leads out — or reading
 * it stops with a `UserError` naming the manifest field and the path ({@link bundleFilePath}).
 */
import { createHash } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, rmSync, openSync, readFileSync, readSync, realpathSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { isAscii } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import path from 'node:path';
import { ParseError, said, UserError, type Said } from '../errors.js';
import type { ProbeRun, ProbeStatus } from './probe-runner.js';
import type { TransportKind } from './transport.js';
import { readTextFile } from './read-text.js';

/** The bundle format version this code writes and reads. */
export const BUNDLE_FORMAT_VERSION = 1;

/** One probe as recorded in a manifest; times in ISO-8601 UTC and milliseconds. */
export interface ManifestProbe {
  readonly id: string;
  /** The catalog argv (the replay key). */
  readonly argv: readonly string[];
  /** What was executed, with transport prefixes. */
  readonly executedArgv: readonly string[];
  readonly status: ProbeStatus;
  readonly exitCode: number | null;
  readonly startedAt: string;
  readonly durationMs: number;
  /** The node CPU time of the probe (user + system, ms) when the transport measured it (ExecResult.cpuMs). */
  readonly cpuMs?: number;
  readonly stdoutFile: string;
  readonly stderrFile: string;
  /** Hex sha256 of the stdout and stderr bytes as written. */
  readonly sha256: { readonly stdout: string; readonly stderr: string };
}

/** `manifest.json` of a capture bundle. */
export interface BundleManifest {
  readonly formatVersion: number;
  readonly nodescopeVersion: string;
  /** ISO-8601 UTC time the capture started. */
  readonly capturedAt: string;
  /** The node's name (from `uname -n` or the API) and the transport label. */
  readonly node: string;
  readonly source: { readonly kind: TransportKind; readonly label: string };
  /** Tool versions read by the version probes, e.g. `{iptables: "v1.8.9 (nf_tables)"}`. */
  readonly toolVersions: Readonly<Record<string, string>>;
  readonly probes: readonly ManifestProbe[];
  readonly api: { readonly file: string; readonly sha256: string } | null;
  /** Free-form provenance note (how the capture was made). */
  readonly note?: string;
  /** Heavy probes the probe plan left out (src/collect/probe-plan.ts), and why; absent when none. */
  readonly skipped?: readonly { readonly id: string; readonly reason: string; readonly silent?: boolean }[];
}

/** A bundle read back: its manifest, and the directory to read files from. */
export interface Bundle {
  readonly dir: string;
  readonly manifest: BundleManifest;
}

/** Hex sha256 of a string's UTF-8 bytes. */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What {@link writeBundle} needs besides the probe runs. */
export interface WriteBundleInput {
  readonly capturedAt: string;
  readonly nodescopeVersion: string;
  readonly node: string;
  readonly source: { readonly kind: TransportKind; readonly label: string };
  readonly toolVersions: Readonly<Record<string, string>>;
  readonly runs: readonly ProbeRun[];
  /** API objects text exactly as the API (or kubectl) returned it. */
  readonly apiText?: string;
  readonly extras?: Readonly<Record<string, string>>;
  readonly note?: string;
  readonly skipped?: readonly { readonly id: string; readonly reason: string; readonly silent?: boolean }[];
  /**
   * A file that holds exactly `apiText` (a fleet's `DIR/api.json`): hard-linked as this
   * bundle's api.json instead of writing the text again, so a fleet keeps one copy on disk
   * and every node bundle stays complete. Falls back to writing when the link fails.
   */
  readonly apiLink?: string;
}

/**
 * Writes a bundle into `dir` (created if needed). Returns the manifest.
 * Throws the filesystem's `Error` when the directory cannot be written.
 */
export function writeBundle(dir: string, input: WriteBundleInput): BundleManifest {
  mkdirSync(path.join(dir, 'probes'), { recursive: true });
  const probes: ManifestProbe[] = input.runs.map((run) => {
    const stdoutFile = `probes/${run.id}.stdout`;
    const stderrFile = `probes/${run.id}.stderr`;
    writeFileSync(path.join(dir, stdoutFile), run.result.stdout);
    writeFileSync(path.join(dir, stderrFile), run.result.stderr);
    return {
      id: run.id,
      argv: run.argv,
      executedArgv: run.result.argv,
      status: run.status,
      exitCode: run.result.exitCode,
      startedAt: run.result.startedAt,
      durationMs: run.result.durationMs,
      ...(run.result.cpuMs !== undefined ? { cpuMs: run.result.cpuMs } : {}),
      stdoutFile,
      stderrFile,
      sha256: { stdout: sha256(run.result.stdout), stderr: sha256(run.result.stderr) },
    };
  });
  let api: BundleManifest['api'] = null;
  if (input.apiText !== undefined) {
    writeApiFile(path.join(dir, 'api.json'), input.apiText, input.apiLink);
    api = { file: 'api.json', sha256: sha256(input.apiText) };
  }
  for (const [name, text] of Object.entries(input.extras ?? {})) {
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new UserError(said('ue.bundle.extraName', { name: JSON.stringify(name) }));
    mkdirSync(path.join(dir, 'extra'), { recursive: true });
    writeFileSync(path.join(dir, 'extra', name), text);
  }
  const manifest: BundleManifest = {
    formatVersion: BUNDLE_FORMAT_VERSION,
    nodescopeVersion: input.nodescopeVersion,
    capturedAt: input.capturedAt,
    node: input.node,
    source: input.source,
    toolVersions: input.toolVersions,
    probes,
    api,
    ...(input.note ? { note: input.note } : {}),
    ...(input.skipped?.length ? { skipped: input.skipped } : {}),
  };
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

/** Writes `text` to `file`, or hard-links `link` there (same bytes) when given and possible. */
function writeApiFile(file: string, text: string, link: string | undefined): void {
  if (link !== undefined) {
    try {
      rmSync(file, { force: true });
      linkSync(link, file);
      return;
    } catch {
      // another file system, or links not allowed: write the copy
    }
  }
  writeFileSync(file, text);
}

/**
 * The bundle directory a user named: the directory itself, or the directory of its
 * `manifest.json` when the path given is that file (`--replay DIR/manifest.json`).
 */
export function bundleDirOf(given: string): string {
  return path.basename(given) === 'manifest.json' && statSync(given, { throwIfNoEntry: false })?.isFile() ? path.dirname(given) : given;
}

/**
 * The path of the file `relative` of bundle folder `dir`, checked to stay inside it:
 * `relative` must be a non-empty string, not absolute, without a `..` segment or a NUL;
 * when the file exists, its real path (symlinks of the file and of every folder on the way
 * resolved) must lie inside the real path of `dir`. Returns the path to open, or
 * `undefined` when nothing exists there (nothing outside is read either way). Throws
 * `UserError` naming `field` (the manifest field, e.g. `probes[3].stdoutFile`) and the path.
 */
export function bundleFilePath(dir: string, relative: unknown, field: string): string | undefined {
  const refuse = (why: Said) => new UserError(said('ue.bundle.outside', { field, path: String(JSON.stringify(relative)), why, dir }), said('ue.bundle.outsideHint'));
  if (typeof relative !== 'string' || relative === '') throw refuse(said('ue.bundle.why.is-not-a-file-name'));
  if (relative.includes('\0')) throw refuse(said('ue.bundle.why.holds-a-nul-byte'));
  if (path.isAbsolute(relative) || /^[A-Za-z]:|^[\\/]/.test(relative)) throw refuse(said('ue.bundle.why.is-an-absolute-path'));
  if (relative.split(/[\\/]/).includes('..')) throw refuse(said('ue.bundle.why.leads-out-of-the-bundle'));
  const file = path.join(dir, relative);
  if (!existsSync(file)) return undefined;
  // The system's realpath(3): one call, where the JS one lstat()s every folder on the way.
  const root = realpathSync.native(dir);
  const real = realpathSync.native(file);
  if (real !== root && !real.startsWith(root.endsWith(path.sep) ? root : root + path.sep)) throw refuse(said('ue.bundle.why.symlink', { real }));
  return real;
}

/**
 * Reads a bundle's manifest; `given` is the bundle directory or its `manifest.json`
 * ({@link bundleDirOf}), and the returned `dir` is the directory. Throws `UserError`
 * when the directory holds no manifest or the manifest names a file outside the bundle
 * ({@link checkManifestFiles}), and `ParseError` when the manifest is not valid JSON or
 * of an unknown format version.
 */
export function readBundle(given: string): Bundle {
  const dir = bundleDirOf(given);
  const file = bundleFilePath(dir, 'manifest.json', 'manifest.json');
  if (file === undefined) {
    // A path that is not there is a typo more often than a wrong folder: say which.
    if (!existsSync(given)) throw new UserError(said('err.notExist', { path: given }), said('err.notExist.hint'));
    throw new UserError(said('ue.bundle.notBundle', { dir }), said('ue.bundle.captureOne'));
  }
  const text = readFileSync(file, 'utf8');
  let manifest: BundleManifest;
  try {
    manifest = JSON.parse(text) as BundleManifest;
  } catch (e) {
    throw new ParseError(`manifest.json is not JSON: ${(e as Error).message}`, file, 0, text.slice(0, 200));
  }
  if (manifest === null || typeof manifest !== 'object' || manifest.formatVersion !== BUNDLE_FORMAT_VERSION) {
    throw new ParseError(`unsupported bundle format version ${String((manifest as Partial<BundleManifest> | null)?.formatVersion)} (this nodescope reads ${BUNDLE_FORMAT_VERSION})`, file, 0, '');
  }
  checkManifestFiles(dir, manifest);
  return { dir, manifest };
}

/**
 * Checks every file `manifest` names (each probe's `stdoutFile`/`stderrFile`, `api.file`)
 * with {@link bundleFilePath}, before anything is read. Throws `UserError` for the first
 * one that is not inside `dir`, or when `probes` is not a list.
 */
export function checkManifestFiles(dir: string, manifest: BundleManifest): void {
  if (!Array.isArray(manifest.probes)) throw new UserError(said('ue.bundle.noProbes', { dir }));
  manifest.probes.forEach((p, i) => {
    bundleFilePath(dir, p?.stdoutFile, `probes[${i}].stdoutFile`);
    bundleFilePath(dir, p?.stderrFile, `probes[${i}].stderrFile`);
  });
  if (manifest.api !== null && manifest.api !== undefined) bundleFilePath(dir, manifest.api.file, 'api.file');
}

/**
 * Reads one file of a bundle as UTF-8 text, or undefined when absent. Throws `UserError`
 * when `relative` is not inside the bundle ({@link bundleFilePath}; `field` names it).
 */
export function readBundleFile(bundle: Bundle, relative: string, field = 'file'): string | undefined {
  const file = bundleFilePath(bundle.dir, relative, field);
  return file === undefined ? undefined : readTextFile(file);
}

/** Bytes read from disk at a time by {@link readBundleFilePieces}. */
export const BUNDLE_PIECE_BYTES = 4 * 1024 * 1024;

/**
 * Characters of one line past which {@link readBundleFilePieces} cuts it: `nft -j` prints
 * its whole ruleset on one line (229 MB for a 25,000-Service node); no line of a
 * line-oriented output (conntrack, rules) comes near it. Small, so that such a line comes
 * in pieces of one read each (a 1M-flow nft replay peaked 20 MB higher at 16 MiB).
 */
export const BUNDLE_MAX_LINE_CHARS = 1024 * 1024;

/**
 * Reads one file of a bundle as UTF-8 text in pieces whose concatenation is what
 * {@link readBundleFile} returns: every piece but the last ends with `\n`, except that a
 * line of `maxLineChars` characters or more is cut inside, into pieces of at least
 * `maxLineChars` characters, between two characters (a multi-byte UTF-8 sequence split
 * between two reads of `pieceBytes` bytes is decoded whole, in the later piece).
 * The whole text is never held (a 1M-flow conntrack table is 220 MB: held once as a
 * string and once as the buffer it is decoded from, it would double the peak memory of a
 * replay). Reads the file again on every iteration. Yields nothing for an absent file.
 * Throws the file system's error when the file cannot be read, and `UserError` when
 * `relative` is not inside the bundle ({@link bundleFilePath}).
 */
export function* readBundleFilePieces(
  bundle: Bundle,
  relative: string,
  pieceBytes = BUNDLE_PIECE_BYTES,
  maxLineChars = BUNDLE_MAX_LINE_CHARS,
): Generator<string> {
  const file = bundleFilePath(bundle.dir, relative, 'file');
  if (file !== undefined) yield* readFilePieces(file, pieceBytes, maxLineChars);
}

/**
 * The bytes of `file` in line-aligned chunks of about `chunkBytes` (each ends with `\n` but
 * the last, which holds what follows the last `\n`; a line longer than the buffer grows it),
 * read into one buffer that is reused: each chunk is a view that is valid only until the next
 * is asked for. For a parser that reads bytes in place (the conntrack table: a 220 MB capture
 * is never decoded into strings). Yields nothing for an empty file. Throws the file system's
 * error when it cannot be read.
 */
export function* readFileLineChunks(file: string, chunkBytes = 512 * 1024): Generator<Uint8Array> {
  const fd = openSync(file, 'r');
  try {
    let buffer = new Uint8Array(chunkBytes);
    // The unfinished last line stays at the buffer's start (`held`), read on after.
    let held = 0;
    for (;;) {
      if (held === buffer.length) {
        const bigger = new Uint8Array(buffer.length * 2);
        bigger.set(buffer);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, held, buffer.length - held, null);
      const end = held + n;
      if (n === 0) {
        if (end > 0) yield buffer.subarray(0, end);
        return;
      }
      const cut = buffer.lastIndexOf(10, end - 1) + 1;
      if (cut === 0) {
        held = end;
        continue;
      }
      yield buffer.subarray(0, cut);
      buffer.copyWithin(0, cut, end);
      held = end - cut;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * {@link readBundleFilePieces} of a file by its path (a parse worker reads a bundle file
 * the main thread named). Throws the file system's error when it cannot be read.
 */
export function* readFilePieces(file: string, pieceBytes = BUNDLE_PIECE_BYTES, maxLineChars = BUNDLE_MAX_LINE_CHARS): Generator<string> {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(pieceBytes);
    const decoder = new StringDecoder('utf8');
    // Until the first byte above 0x7f, reads are decoded as Latin-1 (same characters, far
    // cheaper); from there on by the decoder, which may hold a sequence cut between reads.
    let ascii = true;
    const decode = (end: number): string => (ascii ? buffer.toString('latin1', 0, end) : decoder.write(buffer.subarray(0, end)));
    // The unfinished last line stays as bytes at the buffer's start (`held`), read on after:
    // each piece is decoded once, straight into a flat string (no string carry to join).
    let held = 0;
    // A line longer than the buffer: its text so far (decoded up to a character's end).
    let carry = '';
    for (;;) {
      const n = readSync(fd, buffer, held, pieceBytes - held, null);
      if (ascii && n > 0 && !isAscii(buffer.subarray(held, held + n))) ascii = false;
      const end = held + n;
      if (n === 0) {
        const text = carry + (end > 0 ? decode(end) : '') + (ascii ? '' : decoder.end());
        if (text !== '') yield text;
        return;
      }
      const cut = buffer.lastIndexOf(10, end - 1) + 1;
      if (cut === 0) {
        // Inside a line that fills the buffer: decoded as it comes; the decoder ends every write between characters.
        carry += decode(end);
        held = 0;
        if (carry.length >= maxLineChars) {
          const piece = carry;
          carry = '';
          yield piece;
        }
        continue;
      }
      const piece = carry + decode(cut);
      carry = '';
      buffer.copyWithin(0, cut, end);
      held = end - cut;
      yield piece;
    }
  } finally {
    closeSync(fd);
  }
}

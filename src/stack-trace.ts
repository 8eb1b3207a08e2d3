/**
 * Readable stack traces for the executable without paying for them at start-up.
 *
 * Node's own source-map support (`--enable-source-maps`, `process.setSourceMapsEnabled`)
 * reads and parses every loaded file's map and splits its text into lines as the file
 * loads: ~50 ms of the bundled binary's start (bench/RESULTS.md). Here a stack is mapped
 * only when something reads `error.stack`: each frame in a file under `root` that has a
 * `FILE.js.map` beside it (esbuild's and tsc's output) gets its `src/….ts:line:column`,
 * the map read once per file. Other frames (node_modules, node:) print as V8 prints them.
 */
import { readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The source position of a generated one: absolute path, 1-based line and column. */
export interface SourcePosition {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/**
 * Maps generated positions of files under one directory through their `.map` files.
 * Lines and columns are 1-based, as in stack traces. Never throws: a missing or
 * malformed map (or a position it does not cover) gives null.
 */
export class SourceMapper {
  private readonly maps = new Map<string, SourceMap | null>();

  /** `root`: only files below this directory are mapped (absolute path). */
  constructor(private readonly root: string) {}

  /** `file`: a path or `file:` URL, as `CallSite.getFileName()` gives it. */
  map(file: string, line: number, column: number): SourcePosition | null {
    const filePath = file.startsWith('file:') ? fileURLToPath(file) : file;
    if (!filePath.startsWith(this.root + path.sep)) return null;
    const map = this.mapOf(filePath);
    if (!map) return null;
    const entry = map.findEntry(line - 1, column - 1) as Partial<{ originalSource: string; originalLine: number; originalColumn: number }>;
    if (entry.originalSource === undefined || entry.originalLine === undefined || entry.originalColumn === undefined) return null;
    const source = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : path.resolve(path.dirname(filePath), entry.originalSource);
    return { file: source, line: entry.originalLine + 1, column: entry.originalColumn + 1 };
  }

  private mapOf(filePath: string): SourceMap | null {
    let map = this.maps.get(filePath);
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${filePath}.map`, 'utf8')) as SourceMapPayload);
      } catch {
        map = null;
      }
      this.maps.set(filePath, map);
    }
    return map;
  }
}

/** One frame as V8 prints it, its generated location replaced by the source one where known. */
export function formatFrame(frame: NodeJS.CallSite, mapper: SourceMapper): string {
  const text = String(frame);
  const file = frame.getFileName();
  const line = frame.getLineNumber();
  const column = frame.getColumnNumber();
  if (!file || line === null || column === null) return text;
  const at = mapper.map(file, line, column);
  if (!at) return text;
  const generated = `${file}:${line}:${column}`;
  const i = text.lastIndexOf(generated);
  return i < 0 ? text : `${text.slice(0, i)}${at.file}:${at.line}:${at.column}${text.slice(i + generated.length)}`;
}

/**
 * Makes `error.stack` of every error created from now on name source files for frames
 * in files under `root` (see the module comment). Installs `Error.prepareStackTrace`;
 * code that sets its own (and restores ours) keeps working.
 */
export function installStackMapping(root: string): void {
  const mapper = new SourceMapper(path.resolve(root));
  Error.prepareStackTrace = (error: Error, frames: NodeJS.CallSite[]) => {
    let head: string;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = 'Error';
    }
    return [head, ...frames.map((f) => `    at ${formatFrame(f, mapper)}`)].join('\n');
  };
}

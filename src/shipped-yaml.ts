/**
 * YAML files that ship with nodescope (the probe catalog, commands/*.yaml), read at
 * start-up. The bundled executable carries each one's text and its parse, made at
 * bundle time by scripts/bundle.mjs with the same `yaml` parser: when the file on disk
 * still has that text, the parse is reused (the yaml library parsing the catalog cold
 * cost ~150 ms of start-up, bench/RESULTS.md); an edited file is parsed as it is now.
 * Unbundled (tsc output, vitest) every file is parsed.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { yamlLib } from './text/yaml-lib.js';
import { packageRoot } from './paths.js';

/** Filled in by the bundler (esbuild `define`): JSON of package-relative path → text and parse. */
declare const __NODESCOPE_SHIPPED_YAML__: string;

/**
 * The YAML document in `file`, as `yaml`'s `parse(text)` with default options returns it
 * (plain objects, arrays, strings, numbers, booleans, null). Throws the `fs` error when the
 * file cannot be read and yaml's `YAMLParseError` when it is not valid YAML.
 */
export function readShippedYaml(file: string): unknown {
  const text = readFileSync(file, 'utf8');
  if (typeof __NODESCOPE_SHIPPED_YAML__ === 'string') {
    // Parsed again on every call: callers may keep and change what they get.
    const shipped = JSON.parse(__NODESCOPE_SHIPPED_YAML__) as Record<string, { text: string; value: unknown } | undefined>;
    const pre = shipped[path.relative(packageRoot(), path.resolve(file))];
    if (pre && pre.text === text) return pre.value;
  }
  return yamlLib().parse(text);
}

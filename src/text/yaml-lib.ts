/**
 * The `yaml` library (eemeli/yaml, YAML 1.2), loaded on first use instead of with the module
 * that names it: most commands never parse or print YAML (`trace`, `show … -o json`), and the
 * bundled executable would otherwise load and compile yaml's 160 KB chunk at every start.
 * Loaded through `require` (node:module `createRequire`), which is synchronous, so callers stay
 * synchronous; the library then comes from node_modules (a dependency in package.json), as the
 * bundle's external packages do.
 */
import { createRequire } from 'node:module';

type YamlLib = typeof import('yaml');

let lib: YamlLib | undefined;

/** The `yaml` module's exports; the first call loads it. Throws `require`'s error when the package is missing. */
export function yamlLib(): YamlLib {
  return (lib ??= createRequire(import.meta.url)('yaml') as YamlLib);
}

/** yaml's `LineCounter` (a new one per `new`), made from the library loaded on first use. */
export const LineCounter = function LineCounter() {
  return new (yamlLib().LineCounter)();
} as unknown as YamlLib['LineCounter'];
/** yaml's `LineCounter` instance type. */
export type LineCounter = import('yaml').LineCounter;

/** yaml's `parseAllDocuments`, from the library loaded on first use. */
export const parseAllDocuments: YamlLib['parseAllDocuments'] = ((...args: Parameters<YamlLib['parseAllDocuments']>) => yamlLib().parseAllDocuments(...args)) as YamlLib['parseAllDocuments'];

/** yaml's `parseDocument`, from the library loaded on first use. */
export const parseDocument: YamlLib['parseDocument'] = ((...args: Parameters<YamlLib['parseDocument']>) => yamlLib().parseDocument(...args)) as YamlLib['parseDocument'];

/** yaml's `isNode`, from the library loaded on first use. */
export function isNode(node: unknown): node is import('yaml').Node {
  return yamlLib().isNode(node);
}

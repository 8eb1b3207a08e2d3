/**
 * The one envelope of every machine-readable document nodescope prints (`show … -o json|yaml`,
 * `trace`, `dig`, `diagnose`, `fleet diagnose`): `apiVersion` and `kind` first, as Kubernetes
 * objects carry them, so a script can tell which document and which version of its fields it
 * reads. The fields after them are the command's own (README documents each); a field is
 * only ever added within a version, a change of meaning takes a new `apiVersion`.
 */
import { yamlLib } from './yaml-lib.js';
import { toJson } from './json.js';

/** The schema group and version of every document. */
export const DOCUMENT_API_VERSION = 'nodescope.dev/v1';

/** `-o` values of the commands that print documents; `text` is the default everywhere. */
export type OutputFormat = 'text' | 'wide' | 'json' | 'yaml' | 'name';

/** The `-o` formats that print a document (the rest print text). */
export type DocumentFormat = 'json' | 'yaml';

/** True for `json` and `yaml`. */
export function isDocumentFormat(format: string | undefined): format is DocumentFormat {
  return format === 'json' || format === 'yaml';
}

/** `body` with `apiVersion` and `kind` in front (a `kind` or `apiVersion` field of the body would be overwritten: none has one). */
export function documentOf(kind: string, body: object): Record<string, unknown> {
  return { apiVersion: DOCUMENT_API_VERSION, kind, ...body };
}

/**
 * The document as JSON ({@link toJson}: bigints as decimal strings, terminal-acting characters
 * escaped) or YAML (the same values, through the `yaml` package; strings it would print raw
 * are made terminal-safe by the caller, as for text).
 */
export function toDocument(kind: string, body: object, format: DocumentFormat = 'json'): string {
  const json = toJson(documentOf(kind, body));
  if (format === 'json') return json;
  return yamlLib().stringify(JSON.parse(json), { lineWidth: 0 });
}

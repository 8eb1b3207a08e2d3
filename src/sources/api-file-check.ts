/**
 * The check an `--api-file` passes before it is used (src/sources/api-file.ts opens the file,
 * src/sources/api-check-worker.ts runs this on a worker thread): the text must yield API
 * objects (src/parsers/k8s-objects.ts), or be an empty List.
 */
import { said, UserError } from '../errors.js';
import { formatDiagnostic } from '../model/diagnostics.js';
import { parseK8sObjects } from '../parsers/k8s-objects.js';
import { fieldText, scanJsonList } from '../parsers/json-list.js';
import type { ApiObjects } from '../model/k8s.js';

/**
 * Refuses an `--api-file` that yields nothing: empty, or no object parsed while the
 * parser reported errors or warnings (JSON/YAML that does not parse, or valid JSON of
 * another shape). A file with some objects keeps working, its diagnostics shown as
 * usual; an empty `List` (a cluster with nothing in it) is accepted.
 * Throws `UserError` naming the file with the parser's first diagnostic (line, text).
 */
export function checkApiFileText(text: string, file: string): void {
  if (!/\S/.test(text)) throw new UserError(said('err.apiFileEmpty', { file }), said('ue.apiFile.hint'));
  const one = oneItem(text, file, () => true);
  if (one && objectCount(one) > 0) return;
  const { value, diagnostics } = parseK8sObjects(text, file);
  const objects = objectCount(value);
  const problems = diagnostics.filter((d) => d.severity === 'error' || d.severity === 'warning');
  if (objects > 0 || problems.length === 0) return;
  const more = problems.length > 1 ? said('ue.apiFile.more', { n: problems.length - 1 }) : '';
  throw new UserError(said('ue.apiFile.noObjects', { file, problem: formatDiagnostic(problems[0]!), more }), said('ue.apiFile.hint'));
}

/**
 * The objects of one item of the JSON List `text` (src/parsers/json-list.ts), parsed alone in
 * the same List: the first item whose kind `wanted` accepts. The whole text yields these
 * objects too (each item of a List is converted on its own, and a List deletes nothing), so a
 * check that asks only whether there is such an object need not convert the others. Null when
 * there is no such item, or the text is not such a List (the caller parses it whole).
 */
export function oneItem(text: string, file: string, wanted: (kind: string) => boolean): ApiObjects | null {
  const list = scanJsonList(text, [['kind']]);
  const item = list?.items.find((i) => {
    const kind = fieldText(text, i, 0);
    return kind !== undefined && kind.startsWith('"') && wanted(JSON.parse(kind) as string);
  });
  if (!list || !item) return null;
  return parseK8sObjects(`${text.slice(0, list.open + 1)}${text.slice(item.start, item.end)}${text.slice(list.close)}`, file).value;
}

/** How many objects `value` holds. */
export const objectCount = (v: ApiObjects) => v.services.length + v.endpointSlices.length + v.pods.length + v.nodes.length + v.others.length;

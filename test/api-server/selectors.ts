/**
 * Label and field selectors with the grammar of
 * `k8s.io/apimachinery/pkg/labels/selector.go` and `pkg/fields/selector.go`.
 *
 * Label: comma-separated requirements `k`, `!k`, `k=v`, `k==v`, `k!=v`,
 * `k in (a,b)`, `k notin (a,b)`, `k>N`, `k<N`. Field: comma-separated
 * `k=v`, `k==v`, `k!=v` with `\,` `\=` `\\` escapes. Parse failures throw
 * {@link SelectorError}; the server answers them as 400 Bad Request.
 */

/** A selector string that does not parse. */
export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

/** One parsed label requirement. */
export interface LabelRequirement {
  key: string;
  op: 'exists' | '!' | '=' | '!=' | 'in' | 'notin' | 'gt' | 'lt';
  values: string[];
}

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(k: string, src: string): string {
  if (!KEY.test(k)) throw new SelectorError(`unable to parse requirement: invalid label key "${k}" in "${src}"`);
  return k;
}

function checkValue(v: string, src: string): string {
  if (!VALUE.test(v) || v.length > 63) throw new SelectorError(`unable to parse requirement: invalid label value "${v}" in "${src}"`);
  return v;
}

/** Splits on commas that are outside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** Parses a label selector; `''` selects everything. Throws {@link SelectorError}. */
export function parseLabelSelector(src: string): LabelRequirement[] {
  if (src.trim() === '') return [];
  const reqs: LabelRequirement[] = [];
  for (const rawPart of splitTop(src)) {
    const part = rawPart.trim();
    if (part === '') throw new SelectorError(`found '', expected: identifier in "${src}"`);
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^!\s*(\S+)$/))) {
      reqs.push({ key: checkKey(m[1]!, src), op: '!', values: [] });
    } else if ((m = part.match(/^(\S+?)\s+(in|notin)\s*\((.*)\)$/))) {
      const values = m[3]!.split(',').map((v) => checkValue(v.trim(), src));
      reqs.push({ key: checkKey(m[1]!, src), op: m[2] as 'in' | 'notin', values });
    } else if ((m = part.match(/^([^=!<>\s]+)\s*(==|=|!=)\s*([^=!<>\s]*)$/))) {
      reqs.push({ key: checkKey(m[1]!, src), op: m[2] === '!=' ? '!=' : '=', values: [checkValue(m[3]!, src)] });
    } else if ((m = part.match(/^([^=!<>\s]+)\s*([<>])\s*(-?\d+)$/))) {
      reqs.push({ key: checkKey(m[1]!, src), op: m[2] === '>' ? 'gt' : 'lt', values: [m[3]!] });
    } else if ((m = part.match(/^([^=!<>\s()]+)$/))) {
      reqs.push({ key: checkKey(m[1]!, src), op: 'exists', values: [] });
    } else {
      throw new SelectorError(`unable to parse requirement: "${part}" in "${src}"`);
    }
  }
  return reqs;
}

/** Whether `labels` satisfy every requirement (labels.Selector.Matches). */
export function matchLabels(reqs: readonly LabelRequirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.op) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
        return has && v === r.values[0];
      case '!=':
        return !has || v !== r.values[0];
      case 'in':
        return has && r.values.includes(v!);
      case 'notin':
        return !has || !r.values.includes(v!);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        return r.op === 'gt' ? n > bound : n < bound;
      }
    }
  });
}

/** One parsed field requirement. */
export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

/** Splits on an unescaped `sep`, keeping escapes for the next stage. */
function splitUnescaped(s: string, sep: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\' && i + 1 < s.length) {
      cur += ch + s[i + 1];
      i++;
    } else if (ch === sep) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

function unescapeField(s: string, src: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\') {
      const next = s[i + 1];
      if (next === undefined || !'\\,='.includes(next)) throw new SelectorError(`invalid field selector: invalid escape sequence in "${src}"`);
      out += next;
      i++;
    } else if (ch === ',' || ch === '=') {
      throw new SelectorError(`invalid field selector: unescaped "${ch}" in "${src}"`);
    } else out += ch;
  }
  return out;
}

/**
 * Parses a field selector and checks every field against `supported` (the
 * resource's field labels). Throws {@link SelectorError} with kube-apiserver's
 * `field label not supported: X` for an unknown field.
 */
export function parseFieldSelector(src: string, supported: readonly string[]): FieldRequirement[] {
  if (src.trim() === '') return [];
  return splitUnescaped(src, ',').map((part) => {
    const m = part.match(/^([^=!]+?)(==|!=|=)(.*)$/s);
    if (!m) throw new SelectorError(`invalid field selector: "${part}" is not of the form key=value, key==value or key!=value`);
    const field = m[1]!.trim();
    if (!supported.includes(field)) throw new SelectorError(`field label not supported: ${field}`);
    return { field, op: m[2] === '!=' ? '!=' : '=', value: unescapeField(m[3]!, src) };
  });
}

/** Whether the object's field values (`get(field)`) satisfy every requirement. */
export function matchFields(reqs: readonly FieldRequirement[], get: (field: string) => string): boolean {
  return reqs.every((r) => (r.op === '=' ? get(r.field) === r.value : get(r.field) !== r.value));
}

/**
 * `/` in the Rules pane's chain list over what each chain holds (issue 22 item 2): a chain or
 * set is kept when its name matches or when the same filter inside it would keep a row (a
 * rule's comment, matches, addresses, target; a set element's key and value). With `!` the
 * list keeps the chains that hold no match anywhere, name included. Filter language:
 * src/text/row-filter.ts.
 *
 * The texts are gathered once per list, on the first filter, into one lowercased string with
 * offsets (a huge node has 272,000 chains and 800,000 rules): a plain filter is then one
 * native substring scan, a regex one test per rule. Pure.
 */
import { filteredPositions, lazyRows, type LazyRows, type RowIndex } from './rules-view.js';
import { isPlainFilter, rowMatcher } from '../text/row-filter.js';

/**
 * The held texts of a list: `text` is every rule text lowercased, each followed by `\n`;
 * chain i's rules are `ruleStart[firstRule[i]] … ruleStart[firstRule[i + 1]]` (UTF-16
 * offsets into `text`; `ruleStart` has one more entry than there are rules).
 */
export interface HeldIndex {
  readonly text: string;
  readonly ruleStart: Uint32Array;
  readonly firstRule: Uint32Array;
}

const heldCache = new WeakMap<object, HeldIndex>();
const resultCache = new WeakMap<HeldIndex, { readonly filter: string; readonly picked: Uint32Array }>();

/** Pieces joined per chunk so that building never holds one small string per rule at once. */
const CHUNK = 4096;

/** The {@link HeldIndex} of `index` (built on the first call for `key`, reused after); null when the list has no `held`. */
export function heldIndex<T>(index: RowIndex<T>, key: object): HeldIndex | null {
  const held = index.held;
  if (!held) return null;
  const cached = heldCache.get(key);
  if (cached) return cached;
  const firstRule = new Uint32Array(index.length + 1);
  let starts = new Uint32Array(Math.max(16, index.length * 4));
  const chunks: string[] = [];
  let pieces: string[] = [];
  let offset = 0;
  let rules = 0;
  for (let i = 0; i < index.length; i++) {
    firstRule[i] = rules;
    for (const t of held(i)) {
      if (rules + 1 >= starts.length) {
        const grown = new Uint32Array(starts.length * 2);
        grown.set(starts);
        starts = grown;
      }
      starts[rules++] = offset;
      const lower = t.toLowerCase();
      pieces.push(lower, '\n');
      offset += lower.length + 1;
      if (pieces.length >= CHUNK) {
        chunks.push(pieces.join(''));
        pieces = [];
      }
    }
  }
  firstRule[index.length] = rules;
  starts[rules] = offset;
  chunks.push(pieces.join(''));
  const built: HeldIndex = { text: chunks.join(''), ruleStart: starts.slice(0, rules + 1), firstRule };
  heldCache.set(key, built);
  return built;
}

/** Marks the chains whose held text contains the lowercase `needle` (no `\n`): one scan of the whole text. */
function markPlain(h: HeldIndex, needle: string, mark: Uint8Array): void {
  const { text, ruleStart, firstRule } = h;
  let chain = 0;
  for (let at = text.indexOf(needle); at >= 0; ) {
    while (ruleStart[firstRule[chain + 1]!]! <= at) chain++;
    mark[chain] = 1;
    const end = ruleStart[firstRule[chain + 1]!]!;
    at = text.indexOf(needle, end);
  }
}

/** Marks the chains with a rule whose text `test` accepts. */
function markEach(h: HeldIndex, test: (text: string) => boolean, mark: Uint8Array): void {
  const { text, ruleStart, firstRule } = h;
  for (let chain = 0; chain + 1 < firstRule.length; chain++) {
    if (mark[chain]) continue;
    for (let r = firstRule[chain]!, e = firstRule[chain + 1]!; r < e; r++) {
      if (test(text.slice(ruleStart[r]!, ruleStart[r + 1]! - 1))) {
        mark[chain] = 1;
        break;
      }
    }
  }
}

/**
 * The positions (ascending) of the list rows kept by `filter` over names and held texts
 * (module note); `key` identifies the list as for {@link filteredPositions}. A list
 * without `held` is filtered by its names only.
 */
export function heldPositions<T>(index: RowIndex<T>, key: object, filter: string): Uint32Array {
  const h = heldIndex(index, key);
  const inverse = filter.startsWith('!');
  const body = inverse ? filter.slice(1) : filter;
  if (!h || body === '') return filteredPositions(index, key, filter);
  const cached = resultCache.get(h);
  if (cached?.filter === filter) return cached.picked;
  const mark = new Uint8Array(index.length);
  for (const i of filteredPositions(index, key, body)) mark[i] = 1;
  if (isPlainFilter(body)) markPlain(h, body.toLowerCase(), mark);
  else markEach(h, rowMatcher(body).test, mark);
  const out = new Uint32Array(index.length);
  let count = 0;
  for (let i = 0; i < index.length; i++) if ((mark[i] === 1) !== inverse) out[count++] = i;
  const picked = out.slice(0, count);
  resultCache.set(h, { filter, picked });
  return picked;
}

/** {@link heldPositions} as rows (virtualised); every row when `filter` is empty. */
export function heldRows<T>(index: RowIndex<T>, key: object, filter: string): LazyRows<T> {
  if (!filter) return lazyRows(index.length, (i) => index.row(i));
  const picked = heldPositions(index, key, filter);
  return lazyRows(picked.length, (k) => index.row(picked[k]!));
}

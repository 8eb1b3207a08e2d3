/**
 * Turns of the event loop between pieces of a staged load's work, and the line-aligned
 * chunks a long text is parsed in (src/collect/build-snapshot.ts).
 */
import { collectGarbageIfGrown } from './memory.js';

/**
 * One turn of the event loop: pending input and timers run before the next piece of work;
 * first a full GC if the parse so far has grown the heap by a quarter (`collectGarbageIfGrown`).
 */
export function turn(): Promise<void> {
  collectGarbageIfGrown();
  return new Promise((resolve) => setImmediate(resolve));
}

/** Line-aligned pieces of `text` of about `size` characters, a turn of the event loop before each but the first. */
export async function* chunksOf(text: string, size: number): AsyncGenerator<string> {
  let pos = 0;
  while (pos < text.length) {
    if (pos > 0) await turn();
    let end = text.indexOf('\n', Math.min(text.length, pos + size));
    end = end < 0 ? text.length : end + 1;
    yield text.slice(pos, end);
    pos = end;
  }
}

/** {@link chunksOf} over the pieces of one text, in order; a line cut between two pieces is joined first. */
export async function* chunksOfPieces(pieces: Iterable<string>, size: number): AsyncGenerator<string> {
  let first = true;
  let carry = '';
  for (const piece of pieces) {
    if (!first) await turn();
    first = false;
    const text = carry + piece;
    const cut = text.lastIndexOf('\n') + 1;
    carry = text.slice(cut);
    if (cut > 0) yield* chunksOf(cut === text.length ? text : text.slice(0, cut), size);
  }
  if (carry !== '') yield carry;
}

/** The items of `items` (e.g. a file's byte chunks), a turn of the event loop before each but the first. */
export async function* withTurns<T>(items: Iterable<T>, between: () => Promise<void> = turn): AsyncGenerator<T> {
  let first = true;
  for (const item of items) {
    if (!first) await between();
    first = false;
    yield item;
  }
}

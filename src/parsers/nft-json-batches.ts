/**
 * The items of `nft -j` output (`{"nftables": [ITEM, ITEM, …]}`, libnftables-json(5)) in
 * batches of many items, each batch one `JSON.parse`: the text is cut between two items
 * found by a native search for what nft prints there (`}, {"rule": {"family": "`), so no
 * JavaScript loop reads every character. A cut the search put inside a string or an
 * object (a comment holding that text) cannot go unnoticed: the batch before it is then
 * not a complete list of JSON values and its parse fails; the reader then says the text
 * is not of the shape it reads (`false`), and the caller reads it another way. Pure.
 */

/** Space JSON allows between tokens. */
const WS = '[ \\t\\n\\r]*';
const OPENER = new RegExp(`^${WS}\\{${WS}"nftables"${WS}:${WS}\\[`);
const CLOSER = new RegExp(`\\]${WS}\\}${WS}$`);
/** Where nft's printer ends one item and starts the next (the kinds a big ruleset has many of). */
const CUT = /\}, \{"(?:rule|element|set|map|chain|table|counter)": \{"family": "/g;
/** The `}` and `, ` between two items at a {@link CUT}. */
const CUT_GAP = 3;

// Counters can exceed 2^53; quote long integers after these keys so JSON.parse keeps every digit.
const BIG_COUNTER = /"(packets|bytes)"(\s*):(\s*)(\d{16,})/g;

/** `text` with every integer of 16 digits or more after `"packets":`/`"bytes":` quoted (read then as text, not as a rounded number). */
export function quoteBigCounters(text: string): string {
  return text.replace(BIG_COUNTER, '"$1"$2:$3"$4"');
}

/** How {@link nftJsonBatches} ended (see there). */
export type BatchesEnd = 'read' | 'bad-batch' | 'other-shape';

/**
 * The items of the `nftables` array of the text given by `pieces` (cut anywhere), parsed,
 * in batches of the items of about `batchChars` characters of text (at least one item).
 * Returns `read` when the whole text was read so (the batches hold every item, in order);
 * else the batches yielded are only a prefix and the caller reads the text another way:
 * `bad-batch` when a batch was not valid JSON (bad JSON, or a cut inside a string: an item
 * scanner may still read it), `other-shape` when the text is not `{"nftables": [ITEM, …]}`
 * at all (no opener, no `]}` at the end: truncated; an array with no item).
 */
export function* nftJsonBatches(pieces: Iterable<string>, batchChars: number): Generator<unknown[], BatchesEnd> {
  let text = '';
  let opened = false;
  let any = false;
  for (const piece of pieces) {
    text = text === '' ? piece : text + piece;
    if (!opened) {
      const open = OPENER.exec(text);
      // The opener is a few characters: a first piece too short to hold it is grown.
      if (open === null) {
        if (text.length > 4096) return 'other-shape';
        continue;
      }
      opened = true;
      text = text.slice(open[0].length);
    }
    let pos = 0;
    for (;;) {
      CUT.lastIndex = pos + batchChars;
      const cut = CUT.exec(text);
      if (cut === null) break;
      const batch = parseBatch(text.slice(pos, cut.index + 1));
      if (batch === null) return 'bad-batch';
      any = true;
      yield batch;
      pos = cut.index + CUT_GAP;
    }
    if (pos > 0) text = text.slice(pos);
  }
  if (!opened) return 'other-shape';
  const close = CLOSER.exec(text);
  if (close === null) return 'other-shape';
  const last = text.slice(0, close.index);
  if (last.trim() === '') return any ? 'read' : 'other-shape';
  const batch = parseBatch(last);
  if (batch === null) return 'bad-batch';
  yield batch;
  return 'read';
}

/** The values of `text` read as the inside of a JSON array; null when it is not (or is empty). */
function parseBatch(text: string): unknown[] | null {
  try {
    const items = JSON.parse(`[${quoteBigCounters(text)}]`) as unknown[];
    return items.length > 0 ? items : null;
  } catch {
    return null;
  }
}

import { describe, expect, it } from 'vitest';
import { parseJsonObject } from '../../src/text/json.js';
import { parseBpftoolMapDump } from '../../src/parsers/bpftool-map-dump.js';
import { parseRawExchange } from '../../src/dns/raw.js';

describe('parseJsonObject', () => {
  it('gives the object of a JSON object text', () => {
    expect(parseJsonObject('{"a": [1, {"b": null}]}')).toEqual({ object: { a: [1, { b: null }] }, error: null });
  });

  it('refuses every other JSON value with "not an object"', () => {
    for (const text of ['[]', '[{"a":1}]', 'null', '1', '"x"', 'true']) expect(parseJsonObject(text)).toEqual({ object: null, error: 'not an object' });
  });

  it('gives the engine message for text that is not JSON, never throwing', () => {
    for (const text of ['', '{', '{"a":}', 'key: 0a']) {
      const r = parseJsonObject(text);
      expect(r.object).toBeNull();
      expect(r.error).not.toBe('not an object');
      expect(r.error).toMatch(/JSON|Unexpected|token|end/i);
    }
  });

  it('is what the bpftool entry and the DNS exchange readers report', () => {
    const dump = parseBpftoolMapDump('[{"key":["0x01"],"value":["0x02"]},[1,2]\n]', 'm');
    expect(dump.value.entries).toHaveLength(1);
    expect(dump.diagnostics.map((d) => [d.code, d.message])).toEqual([['bad-entry', 'entry is not a JSON object: not an object']]);
    expect(parseRawExchange('[1]\n', 'p').diagnostics.map((d) => [d.code, d.line, d.message])).toEqual([['not-json', 1, 'not a JSON object: not an object']]);
  });
});

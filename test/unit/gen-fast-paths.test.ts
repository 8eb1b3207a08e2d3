/**
 * The parsers' fast paths (added for large captures) give what their general paths give:
 * bpftool's compact `-j` entries read in place equal the same entries read through
 * `JSON.parse` (pretty-printed, so the general path is taken); the k8s parser's one-parse
 * reading of a single JSON value equals its split reading of the same value next to another.
 */
import { describe, expect, it } from 'vitest';
import { generateWorld, modeOutputs } from '../../bench/gen/capture.js';
import { parseBpftoolMapDump } from '../../src/parsers/bpftool-map-dump.js';
import { decodeCiliumLbMaps } from '../../src/parsers/bpftool-lb-decode.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';

const world = generateWorld({ services: 25, endpoints: 3, seed: 'fast', modes: ['cilium'], conntrack: 0 });
const cilium = modeOutputs(world, 'cilium');
const MAPS: Record<string, string> = {
  'bpf-lb4-services': 'cilium_lb4_services_v2',
  'bpf-lb4-backends': 'cilium_lb4_backends_v3',
  'bpf-lb4-reverse-nat': 'cilium_lb4_reverse_nat',
};
/** `bpftool -p` spelling of the same dump: blanks and newlines, so no entry is compact. */
const pretty = (text: string) => `${JSON.stringify(JSON.parse(text), null, 2)}\n`;
const bytesOf = (text: string) => parseBpftoolMapDump(text, 'dump').value.entries.map((e) => ({ key: [...(e.key ?? [])], value: [...(e.value ?? [])], perCpu: e.perCpuValues, inner: e.innerMapId, formatted: e.formatted }));

describe('bpftool compact entries', () => {
  it.each(Object.keys(MAPS))('%s: the same bytes as through JSON.parse', (id) => {
    const text = cilium.get(id)!;
    const fast = bytesOf(text);
    expect(fast.length).toBeGreaterThan(20);
    expect(fast).toEqual(bytesOf(pretty(text)));
    expect(parseBpftoolMapDump(text, 'dump').diagnostics).toEqual([]);
  });

  it('decodes to the same LB table either way', () => {
    const dumps = (f: (t: string) => string) => Object.entries(MAPS).map(([id, name]) => ({ name, text: f(cilium.get(id)!), origin: id }));
    const strip = (t: ReturnType<typeof decodeCiliumLbMaps>) => JSON.stringify(t.value.table.services.map((s) => ({ ...s, raw: '' })));
    expect(strip(decodeCiliumLbMaps(dumps((t) => t)))).toBe(strip(decodeCiliumLbMaps(dumps(pretty))));
  });

  it('falls back to JSON for an entry with anything else, and still reads bad bytes as errors', () => {
    const text = '[{"key":["0x0a","0x00"],"value":["0x01"]},{"key":["0x0a","0xzz"],"value":["0x01"]},{"key":["0x0b"],"value":["0x02"],"formatted":{"k":1}}]\n';
    const r = parseBpftoolMapDump(text, 'dump');
    expect(r.value.entries.map((e) => e.key && [...e.key])).toEqual([[10, 0], null, [11]]);
    expect(r.value.entries[2]!.formatted).toEqual({ k: 1 });
    expect(r.diagnostics.map((d) => d.code)).toEqual(['bad-key']);
  });
});

describe('k8s single JSON value', () => {
  it('reads the generated List the same alone (one parse) as followed by another value (split)', () => {
    const alone = parseK8sObjects(`\n\n${world.apiText}`, 'api.json');
    const split = parseK8sObjects(`\n\n${world.apiText}{"apiVersion":"v1","kind":"List","items":[]}\n`, 'api.json');
    expect(alone.diagnostics).toEqual([]);
    expect(split.diagnostics).toEqual([]);
    expect(alone.value).toEqual(split.value);
    expect(alone.value.services[0]!.source.line).toBe(3);
  });
});

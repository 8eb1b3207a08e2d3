/**
 * The `--api-file` check's pass over the List's bytes (src/parsers/json-list-first.ts,
 * `checkApiFileText` with bytes in src/sources/api-file.ts) against the scan it replaces
 * (`scanJsonList` + the first item whose `kind` is a string; `checkApiFileTextViaScan`, kept
 * as the reference): whenever the byte pass answers, it answers what the scan does; it answers
 * on the labs' and generated Lists; and the check says the same — accepted, or the very
 * message and hint — on the labs, generated Lists, the corpus, odd texts and thousands of
 * edited ones (issue 23, live Cilium: the check before the first probe). The TUI's check by the
 * whole parse (`checkApiFileTextWhole`) is held to the same verdicts and returns that parse.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorld } from '../../bench/gen/capture.js';
import { fieldText, scanJsonList } from '../../src/parsers/json-list.js';
import { firstKindItem, MAX_DEPTH } from '../../src/parsers/json-list-first.js';
import { checkApiFileText, checkApiFileTextViaScan, checkApiFileTextWhole } from '../../src/sources/api-file.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { UserError } from '../../src/errors.js';
import { fixtureDir } from '../helpers/fixtures.js';
import { corpusDir } from './cilium-builders.js';

/** What scanJsonList gives for the byte pass's question: the items array and the first item whose `kind` is a string. */
function byScan(text: string) {
  const list = scanJsonList(text, [['kind']]);
  const item = list?.items.find((i) => fieldText(text, i, 0)?.startsWith('"'));
  return list && item ? { open: list.open, close: list.close, start: item.start, end: item.end } : null;
}

/** Checks the byte pass against the scan on `text` (as UTF-8 bytes); whether the pass answered. */
function agrees(text: string): boolean {
  const got = firstKindItem(Buffer.from(text, 'utf8'));
  if (got !== null) expect(got, text.slice(0, 300)).toEqual(byScan(text));
  return got !== null;
}

/** What a check said: accepted, or the error's class, message and hint. */
function verdict(check: () => void): unknown {
  try {
    check();
    return 'accepted';
  } catch (e) {
    return { userError: e instanceof UserError, message: (e as Error).message, hint: (e as UserError).hint };
  }
}

/**
 * The check with the file's bytes, and the check by the whole parse (the TUI's), say what the
 * scan's check says; the whole parse's check returns `parseK8sObjects`'s answer when it accepts.
 */
function sameVerdict(text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  const reference = verdict(() => checkApiFileTextViaScan(text, 'f.json'));
  expect(verdict(() => checkApiFileText(text, 'f.json', bytes)), text.slice(0, 300)).toEqual(reference);
  let whole: unknown;
  expect(
    verdict(() => {
      whole = checkApiFileTextWhole(text, 'f.json');
    }),
    text.slice(0, 300),
  ).toEqual(reference);
  if (reference === 'accepted') expect(whole).toEqual(parseK8sObjects(text, 'f.json'));
}

const labs = ['lab-iptables', 'lab-nftables', 'lab-cilium'].map((l) => [l, readFileSync(path.join(fixtureDir(l), 'api.json'), 'utf8')] as const);
const generated = [
  ['a generated capture (120 Services)', generateWorld({ services: 120, endpoints: 3, seed: 'json-list-first', modes: ['cilium'] }).apiText],
  ['a generated capture, 2 nodes', generateWorld({ services: 20, endpoints: 2, seed: 'json-list-first-2', modes: ['iptables'], nodes: 2 }).apiText],
] as const;

const list = (items: unknown[], extra: object = {}, indent = 4) => JSON.stringify({ kind: 'List', apiVersion: 'v1', ...extra, items }, null, indent);
const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'd', annotations: { a: '{"x":"\\"q\\"\\u00e9\\n"}' } }, spec: { ports: [{ port: 80, x: -1.5e3 }, { port: 0 }], selector: {}, flag: true, none: null, f: false } };
const odd: readonly string[] = [
  list([svc]),
  list([svc], {}, 0),
  list([svc], {}, 1).replaceAll('\n', '\r\n').replaceAll('  ', '\t'),
  `  \n${list([svc])}\n\n`,
  list([]),
  list([{ spec: {} }]),
  list([{ kind: 7 }, svc]),
  list([{ kind: 'Widget' }]),
  list([{ kind: null }, { kind: ['Service'] }, { kind: { a: 1 } }]),
  '{"items":[{"kind":"Service","kind":{"x":1}},{"kind":"Pod","metadata":{"name":"p"}}]}',
  '{"items":[{"kind":{"x":1},"kind":"Service","metadata":{"name":"s"}}]}',
  '{"items":[{"kind":"Ser\\u0076ice","metadata":{"name":"s"}}]}',
  '{"items":[{"k\\u0069nd":"Service","metadata":{"name":"s"}}]}',
  '{"it\\u0065ms":[{"kind":"Service","metadata":{"name":"s"}}]}',
  '{"a\\"b":1,"items":[{"kind":"Service","metadata":{"name":"s"}}]}',
  '{"items":[{"kind":"Service","metadata":{"na\\u006de":"s","x\\ty":{"k\\"":1}}}]}',
  '{"items":[{"kind":"Service","metadata":{"name":"s"}}],"items":[]}',
  '{"items":7,"x":[{"kind":"Service"}]}',
  '{"items":7,"items":[{"kind":"Service"}]}',
  '{"items":{"kind":"Service"}}',
  '{"items":[[{"kind":"Service"}]]}',
  '{"items":[{"kind":"Service"},3]}',
  '{"items":[{"kind":"Service"},"x"]}',
  '{"before":[{"kind":"Pod"}],"items":[{"kind":"Service","items":[{"kind":"Node"}]}],"after":[{"kind":"x"}]}',
  '{"items":[{"kind":"Service","metadata":{"name":"s"}},]}',
  '{"items":[{"kind":"Service","metadata":{"name":"s"}}]} x',
  '{"items":[{"kind":"Service","metadata":{"name":"s"}}]}}',
  '\uFEFF{"items":[{"kind":"Service","metadata":{"name":"s"}}]}',
  '{"items":[{"kind":"Service","metadata":{"name":"sé"}}]}',
  '{"items":[{"kind":"Service","metadata":{"name":"s\u0001"}}]}',
  '{"items":[{"kind":"Service","metadata":{"name":"a\nb"}}]}',
  '{"items":[{"kind":"Service","n":[01]}]}',
  '{"items":[{"kind":"Service","n":[-0, 0.5, 1e5, 1E+5, 1e-5, -12.25e0]}]}',
  '{"items":[{"kind":"Service","n":[1.]}]}',
  '{"items":[{"kind":"Service","n":[.5]}]}',
  '{"items":[{"kind":"Service","n":[-]}]}',
  '{"items":[{"kind":"Service","n":[1e]}]}',
  '{"items":[{"kind":"Service","n":[tru]}]}',
  '{"items":[{"kind":"Service","n":"\\x"}]}',
  '{"items":[{"kind":"Service","n":"\\u12G4"}]}',
  '{"items":[{"kind":"Service","n":"\\u12"}]}',
  `{"items":[{"kind":"Service","n":${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}}]}`,
  `{"items":[{"kind":"Service","n":${'['.repeat(MAX_DEPTH - 4)}${']'.repeat(MAX_DEPTH - 4)}}]}`,
  '{"items":[{"kind":"Service"',
  '{"items":[{"kind" "Service"}]}',
  '{"items":[{"kind":"Service" "x":1}]}',
  '{items:[]}',
  '[{"items":[{"kind":"Service"}]}]',
  '{}',
  '',
  '   ',
  'kind: List\nitems:\n- kind: Service\n  metadata: {name: s}\n',
  JSON.stringify({ kind: 'Service', metadata: { name: 's' } }),
  JSON.stringify({ type: 'ADDED', object: { kind: 'Service', metadata: { name: 's' } }, items: [] }),
];

/** A seeded generator (mulberry32): the same edits every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` texts made from `base` by replacing, deleting or inserting one or two characters that matter to JSON. */
function edited(base: string, n: number, seed: number): string[] {
  const next = rng(seed);
  const alphabet = '{}[]":,\\ \n\t0123456789eE.+-tfnulsr/bku\x01é';
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    let t = base;
    for (let e = 0; e < 1 + (k % 2); e++) {
      const at = Math.floor(next() * (t.length + 1));
      const ch = alphabet[Math.floor(next() * alphabet.length)]!;
      const op = Math.floor(next() * 3);
      t = op === 0 ? t.slice(0, at) + ch + t.slice(at + 1) : op === 1 ? t.slice(0, at) + t.slice(at + 1) : t.slice(0, at) + ch + t.slice(at);
    }
    out.push(t);
  }
  return out;
}

const small = '{"kind":"List","items":[{"kind":"Pod","x":[1,-2.5e3,true,null,"a\\"b\\u00e9"]},{"kind":"Service","metadata":{"name":"s"}}],"z":{}}';

describe('firstKindItem', () => {
  it.each([...labs, ...generated])('%s: answers, and answers what the scan does', (_name, text) => {
    expect(agrees(text)).toBe(true);
  });

  it('answers what the scan does, or nothing, on odd texts; answers on the plain ones', () => {
    const answered = odd.map((t) => agrees(t));
    // The byte pass is used, not only consistent: the plain Lists above are answered.
    expect(answered.filter(Boolean).length).toBeGreaterThanOrEqual(12);
    expect(answered[0]).toBe(true);
  });

  it('answers what the scan does, or nothing, on 6,000 edited texts and every cut', () => {
    let answered = 0;
    for (const t of [...edited(small, 3000, 1), ...edited(list([svc, { kind: 'Pod' }]), 3000, 2)]) if (agrees(t)) answered++;
    for (let cut = 0; cut <= small.length; cut++) agrees(small.slice(0, cut));
    expect(answered).toBeGreaterThan(100);
  });

  it('gives up on an escaped key where the scan would, and on non-ASCII bytes', () => {
    expect(firstKindItem(Buffer.from('{"items":[{"k\\u0069nd":"Service"}]}'))).toBeNull();
    expect(firstKindItem(Buffer.from('{"it\\u0065ms":[{"kind":"Service"}]}'))).toBeNull();
    expect(firstKindItem(Buffer.from('{"items":[{"kind":"Service","n":"é"}]}'))).toBeNull();
    expect(firstKindItem(Buffer.from('{"items":[{"kind":"Service","m":{"n\\u0061me":1}}]}'))).not.toBeNull();
  });
});

describe('checkApiFileText with the bytes, and by the whole parse: the same verdict, message and hint as by the scan', () => {
  it.each([...labs, ...generated])('%s', (_name, text) => {
    sameVerdict(text);
    expect(verdict(() => checkApiFileText(text, 'f.json', Buffer.from(text, 'utf8')))).toBe('accepted');
  });

  it('odd texts', () => {
    for (const t of odd) sameVerdict(t);
  });

  it('edited texts (1,000)', () => {
    for (const t of [...edited(small, 500, 3), ...edited(list([{ kind: 'Pod' }, svc]), 500, 4)]) sameVerdict(t);
  });

  it('the corpus of API objects (when present)', () => {
    const root = corpusDir();
    if (root === null) {
      console.log('skipped: no corpus (../shared/corpus) on this machine');
      return;
    }
    const dir = path.join(root, 'k8s-objects');
    const files = readdirSync(dir).filter((f) => !f.endsWith('.md'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) sameVerdict(readFileSync(path.join(dir, f), 'utf8'));
  });
});

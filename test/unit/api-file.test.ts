/**
 * `--api-file` followed while the TUI runs (NOTES "--api-file is read once"): the feed
 * re-reads the file when its stat changes, keeps the last good objects through a
 * half-written or emptied file, and a Session opened from `openSource` sees the change
 * as it sees a cluster watch event.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/collect/session.js';
import { API_FILE_HINT, ApiFileFeed, checkApiFileText, refusedVersion } from '../../src/sources/api-file.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { clockTime } from '../../src/text/clock.js';
import { closeSource, openSource } from '../../src/sources/open.js';
import { fixtureDir } from '../helpers/fixtures.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-apifeed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Item = { kind: string; metadata: { namespace?: string; name: string } };
const base = JSON.parse(readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json'), 'utf8')) as { items: Item[] };

/** lab-iptables' API objects with Service default/web renamed to `name` (a List text). */
function listWithWebAs(name: string): string {
  const items = base.items.map((o) => (o.kind === 'Service' && o.metadata.name === 'web' ? { ...o, metadata: { ...o.metadata, name } } : o));
  return `${JSON.stringify({ ...base, items }, null, 2)}\n`;
}

let n = 0;
function fileWith(text: string): string {
  const file = path.join(dir, `api-${n++}.json`);
  writeFileSync(file, text);
  return file;
}

/** Resolves at the listener's next call (or rejects after `ms`). */
function nextCall(subscribe: (l: () => void) => () => void, ms = 3000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no change seen in ${ms} ms`)), ms);
    const off = subscribe(() => {
      clearTimeout(timer);
      off();
      resolve();
    });
  });
}

describe('ApiFileFeed', () => {
  it('re-reads a changed file and tells its listeners; an unchanged one is not read again', async () => {
    const file = fileWith(listWithWebAs('web'));
    const feed = ApiFileFeed.open(file);
    let calls = 0;
    feed.subscribe(() => calls++);
    expect(await feed.check()).toBe(false);
    writeFileSync(file, listWithWebAs('web-renamed'));
    expect(await feed.check()).toBe(true);
    expect(calls).toBe(1);
    expect(feed.text()).toContain('"web-renamed"');
    expect(await feed.check()).toBe(false);
    // Written again with the same objects: read (new mtime), but nothing to tell.
    writeFileSync(file, listWithWebAs('web-renamed'));
    expect(await feed.check()).toBe(false);
    expect(calls).toBe(1);
    await feed.close();
  });

  it('keeps the last good objects while the file is empty, half-written or gone, and says why', async () => {
    const file = fileWith(listWithWebAs('web'));
    const feed = ApiFileFeed.open(file);
    const good = feed.text();
    const full = listWithWebAs('web-2');
    for (const broken of ['', full.slice(0, Math.floor(full.length / 2))]) {
      writeFileSync(file, broken);
      expect(await feed.check()).toBe(false);
      expect(feed.text()).toBe(good);
      expect(feed.error()).toContain(file);
    }
    rmSync(file);
    expect(await feed.check()).toBe(false);
    expect(feed.error()).toMatch(/ENOENT/);
    writeFileSync(file, full);
    expect(await feed.check()).toBe(true);
    expect(feed.text()).toBe(full);
    expect(feed.error()).toBeNull();
    await feed.close();
  });

  it("tells its listeners ('error') when a version is refused and when objects come back, once per change", async () => {
    const file = fileWith(listWithWebAs('web'));
    const feed = ApiFileFeed.open(file);
    const heard: (string | undefined)[] = [];
    feed.subscribe((change) => heard.push(change));
    writeFileSync(file, '');
    await feed.check();
    expect(heard).toEqual(['error']);
    // The reason leads (a header has little room), then the file and what is shown.
    const readAt = clockTime(feed.problem()!.keptAt);
    expect(feed.error()).toBe(`the file is empty (--api-file ${file}: showing the objects read at ${readAt}; ${API_FILE_HINT})`);
    expect(feed.problem()?.kind).toBe('empty');
    writeFileSync(file, '\n'); // another empty version: the same reason, nothing new to tell
    await feed.check();
    expect(heard).toEqual(['error']);
    writeFileSync(file, listWithWebAs('web')); // the same objects as before the break
    await feed.check();
    expect(heard).toEqual(['error', 'error']);
    expect(feed.error()).toBeNull();
    writeFileSync(file, '{"kind": "List", "items": [');
    await feed.check();
    writeFileSync(file, listWithWebAs('web-3')); // new objects: an objects change, which clears the error
    expect(await feed.check()).toBe(true);
    expect(heard).toEqual(['error', 'error', 'error', undefined]);
    expect(feed.error()).toBeNull();
    await feed.close();
  });

  it.each([
    ['an empty List', '{"items":[]}\n', /^no API objects in it \(an empty list\)/],
    ['a List of Pods only', () => `${JSON.stringify({ ...base, items: base.items.filter((o) => o.kind === 'Pod') })}\n`, /^no Service and no Node in it \(6 other objects\)/],
  ] as const)('refuses a later version that parses but names no Service and no Node: %s', async (_, version, reason) => {
    const file = fileWith(listWithWebAs('web'));
    const feed = ApiFileFeed.open(file);
    const good = feed.text();
    const heard: (string | undefined)[] = [];
    feed.subscribe((change) => heard.push(change));
    writeFileSync(file, typeof version === 'string' ? version : version());
    expect(await feed.check()).toBe(false);
    expect(feed.text()).toBe(good);
    expect(heard).toEqual(['error']);
    expect(feed.problem()?.kind).toBe('no-objects');
    expect(feed.error()).toMatch(reason);
    expect(feed.error()).toContain(file);
    await feed.close();
  });

  it('still opens a file that holds an empty List (a cluster with nothing in it)', async () => {
    const feed = ApiFileFeed.open(fileWith('{"kind":"List","apiVersion":"v1","items":[]}\n'));
    expect(feed.error()).toBeNull();
    expect(feed.problem()).toBeNull();
    await feed.close();
  });

  it('polls at its interval while subscribed, and stops when the last listener leaves', async () => {
    const file = fileWith(listWithWebAs('web'));
    const feed = ApiFileFeed.open(file, { intervalMs: 20 });
    const seen = nextCall((l) => feed.subscribe(l));
    writeFileSync(file, listWithWebAs('web-polled'));
    await seen;
    expect(feed.text()).toContain('"web-polled"');
    // No listener: no timer, so the next change waits for a check.
    writeFileSync(file, listWithWebAs('web-unseen'));
    await new Promise((r) => setTimeout(r, 100));
    expect(feed.text()).toContain('"web-polled"');
    await feed.close();
  });
});

describe('a Session opened with --api-file', () => {
  it('says why a version of the file was refused (apiError) while keeping its objects, and clears it', async () => {
    const file = fileWith(listWithWebAs('web'));
    const source = await openSource({ replay: fixtureDir('lab-iptables'), apiFile: file, interval: 0.02 }, { progress: () => {} });
    const session = new Session({ transport: source.transport, live: source.live, ...(source.api ? { api: source.api } : { apiText: source.apiText! }) });
    await session.start();
    expect(session.getState().apiError ?? null).toBeNull();
    const shown = session.getState().snapshot;
    const refused = nextCall((l) => session.subscribe(l));
    writeFileSync(file, '');
    await refused;
    expect(session.getState().apiError).toMatch(/^the file is empty \(--api-file .*: showing the objects read at \d\d:\d\d:\d\d; write it with/);
    expect(session.getState().apiProblem?.kind).toBe('empty');
    expect(session.getState().snapshot).toBe(shown); // nothing re-parsed: the same objects
    const back = nextCall((l) => session.subscribe(l));
    writeFileSync(file, listWithWebAs('web'));
    await back;
    expect(session.getState().apiError).toBeNull();
    expect(session.getState().apiProblem).toBeNull();
    await session.stop();
    await closeSource(source);
  });

  it('keeps the Services and the node name through an emptied List (`{"items":[]}`)', async () => {
    const file = fileWith(listWithWebAs('web'));
    const source = await openSource({ replay: fixtureDir('lab-iptables'), apiFile: file, interval: 0.02 }, { progress: () => {} });
    const session = new Session({ transport: source.transport, live: source.live, ...(source.api ? { api: source.api } : { apiText: source.apiText! }) });
    await session.start();
    const before = session.getState().snapshot!;
    const refused = nextCall((l) => session.subscribe(l));
    writeFileSync(file, '{"items":[]}\n');
    await refused;
    const after = session.getState();
    expect(after.apiProblem?.kind).toBe('no-objects');
    expect(after.apiError).toContain('no API objects in it');
    expect(after.snapshot?.api?.value?.services.map((s) => s.meta.name)).toEqual(before.api?.value?.services.map((s) => s.meta.name));
    expect(after.snapshot?.meta.node).toBe('lab-node');
    await session.stop();
    await closeSource(source);
  });

  it('shows the objects of the file as it is now, without a restart', async () => {
    const file = fileWith(listWithWebAs('web'));
    const source = await openSource({ replay: fixtureDir('lab-iptables'), apiFile: file, interval: 0.02 }, { progress: () => {} });
    expect(source.api?.origin).toBe(file);
    const session = new Session({ transport: source.transport, live: source.live, ...(source.api ? { api: source.api } : { apiText: source.apiText! }) });
    await session.start();
    const names = () => session.getState().snapshot?.api?.value?.services.map((s) => s.meta.name) ?? [];
    expect(names()).toContain('web');
    const changed = nextCall((l) => session.subscribe(l));
    writeFileSync(file, listWithWebAs('web-next'));
    await changed;
    expect(names()).toContain('web-next');
    expect(names()).not.toContain('web');
    await session.stop();
    await closeSource(source);
  });
});

describe('the --api-file checks read one item of a List (issue 23 item 3)', () => {
  /** What the checks said by one parse of the whole text (what they did before reading one item). */
  const byWholeParse = (text: string): { accepted: boolean; followed: boolean } => {
    const { value, diagnostics } = parseK8sObjects(text, 'f.json');
    const objects = value.services.length + value.endpointSlices.length + value.pods.length + value.nodes.length + value.others.length;
    const accepted = /\S/.test(text) && (objects > 0 || !diagnostics.some((d) => d.severity === 'error' || d.severity === 'warning'));
    return { accepted, followed: accepted && (value.services.length > 0 || value.nodes.length > 0) };
  };
  const said = (text: string) => {
    let accepted = true;
    try {
      checkApiFileText(text, 'f.json');
    } catch {
      accepted = false;
    }
    return { accepted, followed: refusedVersion(text, 'f.json') === null };
  };
  const list = (items: unknown[], extra: object = {}) => JSON.stringify({ kind: 'List', apiVersion: 'v1', ...extra, items }, null, 4);
  const texts = [
    readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json'), 'utf8'),
    readFileSync(path.join(fixtureDir('lab-cilium'), 'api.json'), 'utf8'),
    list([]),
    list([{ kind: 'EndpointSlice', metadata: { name: 'e' } }]),
    list([{ kind: 'Pod', metadata: { name: 'p' } }, { kind: 'Service', metadata: { name: 's' } }]),
    list([{ kind: 7 }, { spec: {} }, { kind: 'Node', metadata: { name: 'n' } }]),
    list([{ kind: 7 }, { spec: {} }]),
    list([{ spec: {} }]),
    list([{ metadata: { name: 'a' } }, { kind: 'Widget', metadata: { name: 'w' } }]),
    JSON.stringify({ kind: 'ServiceList', items: [{ metadata: { name: 's' } }] }),
    JSON.stringify({ kind: 'Service', items: [{ kind: 'Service', metadata: { name: 's' } }] }),
    JSON.stringify({ type: 'ADDED', object: { kind: 'Service', metadata: { name: 's' } }, items: [] }),
    '{"kind":"List","items":[{"kind":"Service","metadata":{"name":"s"}},]}',
    'kind: List\nitems:\n- kind: Service\n  metadata: {name: s}\n',
    '   ',
  ];
  it.each(texts.map((t, i) => [i, t] as const))('text %i: accepted and followed as by one whole parse', (_i, text) => {
    expect(said(text)).toEqual(byWholeParse(text));
  });
});

describe('--api-file opened for the TUI: checked by the whole parse, which the first snapshot takes (issue 23, live Cilium)', () => {
  /** What opening `file` said: the feed, or the error's message and hint. */
  const opened = (file: string, parseAtOpen: boolean): unknown => {
    try {
      ApiFileFeed.open(file, parseAtOpen ? { parseAtOpen } : {});
      return 'opened';
    } catch (e) {
      return { message: (e as Error).message, hint: (e as { hint?: unknown }).hint };
    }
  };

  it('refuses the same files with the same messages and hints as the byte check', () => {
    const files = [
      '',
      '  \n',
      '{"items":[{"kind":"Service"',
      'kind: 7\n',
      '{"a":1}',
      '[1,2]',
      '{"kind":"List","items":[]}',
      listWithWebAs('web'),
      readFileSync(path.join(fixtureDir('lab-cilium'), 'api.json'), 'utf8'),
    ].map(fileWith);
    files.push(path.join(dir, 'no-such-file.json'), dir);
    const said = files.map((f) => opened(f, true));
    expect(said).toEqual(files.map((f) => opened(f, false)));
    expect(said.map((s) => s === 'opened')).toEqual([false, false, false, true, false, false, true, true, true, false, false]);
  });

  it('hands its parse once, equal to the parse of its text; none without parseAtOpen or after a change', async () => {
    const file = fileWith(listWithWebAs('web'));
    const feed = ApiFileFeed.open(file, { parseAtOpen: true, intervalMs: 10 });
    const taken = feed.takeOpenParse();
    expect(taken?.text).toBe(feed.text());
    expect(taken?.origin).toBe(file);
    expect(taken?.result).toEqual(parseK8sObjects(feed.text(), file));
    expect(feed.takeOpenParse()).toBeUndefined();
    expect(ApiFileFeed.open(file).takeOpenParse()).toBeUndefined();
    const again = ApiFileFeed.open(file, { parseAtOpen: true, intervalMs: 10 });
    writeFileSync(file, listWithWebAs('web-next'));
    expect(await again.check()).toBe(true);
    expect(again.takeOpenParse()).toBeUndefined();
    await feed.close();
    await again.close();
  });

  it("a Session's first snapshot takes the open parse instead of parsing again, and the same objects result", async () => {
    const file = fileWith(listWithWebAs('web'));
    const names = async (parseApiFileAtOpen: boolean, mark: boolean) => {
      const source = await openSource({ replay: fixtureDir('lab-iptables'), apiFile: file, interval: 60 }, { progress: () => {}, parseApiFileAtOpen });
      const api = source.api!;
      // A marked parse (one Service renamed) shows whether the build used the handed parse or its own.
      const take = api.takeOpenParse?.bind(api);
      const marked = take && mark ? { ...api, text: () => api.text(), origin: api.origin, subscribe: api.subscribe.bind(api), close: api.close.bind(api), takeOpenParse: () => {
        const got = take();
        return got && { ...got, result: { ...got.result, value: { ...got.result.value, services: got.result.value.services.map((s) => (s.meta.name === 'web' ? { ...s, meta: { ...s.meta, name: 'from-open' } } : s)) } } };
      } } : api;
      const session = new Session({ transport: source.transport, live: source.live, api: marked });
      await session.start();
      const got = session.getState().snapshot?.api?.value?.services.map((s) => s.meta.name) ?? [];
      const value = session.getState().snapshot?.api;
      await session.stop();
      await closeSource(source);
      return { got, value };
    };
    const old = await names(false, false);
    const plain = await names(true, false);
    expect(plain.value).toEqual(old.value);
    expect((await names(true, true)).got).toContain('from-open');
    expect((await names(false, true)).got).not.toContain('from-open');
  });
});

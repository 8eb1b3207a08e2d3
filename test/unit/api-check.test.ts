/**
 * `--api-file`'s check on a worker thread (src/sources/api-check.ts): the verdict equals
 * `checkApiFileText` on this thread (the reference) for accepted and refused texts — the same
 * `UserError` message, hint and `said` — whoever decided; the fallbacks (not wanted, no script,
 * a script that fails at its start or after) decide on this thread; `ApiFileFeed.open` with
 * `checkLater` and `openSource`'s `apiCheckLater` (local sources only) give the error of the
 * check at open through `checked()` / `apiChecked()`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { apiCheckWorkerUrl, apiCheckWorkerWanted, startApiCheck, type ApiCheckOptions } from '../../src/sources/api-check.js';
import { checkApiFileText } from '../../src/sources/api-file-check.js';
import { ApiFileFeed } from '../../src/sources/api-file.js';
import { closeSource, openSource } from '../../src/sources/open.js';
import { textOfBytes } from '../../src/sources/read-text.js';
import { fixtureDir, tempDirs } from '../helpers/fixtures.js';

const dir = tempDirs('apicheck')();
let n = 0;
function fileOf(text: string | Buffer): string {
  const file = path.join(dir, `api-${n++}.json`);
  writeFileSync(file, text);
  return file;
}

const service = JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { namespace: 'default', name: 'a' }, spec: { clusterIP: '10.96.0.10', ports: [{ port: 80, protocol: 'TCP' }] } });
const texts: Record<string, string | Buffer> = {
  'the Cilium lab': readFileSync(path.join(fixtureDir('lab-cilium'), 'api.json')),
  'the iptables lab': readFileSync(path.join(fixtureDir('lab-iptables'), 'api.json')),
  'one object': service,
  'a List with a bad item': `{"kind":"List","items":[{"kind":"Service"},${service}]}`,
  'an empty List': '{"kind":"List","items":[]}',
  'YAML': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: default\nspec:\n  clusterIP: 10.96.0.10\n',
  'multi-byte': `{"kind":"List","items":[${service.replace('"a"', '"é✓"')}]}`,
  empty: '',
  blanks: ' \n\t\n',
  'bad JSON': '{"kind":"Lizt"\n',
  'JSON of another shape': '[1, 2, 3]',
  'plain text': 'hello\nworld\n',
  'a List of nothing known': '{"kind":"List","items":[{"foo":1}]}',
};

/** What `checkApiFileText` does on this thread: undefined, or the error's message, hint and said. */
function reference(text: string, file: string): object | undefined {
  try {
    checkApiFileText(text, file);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return { message: (e as UserError).message, hint: (e as UserError).hint, said: (e as UserError).said };
  }
}

function verdictOf(run: () => void): object | undefined {
  try {
    run();
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return { message: (e as UserError).message, hint: (e as UserError).hint, said: (e as UserError).said };
  }
}

describe('the --api-file check on a worker', () => {
  it('gives the verdict of the check on this thread, accepted or refused, and the same each call', () => {
    let refused = 0;
    for (const [name, content] of Object.entries(texts)) {
      const file = fileOf(content);
      const bytes = readFileSync(file);
      const text = textOfBytes(bytes);
      const want = reference(text, file);
      const check = startApiCheck(bytes, text, file, { worker: true });
      expect(check.how(), name).toBe('pending');
      expect(verdictOf(() => check.verdict()), name).toEqual(want);
      // Accepted by the worker; a refusal is always this thread's (the same error, made here).
      expect(check.how(), name).toBe(want === undefined ? 'worker' : 'thread');
      expect(verdictOf(() => check.verdict()), name).toEqual(want);
      if (want) refused++;
    }
    expect(refused).toBe(6);
  });

  it('decides on this thread when the worker is not wanted, has no script, or fails at its start or later', () => {
    const broken = path.join(dir, 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('no start');\n");
    const late = path.join(dir, 'late-worker.mjs');
    // Starts, then fails without a verdict: the exit settles the word.
    writeFileSync(late, "import { workerData } from 'node:worker_threads';\nconst s = new Int32Array(workerData.state);\nprocess.on('exit', () => { Atomics.store(s, 0, 3); Atomics.notify(s, 0); });\nAtomics.store(s, 0, 1); Atomics.notify(s, 0);\nthrow new Error('late');\n");
    const options: ApiCheckOptions[] = [{ worker: false }, { worker: true, script: pathToFileURL(broken), startWaitMs: 1000 }, { worker: true, script: pathToFileURL(path.join(dir, 'absent.mjs')) }, { worker: true, script: pathToFileURL(late) }];
    for (const name of ['the Cilium lab', 'bad JSON']) {
      const file = fileOf(texts[name]!);
      for (const o of options) {
        const bytes = readFileSync(file);
        const text = textOfBytes(bytes);
        const check = startApiCheck(bytes, text, file, o);
        expect(verdictOf(() => check.verdict()), name).toEqual(reference(text, file));
        expect(check.how()).toBe('thread');
      }
    }
    expect(apiCheckWorkerWanted({ NODESCOPE_API_CHECK_WORKER: '0' })).toBe(false);
    expect(apiCheckWorkerWanted({})).toBe(true);
    expect(apiCheckWorkerUrl()).toBeDefined();
  });

  it('ApiFileFeed.open with checkLater: the text at once, the refusal of open from checked()', () => {
    for (const [name, content] of Object.entries(texts)) {
      const file = fileOf(content);
      const atOpen = verdictOf(() => ApiFileFeed.open(file));
      const feed = ApiFileFeed.open(file, { checkLater: true });
      expect(feed.text(), name).toBe(textOfBytes(readFileSync(file)));
      expect(verdictOf(() => feed.checked()), name).toEqual(atOpen);
    }
    // A missing file is still refused at open.
    const missing = path.join(dir, 'absent.json');
    expect(verdictOf(() => ApiFileFeed.open(missing, { checkLater: true }))).toEqual(verdictOf(() => ApiFileFeed.open(missing)));
  });

  it('openSource leaves the check for later only for a local source, when asked', async () => {
    const bad = fileOf(texts['bad JSON']!);
    const atOpen = await openSource({ local: true, apiFile: bad }).then(
      () => undefined,
      (e: unknown) => ({ message: (e as UserError).message, hint: (e as UserError).hint }),
    );
    expect(atOpen?.message).toContain(bad);
    const later = await openSource({ local: true, apiFile: bad }, { apiCheckLater: true });
    expect(later.api?.text()).toBe(texts['bad JSON']);
    expect(() => later.apiChecked!()).toThrow(atOpen!.message);
    await closeSource(later);
    // A replay is checked at open, whatever the hook says.
    await expect(openSource({ replay: fixtureDir('lab-iptables'), apiFile: bad }, { apiCheckLater: true, progress: () => {} })).rejects.toThrow(atOpen!.message);
    const good = await openSource({ local: true, apiFile: fileOf(texts['one object']!) }, { apiCheckLater: true });
    expect(() => good.apiChecked!()).not.toThrow();
    await closeSource(good);
  });
});

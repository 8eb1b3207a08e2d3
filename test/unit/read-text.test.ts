/** readTextFile gives exactly what readFileSync(file, 'utf8') gives, ASCII or not (src/sources/read-text.ts). */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTextFile } from '../../src/sources/read-text.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'nodescope-read-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readTextFile', () => {
  const cases: [string, Buffer][] = [
    ['empty', Buffer.alloc(0)],
    ['ASCII with controls and DEL', Buffer.from('*nat\n:KUBE-SERVICES - [0:0]\n\x1b[31m\x7f\t\r\n')],
    ['UTF-8 (Japanese, emoji)', Buffer.from('{"name":"ノード","x":"😀"}\n')],
    ['a BOM', Buffer.from('\ufeff{"a":1}')],
    ['invalid UTF-8 (a lone continuation byte, a cut sequence, Latin-1 é)', Buffer.from([0x61, 0x80, 0x62, 0xe3, 0x83, 0x0a, 0xe9, 0x7f])],
    ['a high byte far into ASCII text', Buffer.concat([Buffer.alloc(100_000, 0x61), Buffer.from([0xc3, 0xa9])])],
  ];
  it.each(cases)('%s: the same string as readFileSync(file, "utf8")', (name, bytes) => {
    const file = path.join(dir, name.replace(/\W+/g, '-'));
    writeFileSync(file, bytes);
    expect(readTextFile(file)).toBe(readFileSync(file, 'utf8'));
  });

  it('throws the file system error for a missing file', () => {
    expect(() => readTextFile(path.join(dir, 'absent'))).toThrow(/ENOENT/);
  });
});

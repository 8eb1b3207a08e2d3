/** `nodescope dig +search`: dig(1)'s words, and `--resolv-conf FILE` read or refused (issue 19 item 9). */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { digWords, readResolvConfFile } from '../../src/dns/dig-search.js';

describe('coredns#2289: dig +search words and --resolv-conf', () => {
  it('+search / +nosearch anywhere beside one name, as dig(1) takes them', () => {
    expect(digWords(['+search', 'web'])).toEqual({ name: 'web', search: true });
    expect(digWords(['web.default.', '+nosearch'])).toEqual({ name: 'web.default.', search: false });
    expect(digWords(['web'])).toEqual({ name: 'web', search: null });
    expect(() => digWords(['+trace', 'web'])).toThrow(UserError);
    expect(() => digWords(['a', 'b'])).toThrow(UserError);
    expect(() => digWords(['+search'])).toThrow(UserError);
  });

  it('--resolv-conf: a pod resolv.conf is read with its ndots and search order; an unreadable file is refused', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-resolv-'));
    const file = path.join(dir, 'resolv.conf');
    writeFileSync(file, 'search shop.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:2\n');
    const r = readResolvConfFile(file);
    expect(r.origin).toBe('pod');
    expect(r.conf.search).toEqual(['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local']);
    expect(r.conf.options.ndots).toBe(2);
    expect(() => readResolvConfFile(path.join(dir, 'absent'))).toThrow(UserError);
  });
});

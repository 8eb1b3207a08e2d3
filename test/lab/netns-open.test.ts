/**
 * Lab: `--netns NAME` opens a namespace `ip netns add` created, and refuses it once
 * `ip netns del` removed it (the check reads iproute2's run directory, nothing runs).
 */
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { closeSource, openSource } from '../../src/sources/open.js';
import { labAvailable } from '../helpers/lab.js';

const NS = `nsno-node-${process.pid}`;
const ip = (...args: string[]) => spawnSync('ip', args, { encoding: 'utf8' });
const labOk = labAvailable(['ip']);

describe.skipIf(!labOk)('opening --netns against the real ip netns', () => {
  afterAll(() => {
    ip('netns', 'del', NS);
  });

  it('opens a namespace that exists and refuses it after deletion', async () => {
    expect(ip('netns', 'add', NS).status).toBe(0);
    expect(ip('netns', 'list').stdout).toContain(NS);
    const source = await openSource({ netns: NS }, { progress: () => {} });
    expect(source.transport.label).toBe(`netns:${NS}`);
    await closeSource(source);
    expect(ip('netns', 'del', NS).status).toBe(0);
    await expect(openSource({ netns: NS }, { progress: () => {} })).rejects.toThrow(UserError);
  });
});

import { describe, expect, it } from 'vitest';
import {
  matchFields, matchLabels, parseFieldSelector, parseLabelSelector, SelectorError,
} from '../api-server/selectors.js';

const web = { app: 'web', tier: 'frontend', 'kubernetes.io/service-name': 'web', rank: '7' };

describe('label selectors (apimachinery labels grammar)', () => {
  it.each([
    ['', true],
    ['kubernetes.io/service-name=web', true],
    ['kubernetes.io/service-name==web', true],
    ['kubernetes.io/service-name=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app', true],
    ['!app', false],
    ['!missing', true],
    ['tier in (frontend, backend)', true],
    ['tier notin (frontend)', false],
    ['missing notin (a)', true],
    ['app=web,tier=frontend', true],
    ['app=web,tier=backend', false],
    ['rank>5', true],
    ['rank<5', false],
  ])('%j → %s', (selector, expected) => {
    expect(matchLabels(parseLabelSelector(selector), web)).toBe(expected);
  });

  it('parses set-based requirements with their values', () => {
    expect(parseLabelSelector('env in (a,b),!x')).toEqual([
      { key: 'env', op: 'in', values: ['a', 'b'] },
      { key: 'x', op: '!', values: [] },
    ]);
  });

  it.each(['app=web,', '=web', 'a=b=c', 'in (a)', 'app=we b'])('rejects %j', (bad) => {
    expect(() => parseLabelSelector(bad)).toThrow(SelectorError);
  });
});

describe('field selectors', () => {
  const fields: Record<string, string> = { 'metadata.name': 'web-0', 'spec.nodeName': 'node-1' };
  const get = (f: string) => fields[f] ?? '';
  const supported = ['metadata.name', 'spec.nodeName'];

  it.each([
    ['metadata.name=web-0', true],
    ['metadata.name==web-1', false],
    ['spec.nodeName!=node-2', true],
    ['metadata.name=web-0,spec.nodeName=node-1', true],
    ['metadata.name=web-0,spec.nodeName=node-9', false],
  ])('%j → %s', (sel, expected) => {
    expect(matchFields(parseFieldSelector(sel, supported), get)).toBe(expected);
  });

  it('unescapes \\, and \\= in values', () => {
    expect(parseFieldSelector('metadata.name=a\\,b\\=c', supported)).toEqual([{ field: 'metadata.name', op: '=', value: 'a,b=c' }]);
  });

  it('refuses an unsupported field with the apiserver message', () => {
    expect(() => parseFieldSelector('spec.foo=x', supported)).toThrow('field label not supported: spec.foo');
  });
});

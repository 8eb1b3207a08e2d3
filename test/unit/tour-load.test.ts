import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError, UserError } from '../../src/errors.js';
import { loadTour, loadTourFile, normalizeNarration, parseTour, tourNames } from '../../src/tour/load.js';
import { tourCaptures } from '../../src/tour/model.js';
import { lineOf, stepDoc, tourDoc, yamlOf } from './tour-builders.js';

const shipped = (name: string) => ['lab-iptables', 'lab-nftables', 'lab-cilium'].includes(name);

function errorsOf(text: string, origin = 'demo.yaml') {
  return parseTour(text, origin, { captureExists: shipped }).diagnostics.filter((d) => d.severity === 'error');
}

describe('parseTour', () => {
  it('reads a valid tour: default capture, per-step capture, both narrations, target fields', () => {
    const text = yamlOf(
      tourDoc({}, [
        stepDoc(),
        stepDoc({ pane: 'rules', capture: 'lab-nftables', target: { serviceChain: 'default/web', hop: 'endpoint', endpoint: '10.244.0.23' } }),
        stepDoc({ pane: 'conntrack', target: { flow: '10.244.0.9:32982', service: 'default/web' } }),
        stepDoc({ pane: 'step', target: { packet: '10.244.0.9:1234 -> 10.96.12.34:80/tcp', flags: 'ack', focus: 'nat' } }),
      ]),
    );
    const r = parseTour(text, 'demo.yaml', { captureExists: shipped });
    expect(r.diagnostics).toEqual([]);
    const tour = r.value!;
    expect(tour.steps.map((s) => s.capture)).toEqual(['lab-iptables', 'lab-nftables', 'lab-iptables', 'lab-iptables']);
    expect(tourCaptures(tour)).toEqual(['lab-iptables', 'lab-nftables']);
    expect(tour.steps[1]!.target).toEqual({ kind: 'serviceChain', service: 'default/web', hop: 'endpoint', endpoint: '10.244.0.23', port: null });
    expect(tour.steps[2]!.target).toEqual({ kind: 'flow', words: '10.244.0.9:32982', service: 'default/web' });
    expect(tour.steps[3]!.target).toMatchObject({ kind: 'packet', from: '10.244.0.9:1234', to: '10.96.12.34:80/tcp', flags: 'ack', focus: 'nat' });
    expect(tour.steps[1]!.line).toBe(lineOf(text, 'pane: rules'));
    expect(tour.title.ja).toBe('デモのツアー');
  });

  // Each mistake is reported on its own line with the field path.
  it.each([
    ['a missing Japanese narration', tourDoc({}, [stepDoc({ narration: { en: 'only English' } })]), 'steps[0].narration.ja', 'narration:'],
    ['Japanese that is the English text', tourDoc({}, [stepDoc({ narration: { en: 'same', ja: 'same' } })]), 'steps[0].narration.ja', 'ja: same'],
    ['an unknown pane', tourDoc({}, [stepDoc({ pane: 'tables' })]), 'steps[0].pane', 'pane: tables'],
    ['a target naming two objects', tourDoc({}, [stepDoc({ target: { service: 'default/web', chain: 'X' } })]), 'steps[0].target', 'target:'],
    ['a target naming nothing', tourDoc({}, [stepDoc({ target: { hop: 'service' } })]), 'steps[0].target', 'target:'],
    ['a Service that is not ns/name', tourDoc({}, [stepDoc({ target: { service: 'web' } })]), 'steps[0].target.service', 'service: web'],
    ['a chain target on the Services pane', tourDoc({}, [stepDoc({ target: { chain: 'KUBE-SERVICES', table: 'nat' } })]), 'steps[0].pane', 'pane: services'],
    ['a chain without table', tourDoc({}, [stepDoc({ pane: 'rules', target: { chain: 'KUBE-SERVICES' } })]), 'steps[0].target.table', 'target:'],
    ['an endpoint that is not an address', tourDoc({}, [stepDoc({ pane: 'rules', target: { serviceChain: 'default/web', hop: 'endpoint', endpoint: 'pod-1' } })]), 'steps[0].target.endpoint', 'endpoint: pod-1'],
    ['an unknown hop', tourDoc({}, [stepDoc({ pane: 'rules', target: { serviceChain: 'default/web', hop: 'sep' } })]), 'steps[0].target.hop', 'hop: sep'],
    ['a packet without an arrow', tourDoc({}, [stepDoc({ pane: 'step', target: { packet: '10.244.0.9 10.96.0.10:53/udp' } })]), 'steps[0].target.packet', 'packet:'],
    ['a packet with a bad port', tourDoc({}, [stepDoc({ pane: 'step', target: { packet: '10.244.0.9 -> 10.96.0.10:99999/udp' } })]), 'steps[0].target.packet', 'packet:'],
    ['an LB frontend without protocol', tourDoc({}, [stepDoc({ pane: 'lb', target: { lbEntry: '10.96.12.34:80' } })]), 'steps[0].target.lbEntry', 'lbEntry:'],
    ['an unknown step key', tourDoc({}, [stepDoc({ narate: 'x' })]), 'steps[0].narate', 'narate:'],
    ['a capture that is not shipped', tourDoc({}, [stepDoc({ capture: 'lab-ipvs' })]), 'steps[0].capture', 'capture: lab-ipvs'],
    ['optional that is not a boolean', tourDoc({}, [stepDoc({ optional: 'yes' })]), 'steps[0].optional', 'optional: yes'],
    ['an id that differs from the file name', tourDoc({ id: 'other' }), 'id', 'id: other'],
    ['no steps', tourDoc({ steps: [] }), 'steps', 'steps:'],
    ['a title in English only', tourDoc({ title: { en: 'x' } }), 'title.ja', 'title:'],
  ])('reports %s with its field and line', (_what, doc, field, lineText) => {
    const text = yamlOf(doc);
    const errors = errorsOf(text);
    expect(errors.length).toBeGreaterThan(0);
    const e = errors.find((d) => d.message.startsWith(`${field}:`));
    expect(e, errors.map((d) => d.message).join('\n')).toBeDefined();
    expect(e!.line).toBe(lineOf(text, lineText));
    expect(e!.origin).toBe('demo.yaml');
    expect(parseTour(text, 'demo.yaml', { captureExists: shipped }).value).toBeNull();
  });

  it('drops an optional step whose capture is not shipped, with an info diagnostic', () => {
    const text = yamlOf(tourDoc({}, [stepDoc(), stepDoc({ capture: 'lab-ipvs', optional: true })]));
    const r = parseTour(text, 'demo.yaml', { captureExists: shipped });
    expect(r.value!.steps).toHaveLength(1);
    expect(r.diagnostics).toEqual([expect.objectContaining({ severity: 'info', line: lineOf(text, 'capture: lab-ipvs'), code: 'tour-step-dropped' })]);
  });

  it('reports a YAML syntax error at its line and keeps going without a value', () => {
    const text = `${yamlOf(tourDoc())}  - pane: [services\n`;
    const errors = errorsOf(text);
    expect(errors[0]!.message).toMatch(/^\(yaml\): /);
    expect(errors[0]!.line).toBeGreaterThanOrEqual(lineOf(text, 'pane: [services'));
  });

  it('never throws on garbage', () => {
    for (const text of ['', '\u0000\u0001\u0002', '- a\n- b', 'steps: 3', 'id: [', '{'.repeat(200)]) {
      expect(() => parseTour(text, 'x.yaml')).not.toThrow();
      expect(parseTour(text, 'x.yaml').value).toBeNull();
    }
  });
});

describe('normalizeNarration', () => {
  it('removes the spaces YAML folding puts between Japanese characters and next to full-width punctuation', () => {
    expect(normalizeNarration('宛先が 書き換えられる。 次に、 kube-proxy は')).toBe('宛先が書き換えられる。次に、kube-proxy は');
  });
  it('keeps the spaces between Japanese and Latin words, and English as it is', () => {
    expect(normalizeNarration('Service は 10.96.12.34 です')).toBe('Service は 10.96.12.34 です');
    expect(normalizeNarration('one two, three')).toBe('one two, three');
  });
});

describe('loading tour files', () => {
  it('throws a ParseError naming the file and the first problem line, listing every problem', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-tour-'));
    const file = path.join(dir, 'demo.yaml');
    const text = yamlOf(tourDoc({}, [stepDoc({ pane: 'tables' }), stepDoc({ narration: { en: 'x' } })]));
    writeFileSync(file, text);
    let error: unknown;
    try {
      loadTourFile(file, { captureExists: shipped });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ParseError);
    const pe = error as ParseError;
    expect(pe.origin).toBe(file);
    expect(pe.line).toBe(lineOf(text, 'pane: tables'));
    expect(pe.message).toContain(`${file}:${lineOf(text, 'narration:', lineOf(text, 'pane: services'))}: error: steps[1].narration.ja`);
  });

  it('names the shipped tours when asked for one that does not exist', () => {
    expect(() => loadTour('no-such-tour')).toThrow(UserError);
    expect(() => loadTour('../etc/passwd')).toThrow(UserError);
  });
});

describe('the shipped tours', () => {
  it('are the three workshop tours', () => {
    expect(tourNames()).toEqual(expect.arrayContaining(['where-rewritten', 'no-endpoints', 'second-packet']));
  });

  it.each(tourNames())('%s loads without a problem, every step narrated in English and Japanese', (name) => {
    const tour = loadTour(name);
    expect(tour.id).toBe(name);
    for (const step of tour.steps) {
      expect(step.narration.en.length).toBeGreaterThan(20);
      expect(step.narration.ja).toMatch(/[\u3040-\u30ff\u4e00-\u9fff]/);
    }
  });
});

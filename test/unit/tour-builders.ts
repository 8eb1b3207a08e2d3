/** Builders of tour YAML for the tour tests: a valid tour object, changed per test, as YAML text. */
import { stringify } from 'yaml';

/** A plain step object as written in YAML. */
export type StepDoc = Record<string, unknown>;

/** One valid step: the Services pane on default/web, narrated in both languages. */
export function stepDoc(overrides: StepDoc = {}): StepDoc {
  return {
    pane: 'services',
    target: { service: 'default/web' },
    narration: { en: 'The Service web.', ja: 'サービス web です。' },
    ...overrides,
  };
}

/** A valid tour document with `steps` (default: one step), changed by `overrides`. */
export function tourDoc(overrides: Record<string, unknown> = {}, steps: StepDoc[] = [stepDoc()]): Record<string, unknown> {
  return { id: 'demo', title: { en: 'demo tour', ja: 'デモのツアー' }, capture: 'lab-iptables', steps, ...overrides };
}

/** The YAML text of a document. */
export function yamlOf(doc: unknown): string {
  return stringify(doc, { lineWidth: 0 });
}

/** The 1-based line of the first line of `text` containing `needle` (throws when absent: a broken test). */
export function lineOf(text: string, needle: string, from = 1): number {
  const lines = text.split('\n');
  for (let i = from - 1; i < lines.length; i++) if (lines[i]!.includes(needle)) return i + 1;
  throw new Error(`no line contains ${JSON.stringify(needle)}`);
}

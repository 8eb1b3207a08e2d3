/**
 * The probe catalog (`commands/probes.yaml`, `commands/wrappers.yaml`): the only
 * commands nodescope ever runs on a node. This module loads and validates it and
 * turns a probe into a concrete argv. It never executes anything.
 */
import path from 'node:path';
import { BugError, said, UserError } from '../errors.js';
import { packageRoot } from '../paths.js';
import { readShippedYaml } from '../shipped-yaml.js';
import { SNAPSHOT_PARTS, type SnapshotPart } from '../model/snapshot.js';

/** Where a probe runs: the node's host namespaces, or the cilium-agent container. */
export type ProbeWhere = 'node' | 'cilium-agent';

/** One declared probe (see the field list at the top of `commands/probes.yaml`). */
export interface ProbeSpec {
  readonly id: string;
  readonly description: string;
  readonly argv: readonly string[];
  readonly alternatives: readonly (readonly string[])[];
  /** Also try the next alternative when one fails, not only when its binary is missing (older Cilium map pin names). */
  readonly alternativesOnFailure: boolean;
  readonly requires: string;
  /** Milliseconds before the probe is killed. */
  readonly timeoutMs: number;
  /** The parser that reads its stdout, by name (`src/collect/parts.ts` maps names to parsers). */
  readonly parser: string;
  /** The snapshot part the parse fills; absent for probes read elsewhere (versions, DNS, traces). */
  readonly part?: SnapshotPart;
  readonly readOnly: boolean;
  readonly root: boolean;
  readonly optional: boolean;
  readonly where: ProbeWhere;
  readonly refresh: boolean;
  /** Run only when asked for by id (`dns-query`), never as part of every probe for `where`. */
  readonly onDemand: boolean;
  /** A dump that grows with the node (rulesets, flows, LB maps): one at a time, and only when the probe plan needs it. */
  readonly heavy: boolean;
  /** A cheap probe read before any heavy one: the probe plan (src/collect/probe-plan.ts) is decided from it. */
  readonly detect: boolean;
  /** The probe reads commands from stdin, one a line, each matching this pattern (`bpftool batch file -`); absent: no stdin. */
  readonly stdinLine?: RegExp;
}

/** A `{name}` placeholder a probe argv may hold, with its default and allowed pattern. */
export interface ParamSpec {
  readonly description: string;
  readonly default: string;
  readonly pattern: RegExp;
}

/** A transport prefix (netns, sudo, host-root) from `commands/wrappers.yaml`. */
export interface WrapperSpec {
  readonly description: string;
  readonly argv: readonly string[];
  readonly pattern?: RegExp;
}

/** The whole catalog. */
export interface Catalog {
  readonly probes: readonly ProbeSpec[];
  readonly params: Readonly<Record<string, ParamSpec>>;
  readonly wrappers: Readonly<Record<string, WrapperSpec>>;
}

function asStringArray(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new BugError(`commands/: ${where} must be a list of strings`);
  }
  return value as string[];
}

function snapshotPart(value: unknown, id: string): SnapshotPart {
  if (!(SNAPSHOT_PARTS as readonly unknown[]).includes(value)) throw new BugError(`probe ${id}: part must be one of ${SNAPSHOT_PARTS.join(', ')}`);
  return value as SnapshotPart;
}

function readProbe(raw: Record<string, unknown>): ProbeSpec {
  const id = String(raw.id ?? '');
  if (!/^[a-z0-9][a-z0-9-]*$/.test(id)) throw new BugError(`commands/probes.yaml: bad probe id "${id}"`);
  const where = raw.where ?? 'node';
  if (where !== 'node' && where !== 'cilium-agent') throw new BugError(`probe ${id}: where must be node|cilium-agent`);
  return {
    id,
    description: String(raw.description ?? ''),
    argv: asStringArray(raw.argv, `${id}.argv`),
    alternatives: ((raw.alternatives as unknown[] | undefined) ?? []).map((a, i) => asStringArray(a, `${id}.alternatives[${i}]`)),
    alternativesOnFailure: raw.alternativesOnFailure === true,
    requires: String(raw.requires ?? ''),
    timeoutMs: Number(raw.timeoutMs ?? 10_000),
    parser: String(raw.parser ?? ''),
    ...(raw.part !== undefined ? { part: snapshotPart(raw.part, id) } : {}),
    readOnly: raw.readOnly !== false,
    root: raw.root === true,
    optional: raw.optional === true,
    where,
    refresh: raw.refresh === true,
    onDemand: raw.onDemand === true,
    heavy: raw.heavy === true,
    detect: raw.detect === true,
    ...(raw.stdinLine !== undefined ? { stdinLine: new RegExp(String(raw.stdinLine)) } : {}),
  };
}

/**
 * Loads the catalog from `dir` (default: `<package root>/commands`).
 * Throws `BugError` when the catalog is malformed (it ships with nodescope).
 */
export function loadCatalog(dir = path.join(packageRoot(), 'commands')): Catalog {
  const probesDoc = readShippedYaml(path.join(dir, 'probes.yaml')) as {
    probes: Record<string, unknown>[];
    params?: Record<string, { description: string; default: string; pattern: string }>;
  };
  const wrappersDoc = readShippedYaml(path.join(dir, 'wrappers.yaml')) as {
    wrappers: Record<string, { description: string; argv: string[]; pattern?: string }>;
  };
  const probes = probesDoc.probes.map(readProbe);
  const seen = new Set<string>();
  for (const p of probes) {
    if (seen.has(p.id)) throw new BugError(`commands/probes.yaml: duplicate probe id ${p.id}`);
    seen.add(p.id);
  }
  const params: Record<string, ParamSpec> = {};
  for (const [name, p] of Object.entries(probesDoc.params ?? {})) {
    params[name] = { description: p.description, default: p.default, pattern: new RegExp(p.pattern) };
  }
  const wrappers: Record<string, WrapperSpec> = {};
  for (const [name, w] of Object.entries(wrappersDoc.wrappers)) {
    wrappers[name] = { description: w.description, argv: asStringArray(w.argv, `wrapper ${name}`), ...(w.pattern ? { pattern: new RegExp(w.pattern) } : {}) };
  }
  return { probes, params, wrappers };
}

let cached: Catalog | undefined;
/** The shipped catalog, loaded once. */
export function catalog(): Catalog {
  return (cached ??= loadCatalog());
}

/** The probe with this id; throws `BugError` if the catalog has none (a typo in code). */
export function probe(id: string, cat: Catalog = catalog()): ProbeSpec {
  const found = cat.probes.find((p) => p.id === id);
  if (!found) throw new BugError(`no probe "${id}" in commands/probes.yaml`);
  return found;
}

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9]*)\}/g;

/**
 * Fills `{name}` placeholders of an argv from `values`, falling back to each
 * parameter's default. A value that does not match the parameter's pattern throws
 * `UserError` (a user-supplied path or name never reaches a node unchecked).
 */
export function fillArgv(
  argv: readonly string[],
  specs: Readonly<Record<string, { default?: string; pattern?: RegExp }>>,
  values: Readonly<Record<string, string | undefined>>,
): string[] {
  return argv.map((arg) =>
    arg.replace(PLACEHOLDER, (_, name: string) => {
      const spec = specs[name];
      if (!spec) throw new BugError(`argv placeholder {${name}} is not declared`);
      const value = values[name] ?? spec.default;
      if (value === undefined) throw new UserError(said('ue.param.required', { name }));
      if (spec.pattern && !spec.pattern.test(value)) {
        throw new UserError(said('ue.param.invalid', { name, value: JSON.stringify(value) }), said('ue.param.pattern', { pattern: spec.pattern.source }));
      }
      return value;
    }),
  );
}

/** The argv a wrapper puts in front of a probe, with its placeholders filled. */
export function wrapperArgv(name: string, values: Readonly<Record<string, string | undefined>> = {}, cat: Catalog = catalog()): string[] {
  const w = cat.wrappers[name];
  if (!w) throw new BugError(`no wrapper "${name}" in commands/wrappers.yaml`);
  const specs = Object.fromEntries([...w.argv.join(' ').matchAll(PLACEHOLDER)].map((m) => [m[1]!, { ...(w.pattern ? { pattern: w.pattern } : {}) }]));
  return fillArgv(w.argv, specs, values);
}

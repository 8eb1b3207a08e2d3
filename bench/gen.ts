/**
 * `npm run gen -- --services N --endpoints M --seed S --out DIR [--modes iptables,nftables,cilium]
 * [--conntrack K] [--nodes K] [--fleet N [--fleet-own SHARE]]`: writes consistent generated capture bundles, one per mode,
 * under `DIR/<mode>` (open one with `nodescope --replay DIR/iptables`); with `--fleet N`, a
 * fleet bundle of N iptables nodes instead, two of them wrong on purpose (bench/gen/fleet.ts;
 * `nodescope fleet diagnose DIR`). The issue 18 fleet: `--fleet 500 --services 2000 --endpoints 5`;
 * `--fleet-own 0.2`: a fifth of the nodes hold endpoints of Local-policy Services (rules of their own).
 * Exit codes: 0 written, 1 bad arguments.
 */
import { parseArgs } from 'node:util';
import { GEN_MODES, writeGeneratedBundles, type GenMode } from './gen/capture.js';
import { writeGeneratedFleet } from './gen/fleet.js';

/** A share 0–1 (`--fleet-own`); exits with the usage otherwise. */
function share(text: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || n > 1) {
    process.stderr.write(`gen: --fleet-own must be a share from 0 to 1\n${USAGE}\n`);
    process.exit(1);
  }
  return n;
}

const USAGE = 'usage: npm run gen -- --services N --endpoints M --seed S --out DIR [--modes iptables,nftables,cilium] [--conntrack K] [--nodes K] [--fleet N [--fleet-own SHARE]]';

function fail(message: string): never {
  process.stderr.write(`gen: ${message}\n${USAGE}\n`);
  process.exit(1);
}

function count(text: string | undefined, what: string, fallback?: number): number {
  if (text === undefined) {
    if (fallback === undefined) fail(`--${what} is required`);
    return fallback;
  }
  if (!/^\d+$/.test(text)) fail(`--${what} ${JSON.stringify(text)}: not a whole number`);
  return Number(text);
}

function main(): void {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      options: {
        services: { type: 'string' },
        endpoints: { type: 'string' },
        seed: { type: 'string' },
        out: { type: 'string' },
        modes: { type: 'string' },
        conntrack: { type: 'string' },
        nodes: { type: 'string' },
        fleet: { type: 'string' },
        'fleet-own': { type: 'string' },
      },
    }).values as Record<string, string | undefined>;
  } catch (e) {
    fail((e as Error).message);
  }
  if (!values.out) fail('--out is required');
  const modes = (values.modes ?? GEN_MODES.join(',')).split(',').map((m) => m.trim());
  for (const m of modes) if (!GEN_MODES.includes(m as GenMode)) fail(`unknown mode ${JSON.stringify(m)}`);
  const started = Date.now();
  if (values.fleet !== undefined) {
    try {
      const nodes = writeGeneratedFleet(values.out, { nodes: count(values.fleet, 'fleet'), services: count(values.services, 'services'), endpoints: count(values.endpoints, 'endpoints'), seed: values.seed ?? '1', own: share(values['fleet-own'] ?? '0') });
      process.stderr.write(`gen: fleet of ${nodes.length} nodes in ${values.out} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
    } catch (e) {
      if (e instanceof RangeError) fail(e.message);
      throw e;
    }
    return;
  }
  let dirs: string[];
  try {
    dirs = writeGeneratedBundles(values.out, {
      services: count(values.services, 'services'),
      endpoints: count(values.endpoints, 'endpoints'),
      seed: values.seed ?? '1',
      modes: modes as GenMode[],
      conntrack: count(values.conntrack, 'conntrack', 1000),
      ...(values.nodes ? { nodes: count(values.nodes, 'nodes') } : {}),
    });
  } catch (e) {
    if (e instanceof RangeError) fail(e.message);
    throw e;
  }
  for (const d of dirs) process.stdout.write(`${d}\n`);
  process.stderr.write(`gen: ${dirs.length} bundle(s) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main();

/**
 * The machine a benchmark ran on, as one line for the results: CPU model and count,
 * memory, Node version, kernel, and the load average (other work on the machine skews
 * wall times; the CPU-time column is steadier).
 */
import os from 'node:os';

/** Describes the machine; `load` is the 1-minute load average when called. */
export function machineLine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.replace(/\s+/g, ' ').trim() ?? 'unknown CPU';
  const memGb = (os.totalmem() / 2 ** 30).toFixed(1);
  return `${cpus.length} × ${model}, ${memGb} GiB RAM, Node ${process.version}, Linux ${os.release()} (${os.arch()})`;
}

/** The 1-minute load average, two decimals. */
export function loadAverage(): string {
  return os.loadavg()[0]!.toFixed(2);
}

/**
 * DNS for a capture: asks every question of the chosen Services (default: all of them)
 * through a recording transport and returns the results with the bundle's
 * `extra/dns.json`, so `nodescope capture` can keep the exact answers and a replay shows
 * them (`ReplayDnsTransport.fromBundle`).
 */
import type { ServiceDnsResult } from '../model/dns.js';
import type { DnsCapture } from '../model/dns.js';
import { dnsCaptureExtras, RecordingDnsTransport } from './replay.js';
import { resolveServiceDns, type ResolveServiceDnsOptions } from './resolve.js';
import { formatServiceRef } from '../model/service-ref.js';

/** Options of {@link recordServiceDns}: those of `resolveServiceDns` without `service`, and the Services (`ns/name`). */
export interface RecordServiceDnsOptions extends Omit<ResolveServiceDnsOptions, 'service'> {
  readonly services?: readonly string[];
}

/**
 * Resolves each Service in turn (namespace, name order) while recording every exchange.
 * Returns the results, the capture and the `writeBundle` extras (`{'dns.json': text}`).
 * Throws what `resolveServiceDns` throws (`UserError` when there is no server to ask).
 */
export async function recordServiceDns(options: RecordServiceDnsOptions): Promise<{
  results: ServiceDnsResult[];
  capture: DnsCapture;
  extras: Record<string, string>;
}> {
  const recorder = new RecordingDnsTransport(options.dns);
  const services = options.services ?? [...options.api.services]
    .map((s) => formatServiceRef(s.meta))
    .sort();
  const results: ServiceDnsResult[] = [];
  for (const service of services) results.push(await resolveServiceDns({ ...options, dns: recorder, service }));
  const capture = recorder.capture();
  return { results, capture, extras: dnsCaptureExtras(capture) };
}

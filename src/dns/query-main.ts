#!/usr/bin/env node
/**
 * nodescope's small DNS query program, run by the `dns-query` probe inside a network
 * namespace (`ip netns exec NODE node …/dist/src/dns/query-main.js …`) so that the query
 * leaves from the node, through its netfilter rules, exactly as a pod's would. A Node.js
 * process cannot enter another network namespace itself (setns(2) is not available),
 * hence a separate program run through the catalog's `netns` wrapper.
 *
 * Usage: `query-main --server IP --port N --name NAME --type A|AAAA|SRV|CNAME
 *         [--proto udp|tcp] [--timeout MS] [--tries N]`
 *
 * Read-only: it sends one question (retries and the TCP follow-up of a truncated reply
 * included) and prints the raw exchange as one JSON line (src/dns/raw.ts); the caller
 * decodes it. Exit 0 whenever the exchange was attempted (a timeout is data), 2 for bad
 * arguments (message on stderr). Nothing reaches a shell.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { said, UserError } from '../errors.js';
import { runExchange, socketWire } from './engine.js';
import { formatRawExchange } from './raw.js';
import { checkQuery, type DnsQuery, type DnsQueryOptions } from './transport.js';

/** What one run printed and its exit code. */
export interface QueryMainResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function integer(text: string | undefined, what: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,6}$/.test(text)) throw new UserError(said('ue.q.number', { what, text: JSON.stringify(text) }));
  return Number(text);
}

/** Parses and validates the arguments; throws `UserError`. */
export function parseQueryArgs(argv: readonly string[]): { query: DnsQuery; options: DnsQueryOptions } {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        server: { type: 'string' }, port: { type: 'string' }, name: { type: 'string' }, type: { type: 'string' },
        proto: { type: 'string' }, timeout: { type: 'string' }, tries: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | undefined>;
  } catch (e) {
    throw new UserError(said('ue.detail', { detail: (e as Error).message }));
  }
  const proto = values.proto ?? 'udp';
  if (proto !== 'udp' && proto !== 'tcp') throw new UserError(said('ue.q.proto'));
  const query = { server: values.server ?? '', port: integer(values.port, '--port') ?? 53, qname: values.name ?? '', qtype: (values.type ?? 'A') as DnsQuery['qtype'] };
  const timeoutMs = integer(values.timeout, '--timeout');
  const tries = integer(values.tries, '--tries');
  const options: DnsQueryOptions = { proto, ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(tries !== undefined ? { tries } : {}) };
  checkQuery(query, options);
  return { query, options };
}

/** Runs one query from this process's network namespace. Never throws. */
export async function queryMain(argv: readonly string[]): Promise<QueryMainResult> {
  let parsed: ReturnType<typeof parseQueryArgs>;
  try {
    parsed = parseQueryArgs(argv);
  } catch (e) {
    return { code: 2, stdout: '', stderr: `query-main: ${(e as Error).message}\n` };
  }
  const raw = await runExchange(socketWire, parsed.query, parsed.options);
  return { code: 0, stdout: formatRawExchange(raw), stderr: '' };
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  void queryMain(process.argv.slice(2)).then((r) => {
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    process.exitCode = r.code;
  });
}

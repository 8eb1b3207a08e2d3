/**
 * `nodescope show WHAT`: what a pane shows, for scripts and eyes: `-o text` (default; plain
 * whitespace-aligned columns as kubectl prints them), `wide` (services: more columns; the
 * others print their text), `json`/`yaml` (a document with `apiVersion` and `kind`, see
 * src/text/document.ts), `name` (services, rules, lb: one `kind/name` per line).
 */
import { said, UsageError, UserError } from '../errors.js';
import { probe } from '../sources/catalog.js';
import { closeSource } from '../sources/open.js';
import { formatServiceRef } from '../model/service-ref.js';
import { apiOfCluster } from '../model/api-namespace.js';
import type { OutputFormat } from '../text/document.js';
import { clusterDomainFor, loadOnce, partsFor, writeDocument } from './load.js';
import type { GlobalOptions } from './options.js';
import { detectLang, tf } from '../text/i18n.js';
import { SHOW_WHATS } from './show-names.js';

export { SHOW_FORMATS, SHOW_WHATS } from './show-names.js';

/**
 * The code each `show WHAT` prints with, imported when that WHAT runs (a command loads one
 * report, not six: src/cli.tsx's rule for commands, here for documents) and started before
 * the source is read, so it loads beside the read. The cases below import the same modules.
 */
const REPORT_CODE: Readonly<Record<string, () => Promise<unknown>>> = {
  services: () => import('../report/services.js'),
  rules: () => import('../report/rules.js'),
  lb: () => import('../report/lb.js'),
  compare: () => import('../report/compare.js'),
  conntrack: () => import('../report/conntrack.js'),
  dns: () => Promise.all([import('../report/dns.js'), import('../dns/open.js'), import('../dns/resolve.js')]),
};

/** `-o name` prints names for these. */
const NAMED = new Set(['services', 'rules', 'lb']);

/** The list `show` alone prints. */
export function showChoicesText(): string {
  const w = Math.max(...SHOW_WHATS.map(([n]) => n.length));
  return `nodescope show WHAT: what to show, one of\n${SHOW_WHATS.map(([n, d]) => `  ${n.padEnd(w)}  ${d}\n`).join('')}e.g. nodescope show services --replay DIR\n`;
}

export interface ShowOptions extends GlobalOptions {
  readonly output: OutputFormat;
  readonly chain?: string;
  readonly table?: string;
  readonly service?: string;
  readonly dnsServer?: string;
  readonly events?: boolean;
}

export async function runShow(what: string | undefined, opts: ShowOptions): Promise<void> {
  if (what === undefined) {
    process.stdout.write(showChoicesText());
    return;
  }
  if (!SHOW_WHATS.some(([n]) => n === what)) throw new UsageError(said('err.nothingToShow', { what }), said('ue.data', { text: SHOW_WHATS.map(([n]) => n).join(', ') }));
  if (opts.output === 'name' && !NAMED.has(what)) throw new UsageError(said('err.nameFor', { named: [...NAMED].join(', '), what }), said('ue.show.oText', { what }));
  // wide adds columns to services; the other texts already print every field.
  const format: OutputFormat = opts.output === 'wide' && what !== 'services' ? 'text' : opts.output;
  if (opts.events && what !== 'conntrack') throw new UsageError(said('err.eventsFor', { what }), said('ue.show.events'));
  // conntrack -E never ends by itself: the probe's declared timeout ends it (said on stderr, as trace does).
  const events = opts.events === true && !opts.replay;
  const lang = detectLang(opts.lang);
  if (events) process.stderr.write(`${tf(lang, 'cli.ct.readingEvents', { seconds: Math.round(probe('conntrack-events').timeoutMs / 1000) })}\n`);
  // Loaded beside the read; awaited by the case that uses it (never rejects: the modules are ours).
  void REPORT_CODE[what]?.();
  const { source, snapshot } = await loadOnce(opts, { onDemand: events ? ['conntrack-events'] : [], parts: partsFor(what), ...(what === 'rules' ? { apiFor: 'rules' as const } : {}) });
  // `show services -o json` comes in pieces, written one after another (never joined).
  let out: string | readonly string[];
  try {
    switch (what) {
      case 'services':
        out = (await import('../report/services.js')).showServicesPieces(snapshot, format, opts.service, lang);
        break;
      case 'rules':
        out = (await import('../report/rules.js')).showRules(snapshot, format, { ...(opts.chain ? { chain: opts.chain } : {}), ...(opts.table ? { table: opts.table } : {}), ...(opts.service ? { service: opts.service } : {}) }, lang);
        break;
      case 'lb':
        out = (await import('../report/lb.js')).showLb(snapshot, format, lang);
        break;
      case 'compare':
        out = (await import('../report/compare.js')).showCompare(snapshot, format, opts.service, lang);
        break;
      case 'conntrack':
        out = (await import('../report/conntrack.js')).showConntrack(snapshot, format, { ...(opts.service ? { service: opts.service } : {}) }, lang);
        break;
      case 'dns': {
        if (!opts.service) {
          const names = (snapshot.api?.value?.services ?? []).map((svc) => formatServiceRef(svc.meta));
          const some = names.slice(0, 5).join(', ');
          throw new UsageError(said('err.dnsService'), names.length ? said('ue.show.dnsEg', { some, more: names.length > 5 ? said('ue.show.dnsMore', { n: names.length }) : '' }) : said('ue.listServices'));
        }
        if (!snapshot.api?.value) throw new UserError(said('err.needsApi'), said('err.passApiFile'));
        const [{ showDns }, { dnsTransportFor }, { resolveServiceDns }] = await Promise.all([import('../report/dns.js'), import('../dns/open.js'), import('../dns/resolve.js')]);
        const dns = dnsTransportFor(source.transport);
        try {
          const domain = await clusterDomainFor(opts, source.transport);
          const result = await resolveServiceDns({ api: apiOfCluster(snapshot.api.value), service: opts.service, dns, expect: { zone: domain.name }, ...(opts.dnsServer ? { server: opts.dnsServer } : {}) });
          out = showDns(snapshot, [result], format, domain, lang);
        } finally {
          await dns.close();
        }
        break;
      }
      default:
        throw new UsageError(said('err.nothingToShow', { what }), said('ue.data', { text: 'services, rules, lb, conntrack, dns, compare' }));
    }
  } finally {
    await closeSource(source);
  }
  if (typeof out === 'string') writeDocument(out, format);
  else for (const piece of out) writeDocument(piece, format);
}

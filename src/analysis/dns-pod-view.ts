/**
 * The lines saying what a Pod's resolv.conf was built from (`dig +search`, the DNS pane's
 * typed name): the namespace, the cluster domain and where it came from, the name server,
 * the node's search domains — a part the source did not show said to be unknown or assumed,
 * never shown as if read. Pure; in `lang`.
 */
import type { PodResolvView } from '../model/dns.js';
import { t, tf, type Lang } from '../text/i18n.js';

/** Why a search asked as a Pod ran with the node's resolv.conf: two lines in `lang`. */
export function podViewMissingLines(lang: Lang): string[] {
  return [t(lang, 'dns.pod.noServer'), `  ${t(lang, 'dns.pod.noServerHow')}`];
}

/**
 * `as a ClusterFirst Pod in namespace default (assumed: -n sets it):`, then indented by two
 * spaces the cluster domain with its source, the name server `server` and whose ClusterIP it
 * is, and the node's search domains (`unknown` when they were not read): four lines in `lang`.
 */
export function podViewLines(view: PodResolvView, server: string, lang: Lang): string[] {
  const ns = view.namespaceGiven ? view.namespace : tf(lang, 'dns.pod.nsAssumed', { ns: view.namespace });
  const domain = view.clusterDomainSource === 'default'
    ? tf(lang, 'dns.pod.domainUnknown', { domain: view.clusterDomain })
    : tf(lang, 'dns.pod.domainFrom', { domain: view.clusterDomain, from: t(lang, `dns.pod.from.${view.clusterDomainSource}`) });
  const named = view.nameserverService !== null ? tf(lang, 'dns.pod.serverOf', { address: server, service: view.nameserverService }) : tf(lang, 'dns.pod.serverFlag', { address: server });
  const node = view.nodeSearch === null ? t(lang, 'dns.pod.nodeSearchUnknown') : view.nodeSearch.length === 0 ? t(lang, 'dns.pod.nodeSearchNone') : view.nodeSearch.join(' ');
  return [
    tf(lang, 'dns.pod.head', { ns }),
    `  ${tf(lang, 'dns.pod.domain', { domain })}`,
    `  ${tf(lang, 'dns.pod.server', { server: named })}`,
    `  ${tf(lang, 'dns.pod.nodeSearch', { node })}`,
  ];
}

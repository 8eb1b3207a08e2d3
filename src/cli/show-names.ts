/**
 * What `show` can show and its `-o` formats: the command tree (src/cli.tsx) and completion
 * read them when the program is built, so they live apart from src/cli/show.ts, whose reports
 * load only when `show` runs.
 */
import type { OutputFormat } from '../text/document.js';

/** What `show` can show, with a line each (`show` alone lists them; completion offers them). */
export const SHOW_WHATS: readonly (readonly [string, string])[] = [
  ['services', 'Services with ports, endpoints and what kube-proxy on this node should do'],
  ['rules', 'iptables and nftables rules, chain by chain, with counters'],
  ['lb', "Cilium's eBPF load-balancer maps (frontends and backends)"],
  ['conntrack', 'conntrack entries, per Service with --service'],
  ['dns', "a Service's DNS answers from the cluster DNS (needs --service)"],
  ['compare', 'what each proxy mode would program for these Services'],
];

/** The `-o` formats `show` takes. */
export const SHOW_FORMATS: readonly OutputFormat[] = ['text', 'wide', 'json', 'yaml', 'name'];

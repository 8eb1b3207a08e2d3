/**
 * The probe plan: which heavy dumps a node's Service dataplane needs, decided from cheap
 * detection probes read first (the catalog's `detect: true`: the table names, the names
 * pinned in Cilium's tc globals directory) and the node's interfaces (`kube-ipvs0`, from
 * `ip -j addr`). A node with 230,000 iptables-nft rules took 32 s and 1.5 GB for
 * `nft -j list ruleset` alone, a dump nothing reads there: the plan leaves such dumps out and
 * says why. Pure: runs in, plan out.
 *
 * Facts used (upstream): kube-proxy's nftables mode keeps all its rules in tables `ip kube-proxy`
 * and `ip6 kube-proxy` (pkg/proxy/nftables/proxier.go, `kubeProxyTable`); iptables-nft keeps
 * iptables' tables as nftables tables `ip|ip6 filter|nat|mangle|raw|security`
 * (iptables/nft.c `xtables_ipv4`); kube-proxy's IPVS mode creates the dummy interface
 * `kube-ipvs0` (pkg/proxy/ipvs/proxier.go `defaultDummyDevice`); Cilium pins its LB maps as
 * `cilium_lb4_services_v2`, `cilium_lb4_backends_v3`, … in `/sys/fs/bpf/tc/globals`.
 */
import type { ProbeRun } from '../sources/probe-runner.js';

/** A heavy probe the plan leaves out, and why (in English, for the header, `?` and the manifest). */
export interface SkippedProbe {
  readonly id: string;
  readonly reason: string;
  /**
   * A probe that does not apply rather than a dump left out (kube-proxy's nftables table on a
   * node without one): recorded in the manifest, not named in the header or under `?`.
   */
  readonly silent?: boolean;
}

/** What {@link planProbes} decided: the probes it leaves out (every other probe runs). */
export interface ProbePlan {
  readonly skipped: readonly SkippedProbe[];
}

/** The tables iptables-nft writes, per nftables family (iptables/nft.c). */
const XT_TABLES: ReadonlySet<string> = new Set(['filter', 'nat', 'mangle', 'raw', 'security']);

/**
 * The tables named by the `nft-tables` probe, as `ip nat`: its `table ip nat {` lines (`nft
 * list flowtables`, which prints every table's header) or `table ip nat` lines (`nft list
 * tables`, what captures made before held). Null when the probe did not answer.
 */
export function nftTableNames(run: ProbeRun | undefined): string[] | null {
  if (!run || run.status !== 'ok') return null;
  const out: string[] = [];
  for (const line of run.result.stdout.split('\n')) {
    const m = /^table\s+(\S+)\s+([^\s{]+)\s*\{?\s*$/.exec(line.trim());
    if (m) out.push(`${m[1]} ${m[2]}`);
  }
  return out;
}

/** Interface names of an `ip -j addr` run; null when it did not answer or is not JSON. */
function interfaceNames(run: ProbeRun | undefined): string[] | null {
  if (!run || run.status !== 'ok') return null;
  try {
    const list = JSON.parse(run.result.stdout) as { ifname?: unknown }[];
    return Array.isArray(list) ? list.flatMap((i) => (typeof i?.ifname === 'string' ? [i.ifname] : [])) : null;
  } catch {
    return null;
  }
}

/**
 * The Cilium LB maps (`cilium_lb…`) named by a `bpf-pinned` run (`ls` of Cilium's tc globals
 * directory, one name a line), in its order; null when the listing was not read (no run, the
 * directory absent or not listable, the run failed, timed out or was not captured). An empty
 * list: read, and no Cilium LB map pinned.
 */
export function pinnedCiliumLbMaps(run: ProbeRun | undefined): string[] | null {
  if (!run || run.status !== 'ok' || run.result.missing || run.result.notCaptured) return null;
  return run.result.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((n) => n.startsWith('cilium_lb'));
}

const NFT_WHOLE = ['nft-json', 'nft-text'];
const CILIUM_MAPS = ['bpf-lb4-services', 'bpf-lb4-backends', 'bpf-lb4-reverse-nat', 'bpf-lb6-services', 'bpf-lb6-backends', 'bpf-lb6-reverse-nat'];

/**
 * The plan from the detection runs (by probe id: `nft-tables`, `bpf-pinned`, `ip-addr`,
 * `iptables-version`). A detection probe that did not answer decides nothing: the dumps it
 * would have ruled out run (a replay of a capture made before the plan existed reads all it
 * holds). `asked`: probe ids the user asked for (`--probe`), never skipped.
 *
 * - nftables tables known: with `ip`/`ip6 kube-proxy`, those tables are listed alone (not the
 *   whole ruleset); without, the kube-proxy table probes are skipped, and so is the whole
 *   ruleset when every table is an iptables-nft one (iptables-save reads those). `nft list
 *   ruleset` (text) is skipped whenever an `nft -j` probe runs (it is the fallback for an nft
 *   built without JSON: {@link fallbackProbes}).
 * - iptables on the nf_tables backend and no iptables-nft table of a family: that family's
 *   iptables-save is skipped (it would print nothing but its header).
 * - the Cilium pin directory read and holding no `cilium_lb` map: the map dumps are skipped.
 * - interfaces read and no `kube-ipvs0`: ipvsadm is skipped.
 */
export function planProbes(runs: ReadonlyMap<string, ProbeRun>, asked: ReadonlySet<string> = new Set()): ProbePlan {
  const skipped: SkippedProbe[] = [];
  const skip = (id: string, reason: string, silent = false) => {
    if (!asked.has(id)) skipped.push({ id, reason, ...(silent ? { silent } : {}) });
  };
  const tables = nftTableNames(runs.get('nft-tables'));
  const nfBackend = /nf_tables/.test(runs.get('iptables-version')?.result.stdout ?? '');
  if (tables === null) {
    skip('nft-json-kube-proxy', 'the nftables table names were not read: the whole ruleset is read instead', true);
    skip('nft-json-kube-proxy6', 'the nftables table names were not read: the whole ruleset is read instead', true);
  } else {
    const kubeProxy = ['ip', 'ip6'].filter((f) => tables.includes(`${f} kube-proxy`));
    if (!kubeProxy.includes('ip')) skip('nft-json-kube-proxy', 'no nftables table ip kube-proxy', true);
    if (!kubeProxy.includes('ip6')) skip('nft-json-kube-proxy6', 'no nftables table ip6 kube-proxy', true);
    const onlyXt = tables.every((t) => XT_TABLES.has(t.split(' ')[1]!) && /^(ip|ip6|arp|bridge) /.test(t));
    if (kubeProxy.length > 0) for (const id of NFT_WHOLE) skip(id, `nftables mode: kube-proxy's table${kubeProxy.length > 1 ? 's are' : ' is'} listed alone (--probe ${id} reads the whole ruleset)`);
    else if (onlyXt) for (const id of NFT_WHOLE) skip(id, tables.length ? `nftables holds only iptables-nft tables, which iptables-save reads (--probe ${id})` : `nftables holds no table (--probe ${id})`);
    else skip('nft-text', 'nft -j list ruleset is read instead (--probe nft-text)');
    if (nfBackend) {
      if (!tables.some((t) => /^ip /.test(t) && XT_TABLES.has(t.slice(3)))) skip('iptables-save', 'iptables (nf_tables) holds no IPv4 table (nft list flowtables)');
      if (!tables.some((t) => /^ip6 /.test(t) && XT_TABLES.has(t.slice(4)))) skip('ip6tables-save', 'ip6tables (nf_tables) holds no IPv6 table (nft list flowtables)');
    }
  }
  const pinned = runs.get('bpf-pinned');
  if (pinned && !pinned.result.missing && !pinned.result.notCaptured) {
    const names = pinned.status === 'ok' ? pinned.result.stdout.split('\n').map((l) => l.trim()) : [];
    const where = pinned.argv[pinned.argv.length - 1] ?? 'the pin directory';
    if (!names.some((n) => n.startsWith('cilium_lb'))) for (const id of CILIUM_MAPS) skip(id, pinned.status === 'ok' ? `no Cilium LB map pinned in ${where}` : `${where} cannot be listed (no Cilium maps)`);
  }
  const interfaces = interfaceNames(runs.get('ip-addr'));
  if (interfaces !== null && !interfaces.includes('kube-ipvs0')) for (const id of ['ipvsadm-stats', 'ipvsadm']) skip(id, 'no kube-ipvs0 interface (IPVS mode creates it)');
  return { skipped };
}

/**
 * Probes the plan skipped that must run after all, given what the planned dumps gave:
 * `nft list ruleset` (text) when no `nft -j` probe produced anything (an nft built without
 * JSON support). Empty otherwise.
 */
export function fallbackProbes(plan: ProbePlan, runs: ReadonlyMap<string, ProbeRun>): string[] {
  const json = ['nft-json-kube-proxy', 'nft-json-kube-proxy6', 'nft-json'].map((id) => runs.get(id)).filter((r): r is ProbeRun => r !== undefined);
  const textSkipped = plan.skipped.some((s) => s.id === 'nft-text');
  return textSkipped && json.length > 0 && json.every((r) => r.status !== 'ok' && r.status !== 'missing') ? ['nft-text'] : [];
}

/** The skipped probes a reader is told about (the header, `?`): not the {@link SkippedProbe.silent} ones. */
export function shownSkips<T extends { readonly silent?: boolean }>(skipped: readonly T[] | undefined): T[] {
  return (skipped ?? []).filter((s) => !s.silent);
}

/** `ids` without the probes the plan skips. */
export function plannedIds(plan: ProbePlan, ids: readonly string[]): string[] {
  const out = new Set(plan.skipped.map((s) => s.id));
  return ids.filter((id) => !out.has(id));
}

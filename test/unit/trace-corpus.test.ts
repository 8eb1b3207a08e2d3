/**
 * Step mode over real and upstream kube-proxy rulesets of the shared corpus (k3s
 * iptables-save -c, kube-proxy's own test expectations, a real k3s nft table): for every
 * ClusterIP the ruleset serves, walking a pod's packet down every random branch must
 * reach exactly the endpoints the ruleset DNATs that Service to (read here straight from
 * the KUBE-SEP-* / endpoint-* chains), or stop as `unsupported` at session affinity
 * (`-m recent`), whose list contents no dump carries. Nothing may throw.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { dnatDestination, findChain, findTable, type IptablesRuleset } from '../../src/model/iptables.js';
import { findChain as findNftChain, type NftRuleset, type NftTable } from '../../src/model/nftables.js';
import { parseIptablesSave } from '../../src/parsers/iptables-save.js';
import { parseNftText } from '../../src/parsers/nft-text.js';
import { walkPacket } from '../../src/trace/engine.js';
import type { TraceInput } from '../../src/trace/input.js';
import { parsePacketArgs } from '../../src/trace/packet.js';
import type { TraceResult } from '../../src/trace/types.js';
import { labInput, labPod } from './trace-builders.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const corpus = path.resolve(repoRoot, '../shared/corpus');
const haveCorpus = existsSync(corpus);
if (!haveCorpus) console.warn(`skipping the step-mode corpus sweep: ${corpus} is absent`);

const { addrs, routes } = labInput('iptables');
const client = labPod('client');

/** A service frontend of a ruleset and the endpoints its rules DNAT to. */
interface Frontend {
  readonly ip: string;
  readonly proto: string;
  readonly port: number;
  readonly endpoints: readonly string[];
  readonly affinity: boolean;
}

/** ClusterIP rules of `nat KUBE-SERVICES` and the `--to-destination` of each KUBE-SEP they reach. */
function iptablesFrontends(rs: IptablesRuleset): Frontend[] {
  const out: Frontend[] = [];
  for (const rule of findChain(rs, 'nat', 'KUBE-SERVICES')?.rules ?? []) {
    const svc = rule.target?.name ?? '';
    const dport = rule.matches.flatMap((m) => m.options).find((o) => o.name === 'dport')?.values[0];
    if (!svc.startsWith('KUBE-SVC-') || !rule.destination || !rule.protocol || dport === undefined) continue;
    const svcChain = findChain(rs, 'nat', svc);
    const endpoints = new Set<string>();
    for (const r of svcChain?.rules ?? []) {
      const sep = r.target?.name ?? '';
      if (!sep.startsWith('KUBE-SEP-')) continue;
      for (const s of findChain(rs, 'nat', sep)?.rules ?? []) {
        const d = dnatDestination(s);
        if (d?.address) endpoints.add(`${d.address}:${d.port}`);
      }
    }
    const affinity = (svcChain?.rules ?? []).some((r) => r.matches.some((m) => m.module === 'recent'));
    out.push({ ip: rule.destination.value.replace(/\/32$/, ''), proto: rule.protocol.value, port: Number(dport), endpoints: [...endpoints].sort(), affinity });
  }
  return out;
}

/** Elements of `service-ips` and the `dnat to` of every endpoint chain their service chain reaches. */
function nftFrontends(table: NftTable): Frontend[] {
  const map = table.sets.find((s) => s.name === 'service-ips');
  const out: Frontend[] = [];
  for (const el of map?.elements ?? []) {
    if (el.key.kind !== 'concat' || el.value?.kind !== 'verdict' || !el.value.target) continue;
    const [ip, proto, port] = el.key.items.map((i) => (i.kind === 'value' ? String(i.value) : ''));
    const svcChain = findNftChain(table, el.value.target);
    const endpoints = new Set<string>();
    const visit = (name: string) => {
      for (const rule of findNftChain(table, name)?.rules ?? []) {
        for (const s of rule.statements) {
          if (s.kind === 'nat' && s.type === 'dnat' && s.addr?.kind === 'value') endpoints.add(`${s.addr.value}:${s.port?.kind === 'value' ? s.port.value : port}`);
        }
      }
    };
    let affinity = false;
    for (const rule of svcChain?.rules ?? []) {
      for (const s of rule.statements) {
        if (s.kind === 'vmap' && s.data.kind === 'set') for (const e of s.data.elements) if (e.value?.kind === 'verdict' && e.value.target) visit(e.value.target);
        if (s.kind === 'verdict' && s.target?.startsWith('endpoint-')) visit(s.target);
        if (s.kind === 'match' && s.right.kind === 'setref' && s.right.name.startsWith('affinity-')) affinity = true;
      }
    }
    out.push({ ip: ip!, proto: proto!, port: Number(port), endpoints: [...endpoints].sort(), affinity });
  }
  return out;
}

/** Walks every branch index until the walk says there is no such branch; returns the walks. */
function everyBranch(input: TraceInput, f: Frontend): TraceResult[] {
  const spec = parsePacketArgs({ from: client.ip, to: `${f.ip}:${f.port}/${f.proto}` });
  const out: TraceResult[] = [];
  for (let i = 0; i < 64; i++) {
    try {
      out.push(walkPacket(input, spec, { branch: { kind: 'index', index: i } }));
    } catch (e) {
      if (e instanceof UserError) break;
      throw e;
    }
    if (!out[out.length - 1]!.steps.some((s) => s.branches)) break; // no random choice: one walk is all
  }
  return out;
}

function checkFrontend(input: TraceInput, f: Frontend): void {
  const walks = everyBranch(input, f);
  expect(walks.length).toBeGreaterThan(0);
  if (f.affinity) {
    // Session affinity reads the recent list / affinity set first: unsupported without its contents, or a known set.
    const stops = walks.filter((w) => w.verdict.kind === 'unsupported');
    for (const w of stops) expect(w.steps.at(-1)!.reason).toMatch(/recent|affinity/);
    if (stops.length > 0) return;
  }
  if (f.endpoints.length === 0) {
    for (const w of walks) expect(['rejected', 'dropped', 'forwarded']).toContain(w.verdict.kind);
    return;
  }
  const reached = walks.map((w) => {
    expect(w.verdict.kind, w.steps.map((s) => s.reason).join('\n')).toBe('forwarded');
    return w.verdict.endpoint;
  });
  expect([...new Set(reached)].sort()).toEqual(f.endpoints);
}

/**
 * kube-proxy installs the jumps from the built-in chains separately (`iptables -I`,
 * pkg/proxy/iptables `iptablesJumpChains`); its test expectations leave them out. They
 * are added here when the dump has no such built-in chain, so packets reach KUBE-*.
 */
function withJumpRules(text: string): string {
  const jumps: Readonly<Record<string, readonly string[]>> = {
    filter: ['-A FORWARD -m conntrack --ctstate NEW -j KUBE-PROXY-FIREWALL', '-A FORWARD -j KUBE-FORWARD', '-A FORWARD -m conntrack --ctstate NEW -j KUBE-SERVICES'],
    nat: ['-A PREROUTING -j KUBE-SERVICES', '-A OUTPUT -j KUBE-SERVICES', '-A POSTROUTING -j KUBE-POSTROUTING'],
  };
  let out = text;
  for (const [table, rules] of Object.entries(jumps)) {
    const block = new RegExp(`(\\*${table}\\n[\\s\\S]*?)(\\nCOMMIT)`);
    const m = block.exec(out);
    if (!m) continue;
    const missing = rules.filter((r) => !new RegExp(`^(\\[\\d+:\\d+\\] )?-A ${r.split(' ')[1]} `, 'm').test(m[1]!) && new RegExp(`^:${r.split(' ').at(-1)} `, 'm').test(m[1]!));
    if (missing.length === 0) continue;
    const declare = [...new Set(missing.map((r) => r.split(' ')[1]!))].map((c) => `:${c} ACCEPT [0:0]`);
    out = out.replace(block, `$1\n${missing.join('\n')}$2`).replace(`*${table}\n`, `*${table}\n${declare.join('\n')}\n`);
  }
  return out;
}

const IPTABLES_FILES = ['iptables/k3s-iptables-save-c-counters.txt', 'iptables/k8s-iptables-proxier-test-overall.txt', 'iptables/k8s-iptables-sorttest-etp-local-svl-fw.txt'];
const NFT_FILES = ['nft/k3s-nft-list-table-kube-proxy-real.txt', 'nft/k8s-nftables-proxier-test-overall.txt'];

describe.runIf(haveCorpus)('step mode over corpus iptables dumps', () => {
  it.each(IPTABLES_FILES)('%s: every ClusterIP reaches exactly its endpoints', (file) => {
    const rs = parseIptablesSave(withJumpRules(readFileSync(path.join(corpus, file), 'utf8')), file, { family: 'ipv4' }).value;
    expect(findTable(rs, 'nat')).toBeDefined();
    const frontends = iptablesFrontends(rs);
    expect(frontends.length).toBeGreaterThan(0);
    const input: TraceInput = { addrs, routes, iptables: [rs] };
    for (const f of frontends) checkFrontend(input, f);
  });
});

describe.runIf(haveCorpus)('step mode over corpus nft rulesets', () => {
  it.each(NFT_FILES)('%s: every service-ips element reaches exactly its endpoints', (file) => {
    const rs: NftRuleset = parseNftText(readFileSync(path.join(corpus, file), 'utf8'), file).value;
    const table = rs.tables.find((t) => t.name === 'kube-proxy')!;
    const frontends = nftFrontends(table);
    expect(frontends.length).toBeGreaterThan(0);
    const input: TraceInput = { addrs, routes, nft: rs };
    for (const f of frontends) checkFrontend(input, f);
  });
});

/**
 * The words a new user met on the shipped captures (session 18's report, items 5 and 6), on
 * the real binary in English and Japanese: a Cilium walk names what it looked up and where,
 * a `!` match reads as what it is, `show services` on a node without kube-proxy names the
 * node's dataplane, and `show rules --service` on an eBPF node points at the LB maps.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/run-binary.js';
import { fixtureDir } from '../helpers/fixtures.js';

const home = mkdtempSync(path.join(tmpdir(), 'nodescope-wording-'));
const cilium = ['--replay', fixtureDir('lab-cilium')];
const walk = ['trace', '--from', 'default/client', '--to-service', 'default/web:80'];
/** A step line by its number (`  7 tc ingress …`). */
const step = (text: string, n: number) => text.split('\n').find((l) => l.startsWith(`${String(n).padStart(3)} `)) ?? '';

describe('Cilium trace wording (lab-cilium, default/client → default/web:80)', () => {
  it('en: a miss says "no entry", socket LB connects (no DNAT), the reverse translation is getpeername4 on cilium_lb4_reverse_sk after the walk, the maps are the steps above, endpoints unnested', async () => {
    const r = await runBinary([...walk, ...cilium], home);
    expect(r.code, r.stderr).toBe(0);
    expect(step(r.stdout, 7)).toMatch(/^ {2}7 tc ingress bpf_lxc\/cilium_lb4_services_v2 ✗ no entry: per-packet service lookup: /);
    expect(step(r.stdout, 8)).toMatch(/^ {2}8 tc ingress bpf_lxc\/cilium_lb4_services_v2 ✗ no entry: per-packet service lookup: /);
    // Socket LB rewrites connect()'s address: the verdict says so, not "dnat".
    expect(step(r.stdout, 5)).toMatch(/^ {2}5 connect4 bpf_sock\/cgroup\/connect4 · connect to 10\.244\.0\.23:8080: socket LB: .*getpeername\(\) shows 10\.96\.12\.34:80 to the application \(cilium_lb4_reverse_sk, rev_nat_index 1\)$/);
    expect(r.stdout).not.toContain('dnat to');
    // TCP reads the peer with getpeername(): cil_sock4_getpeername, cilium_lb4_reverse_sk, after the final step.
    expect(step(r.stdout, 10)).toMatch(/^ 10 tc ingress final ·: forwarded out /);
    expect(step(r.stdout, 11)).toMatch(/^ 11 getpeername4 bpf_sock\/cilium_lb4_reverse_sk ✓ 10\.96\.12\.34:80: on the reply: the application reads the peer with getpeername\(\); cil_sock4_getpeername looks up cilium_lb4_reverse_sk \{socket cookie, 10\.244\.0\.23:8080\} → \{10\.96\.12\.34:80, rev_nat_index 1\}/);
    expect(r.stdout).not.toContain('recvmsg4');
    expect(r.stdout).not.toContain('cilium_lb4_reverse_nat');
    expect(r.stdout).toContain('the LB map steps above are the rewrite table (`nodescope show lb` lists the maps)');
    expect(r.stdout).not.toContain('below');
    expect(r.stdout).toContain('on this node: → 10.244.0.23:8080 ready (on this node), 10.244.0.31:8080 ready (on this node)\n');
    expect(r.stdout).not.toMatch(/✗:/);
  }, 30_000);

  it('ja: the same lines translated', async () => {
    const r = await runBinary([...walk, ...cilium, '--lang', 'ja'], home);
    expect(r.code, r.stderr).toBe(0);
    expect(step(r.stdout, 7)).toContain('✗ エントリなし: パケットごとのサービス検索');
    expect(step(r.stdout, 5)).toMatch(/^ {2}5 connect4 bpf_sock\/cgroup\/connect4 · 10\.244\.0\.23:8080 に接続: socket LB: /);
    expect(step(r.stdout, 11)).toMatch(/^ 11 getpeername4 bpf_sock\/cilium_lb4_reverse_sk ✓ 10\.96\.12\.34:80: 応答で: アプリケーションは getpeername\(\) で相手のアドレスを読みます。cil_sock4_getpeername が cilium_lb4_reverse_sk /);
    expect(r.stdout).toContain('上の LB マップの手順が書き換え表です（マップの一覧は "nodescope show lb"）');
    expect(r.stdout).toContain('10.244.0.23:8080 ready（このノード上）, 10.244.0.31:8080 ready（このノード上）');
  }, 30_000);
});

describe('a ! match (lab-iptables, KUBE-POSTROUTING and KUBE-SVC-…)', () => {
  it.each([
    ['en', "mark 0x0 & 0x4000 ≠ 0x4000 (negated match !: holds)", 'saddr 10.244.0.9 is in 10.244.0.0/16 (negated match !: fails)'],
    ['ja', 'mark 0x0 & 0x4000 ≠ 0x4000（否定のマッチ !: 成立）', 'saddr 10.244.0.9 は 10.244.0.0/16 に含まれる（否定のマッチ !: 不成立）'],
  ] as const)('%s: the fact, then that the rule negates it', async (lang, holds, fails) => {
    const r = await runBinary([...walk, '--replay', fixtureDir('lab-iptables'), '--lang', lang], home);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`nat/KUBE-POSTROUTING #1 ✓ return: ${holds.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
    expect(r.stdout).toMatch(new RegExp(`nat/KUBE-SVC-\\w+ #1 ✗: ${fails.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
    expect(r.stdout).not.toMatch(/! \(/);
  }, 30_000);
});

describe('show on a Cilium node', () => {
  it('show services: what the node\'s dataplane should do, and REJECT said once', async () => {
    const en = await runBinary(['show', 'services', ...cilium], home);
    expect(en.code, en.stderr).toBe(0);
    expect(en.stdout).toContain("\nwhat lab-node's Service dataplane should do, from the API (kube-proxy's rules or Cilium's LB maps):\n");
    expect(en.stdout).not.toContain('what kube-proxy on');
    expect(en.stdout).toContain('    cluster (Cluster): REJECT — no endpoints\n');
    const ja = await runBinary(['show', 'services', ...cilium, '--lang', 'ja'], home);
    expect(ja.stdout).toContain('lab-node の Service データプレーン（kube-proxy のルールまたは Cilium の LB マップ）が API に従ってすべきこと:');
    expect(ja.stdout).toContain('    cluster (Cluster): REJECT — エンドポイントなし\n');
  }, 30_000);

  it('show rules --service: no kube-proxy rule is no wrong name on an eBPF node: the LB maps named, exit 1', async () => {
    const r = await runBinary(['show', 'rules', '--service', 'default/web', ...cilium], home);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('nodescope: no rule names Service default/web: this node rewrites Services in eBPF, in its LB maps, not in iptables or nftables rules\n  try: `nodescope show lb` lists the frontends and backends; `nodescope show services --service default/web` shows whether the API has it\n');
    const iptables = await runBinary(['show', 'rules', '--service', 'default/wbe', '--replay', fixtureDir('lab-iptables')], home);
    expect(iptables.code).toBe(1);
    expect(iptables.stderr).toContain('try: check the name with `nodescope show services`');
  }, 30_000);
});

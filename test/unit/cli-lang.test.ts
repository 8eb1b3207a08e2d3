/**
 * `--lang en|ja` for the commands' text (issue 22 item 3): `show`, `trace`, `diagnose`,
 * `fleet diagnose` and `dig` print their head lines, column headers, labels and the engine's
 * sentences in Japanese through the i18n tables, with no English word left (the English
 * finder of the ja sweep, test/helpers/english.ts), while `--lang en` prints what it printed
 * before and JSON/YAML stay English. Also `-o` where kubectl users try it: yaml is the json
 * document, and a format a command has no use for is refused naming the valid ones.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { diagnoseFleet } from '../../src/fleet/diagnose.js';
import { fleetDiagnoseNode } from '../../src/fleet/node-diagnosis.js';
import { fleetJson, fleetText } from '../../src/report/fleet.js';
import { showServices } from '../../src/report/services.js';
import { runTraceCommand } from '../../src/report/trace.js';
import { showDiagnose } from '../../src/report/diagnose.js';
import { showRules } from '../../src/report/rules.js';
import { showLb } from '../../src/report/lb.js';
import { showConntrack } from '../../src/report/conntrack.js';
import { showCompare } from '../../src/report/compare.js';
import { frontendsText, statusText } from '../helpers/cilium-agent-text.js';
import { captureWords, englishLeft, latinWords, treeWords } from '../helpers/english.js';
import { writeCiliumFleet } from '../helpers/fleet-cilium-fixtures.js';
import { fixtureDir, snapshotOf } from '../helpers/fixtures.js';
import { writeLabFleet } from '../helpers/fleet-fixtures.js';

const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '', env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: '', LC_MESSAGES: '' } });


/** The English left in `text`, as `word: line`. */
const english = (text: string, data: ReadonlySet<string>) => englishLeft(text, data).map((w) => `${w.word}: ${w.line}`);

const CAPTURES = ['lab-iptables', 'lab-nftables', 'lab-cilium'] as const;

describe('--lang ja: the text of show services, trace and diagnose has no English left', () => {
  it.each(CAPTURES)('%s', async (capture) => {
    const snap = await snapshotOf(capture);
    const data = captureWords(capture);
    const services = showServices(snap, 'text', undefined, 'ja');
    expect(services).toMatch(/^名前空間\s+名前\s+種類\s+クラスタIP\s+ポート\s+エンドポイント$/m);
    expect(services).toMatch(/^ノード lab-node/);
    expect(english(services, data)).toEqual([]);
    expect(english(showServices(snap, 'wide', undefined, 'ja'), data)).toEqual([]);
    for (const args of [{ from: '10.244.0.9', to: '10.96.12.34:80/tcp' }, { entry: 'host', to: '10.96.0.10:53/udp' }]) {
      const trace = runTraceCommand(snap, args, 'ja');
      expect(trace).toMatch(/^パケット /m);
      expect(trace).toMatch(/^判定: /m);
      expect(english(trace, data)).toEqual([]);
    }
    const diagnose = showDiagnose(snap, 'text', { lang: 'ja' }).out;
    expect(english(diagnose, data)).toEqual([]);
  });

  it.each(CAPTURES)('%s: the bodies of show rules, lb, conntrack and compare', async (capture) => {
    const snap = await snapshotOf(capture);
    const data = captureWords(capture);
    const texts = {
      rules: showRules(snap, 'text', {}, 'ja'),
      lb: showLb(snap, 'text', 'ja'),
      conntrack: showConntrack(snap, 'text', {}, 'ja'),
      compare: showCompare(snap, 'text', undefined, 'ja'),
      compareWeb: showCompare(snap, 'text', 'default/web', 'ja'),
    };
    for (const [what, text] of Object.entries(texts)) expect(english(text, data), what).toEqual([]);
    expect(texts.conntrack).toMatch(/^\d+\/\d+ 件 · nf_conntrack /m);
    expect(texts.compare).toMatch(/^モード\s+チェイン\s+ルール\s+要素\s+合計\s+このノード\s+単位$/m);
    expect(texts.compareWeb).toMatch(/^nftables: \S/m);
    if (capture !== 'lab-nftables') expect(texts.compareWeb).toMatch(/^推定:$/m);
    expect(texts.lb).toMatch(capture === 'lab-cilium' ? /^取得元: ピン留めされた BPF マップ/m : /^このノードには Cilium の LB マップがありません/m);
  });

  it('--lang en prints the kubectl headers and the English labels as before', async () => {
    const snap = await snapshotOf('lab-iptables');
    expect(showServices(snap, 'text')).toMatch(/^NAMESPACE\s+NAME\s+TYPE\s+CLUSTER-IP\s+PORT\(S\)\s+ENDPOINTS$/m);
    expect(showServices(snap, 'text')).toContain("\nwhat lab-node's Service dataplane should do, from the API (kube-proxy's rules or Cilium's LB maps):\n");
    const trace = runTraceCommand(snap, { from: '10.244.0.9', to: '10.96.12.34:80/tcp' }, 'en');
    expect(trace).toMatch(/^node lab-node \(.*\) · replay .* · captured /);
    expect(trace).toMatch(/^packet tcp 10\.244\.0\.9:43210 → 10\.96\.12\.34:80/m);
    expect(trace).toMatch(/^verdict: forwarded: /m);
    expect(showDiagnose(snap, 'text', { lang: 'en' }).out).toMatch(/^BROKEN {3}default\/empty$/m);
    expect(showDiagnose(snap, 'text', { lang: 'en' }).out).toContain(': [endpoints] ');
    // The layer tag is a word of ours, not data: the English finder reads "endpoints" as the capture's own.
    const ja = showDiagnose(snap, 'text', { lang: 'ja' }).out;
    expect(ja).toContain(': [エンドポイント] ');
    expect(ja).not.toMatch(/\[(api|endpoints|dataplane|conntrack|dns)\]/);
  });
});

describe('fleet diagnose --lang ja', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-lang-'));
    writeLabFleet(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the matrix, its headers and the findings in Japanese; yaml is the json document', async () => {
    const d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
    const ja = fleetText(d, 'ja');
    expect(ja).toContain('ノード 4 台: 正常 1、劣化 1、故障 1、失敗 1');
    expect(ja).toMatch(/^サービス\s+lab-node2\s+lab-node3\s+（ほかのノード 1 台: 正常）$/m);
    expect(ja).toMatch(/^kube-system\/kube-dns\s+正常\s+故障$/m);
    // The words of the fleet's files are data (a node's stderr, curl's); nodescope's own reasons are not.
    expect(ja).toMatch(/^lab-node9 +失敗 +- +ノードを開く途中で時間切れ（2 分）$/m);
    expect(english(ja, treeWords(dir))).toEqual([]);
    expect(fleetText(d, 'en')).toContain('4 nodes: 1 ok, 1 degraded, 1 broken, 1 failed');
    expect(YAML.parse(fleetJson(d, 'yaml'))).toEqual(JSON.parse(fleetJson(d)));
  });
});

describe('fleet diagnose --lang ja on a Cilium fleet', () => {
  const OK = [['cilium-health-ep', '14s ago', 'never', 0, 'no error']] as const;
  const FAILING = [['sync-lb-maps', '2m ago', '2m ago', 3, 'lb4 map full']] as const;
  const web = (status: string, since: string, error = '') => frontendsText([['10.96.12.34:80/TCP', 'ClusterIP', 'default/web', 'http', '10.244.0.23:8080/TCP', status, since, error]]);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'nodescope-fleet-cilium-lang-'));
    // Every part of the freshness line: a failing controller, a frontend pending, one in error, an agent not reached (lab-node3's outputs absent).
    writeCiliumFleet(dir, {
      'lab-node': { status: statusText('Ok   1.34', FAILING), frontends: web('Done', '5m2s') },
      'lab-node2': { status: statusText('Warning   1.34 (failed to watch)', OK), frontends: web('Pending', '3m5s') + web('Error', '1m', 'map full').split('\n').slice(1).join('\n') },
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the nodes\' Cilium freshness lines, the matrix and the findings in Japanese; English unchanged', async () => {
    const d = await diagnoseFleet(dir, { diagnose: fleetDiagnoseNode });
    const ja = fleetText(d, 'ja');
    expect(ja).toMatch(/^lab-node +\S+ +cilium +Cilium: API 監視 Ok; コントローラ 0\/1 正常/m);
    expect(ja).toMatch(/（失敗中: sync-lb-maps ×3）/);
    expect(ja).toMatch(/LB フロントエンド: 完了 0, 保留 1（最古 185 秒）/);
    expect(ja).toMatch(/^lab-node3 .*不明: cilium-dbg status を読めませんでした（failed: Error: /m);
    // The agents' own words (states, controller names, stderr) are data: the bundle's files.
    expect(english(ja, treeWords(dir))).toEqual([]);
    const en = fleetText(d, 'en');
    expect(en).toMatch(/^lab-node +\S+ +cilium +Cilium: API watch Ok; controllers 0\/1 healthy \(failing: sync-lb-maps ×3\); LB frontends: 1 done; last change 302 s before capture$/m);
    expect(en).toMatch(/^lab-node3 .*unknown: cilium-dbg status was not readable \(failed: Error: /m);
    // The binary prints the same text (exit 1: Services broken on some node).
    const bin = run('fleet', 'diagnose', dir, '--lang', 'ja');
    expect(bin.status, bin.stderr).toBe(1);
    expect(bin.stdout.trimEnd()).toBe(ja.trimEnd());
  });
});

describe('the binary: --lang and -o for trace, diagnose, dig', () => {
  const replay = fixtureDir('lab-iptables');

  it('dig --lang ja: nodescope\'s own lines in Japanese, dig(1)\'s layout kept; -o yaml is the json document', () => {
    const ja = run('dig', 'kube-dns.kube-system.svc.cluster.local', '--replay', replay, '--lang', 'ja');
    expect(ja.status, ja.stderr).toBe(0);
    expect(ja.stdout).toContain(';; QUESTION SECTION:');
    expect(ja.stdout).toMatch(/^;; API から予想される応答: NOERROR/m);
    expect(ja.stdout).toMatch(/^;; クラスタドメイン: /m);
    expect(ja.stdout).not.toMatch(/EXPECTED from the API|cluster domain:/);
    const json = run('dig', 'kube-dns.kube-system.svc.cluster.local', '--replay', replay, '-o', 'json');
    const yaml = run('dig', 'kube-dns.kube-system.svc.cluster.local', '--replay', replay, '-o', 'yaml');
    expect(yaml.status, yaml.stderr).toBe(0);
    expect(YAML.parse(yaml.stdout)).toEqual(JSON.parse(json.stdout));
    expect(YAML.parse(yaml.stdout)).toMatchObject({ apiVersion: 'nodescope.dev/v1', kind: 'Dig' });
  });

  it.each(CAPTURES)('%s: show dns and dig +search --lang ja have no English left', (capture) => {
    const dir = fixtureDir(capture);
    const resolv = path.join(mkdtempSync(path.join(tmpdir(), 'nodescope-resolv-')), 'resolv.conf');
    writeFileSync(resolv, 'search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n');
    // The source's label (`replay:DIR`, the server line's `via`) is a name and `IN` the record class of dig(1)'s layout: not words of ours.
    const data = new Set([...captureWords(capture), 'replay', 'IN']);
    const runs = {
      dnsKubeDns: ['show', 'dns', '--service', 'kube-system/kube-dns'],
      dnsWeb: ['show', 'dns', '--service', 'default/web'],
      digPod: ['dig', '+search', 'web', '--resolv-conf', resolv],
      digNode: ['dig', '+search', 'kube-dns.kube-system'],
    };
    const out: Record<string, string> = {};
    for (const [what, args] of Object.entries(runs)) {
      const r = run(...args, '--replay', dir, '--lang', 'ja');
      // dig(1)'s status 9 (no reply): the node's resolv.conf names a server the capture did not record.
      expect(r.status, `${what}: ${r.stderr}`).toBe(what === 'digNode' ? 9 : 0);
      expect(english(r.stdout, new Set([...data, ...latinWords(resolv)])), what).toEqual([]);
      out[what] = r.stdout;
    }
    expect(out['dnsKubeDns']).toMatch(/^問い合わせ\s+種類\s+応答\s+回答\s+ミリ秒\s+照合$/m);
    expect(out['dnsKubeDns']).toMatch(/^検索 "kube-dns"、ClusterFirst の Pod の resolv\.conf を使用/m);
    expect(out['digPod']).toMatch(/^検索 "web"、Pod の resolv\.conf を使用/m);
    expect(out['digPod']).toMatch(/ {2}← 応答$/m);
    expect(out['digNode']).toMatch(/^ {2}応答なし（not-captured）/m);
    rmSync(path.dirname(resolv), { recursive: true, force: true });
  }, 60_000);

  it('trace and diagnose -o yaml print the json document as YAML', () => {
    const trace = ['trace', '--replay', replay, '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp'];
    const tj = run(...trace, '-o', 'json');
    const ty = run(...trace, '-o', 'yaml');
    expect(ty.status, ty.stderr).toBe(0);
    expect(YAML.parse(ty.stdout)).toEqual(JSON.parse(tj.stdout));
    const dj = run('diagnose', '--replay', replay, '-o', 'json');
    const dy = run('diagnose', '--replay', replay, '-o', 'yaml');
    expect(dy.status).toBe(dj.status);
    expect(YAML.parse(dy.stdout)).toMatchObject({ apiVersion: 'nodescope.dev/v1', kind: 'Diagnosis' });
    expect(YAML.parse(dy.stdout)).toEqual(JSON.parse(dj.stdout));
  }, 60_000);

  it.each([
    ['trace', '--replay', replay, '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp'],
    ['diagnose', '--replay', replay],
    ['dig', 'kube-dns.kube-system', '--replay', replay],
    ['fleet', 'diagnose', replay],
  ])('%s -o wide and -o name are refused naming text, json, yaml', (...args) => {
    for (const format of ['wide', 'name']) {
      const r = run(...args, '-o', format);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(new RegExp(`prints text, json, yaml, not ${format}: `));
      expect(r.stdout).toBe('');
    }
    const bad = run(...args, '-o', 'csv');
    expect(bad.stderr).toMatch(/prints text, json, yaml\b/);
  });
});

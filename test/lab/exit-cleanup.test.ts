/**
 * What nodescope leaves behind on each exit path (issue 24, items 2, 5, 6, 7), with the
 * real binary against the real parts: the TUI with `--node` in tmux against the recorded
 * API server (its pod exec runs in the lab's node namespace), killed by SIGINT, SIGTERM,
 * SIGHUP and `tmux kill-pane`; quit while the API server does not answer; the leftover
 * sweep with run ids (one held by a process in another PID namespace); a pod ended by its
 * deadline; and `trace --allow-trace` on the lab node: two runs at once, SIGINT/SIGTERM
 * during the trace, and the table of a SIGKILLed run at the next run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../src/collect/session.js';
import { MANAGED_BY_LABEL, OWNER_ANNOTATION, RUN_ANNOTATION, localOwner } from '../../src/sources/k8s-debug-pod.js';
import { openSource } from '../../src/sources/open.js';
import { startApiServer, type ApiServerHandle } from '../api-server/index.js';
import { labAvailable } from '../helpers/lab.js';
import { startBinary } from '../helpers/run-binary.js';
import { BINARY, TmuxSession, tmuxAvailable } from '../helpers/tmux.js';
import { nsExec } from './exec.js';
import { LAB_SCENARIO, labDown, labUp, sendHttp, type LabHandle } from './lab.js';
import { canUnsharePid, holdRun } from './run-records.js';

const PREFIX = 'nsex-';
const canRun = labAvailable(['ip', 'nft', 'iptables-restore', 'curl', 'dnsmasq', 'conntrack', 'sysctl', 'openssl', 'timeout']) && tmuxAvailable('the exit-cleanup tests');
const NODE = LAB_SCENARIO.nodeName;
const web = LAB_SCENARIO.services.find((s) => s.name === 'web')!;
const client = LAB_SCENARIO.pods.find((p) => p.key === 'client')!;
/** The bound quit must keep, even when the API server does not answer (src/cleanup.ts: 7 s, plus slack). */
const QUIT_BOUND_MS = 10_000;

let lab: LabHandle;
let server: ApiServerHandle;
let home: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ours = (s: ApiServerHandle = server) => s.pods().filter((p) => p.metadata.labels?.[MANAGED_BY_LABEL] === 'nodescope');
const env = () => ({ ...process.env, HOME: home, XDG_STATE_HOME: path.join(home, '.local', 'state'), NO_COLOR: '1', LANG: 'C.UTF-8' });

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The nodescope process under a tmux pane's shell. */
function nodescopePid(session: string): number {
  const shell = spawnSync('tmux', ['display', '-p', '-t', session, '#{pane_pid}'], { encoding: 'utf8' }).stdout.trim();
  const kids = spawnSync('pgrep', ['-P', shell], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  // The shell's own command line names the binary too: the process is the one whose argv[0] is node.
  const pid = [...kids, Number(shell)].find((p) => {
    const argv = existsSync(`/proc/${p}/cmdline`) ? readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0') : [];
    return argv[0] === process.execPath && argv[1] === BINARY;
  });
  if (!pid) throw new Error(`no nodescope process in tmux session ${session}`);
  return pid;
}

/** The TUI with `--node` in tmux (stderr and the exit code to files); resolves once its screen shows the node's data. */
async function startTui(name: string, s: ApiServerHandle = server) {
  const dir = mkdtempSync(path.join(home, 'tui-'));
  const errFile = path.join(dir, 'stderr');
  const codeFile = path.join(dir, 'code');
  const vars = Object.entries({ HOME: home, XDG_STATE_HOME: path.join(home, '.local', 'state'), KUBECONFIG: s.kubeconfigPath, LANG: 'C.UTF-8' }).map(([k, v]) => `${k}=${v}`).join(' ');
  const tmux = new TmuxSession(`${PREFIX}${name}-${process.pid}`);
  tmux.kill();
  expect(tmux.start(`sh -c '${vars} ${process.execPath} ${BINARY} --node ${NODE} --lang en 2>${errFile}; echo $? >${codeFile}'`, 120, 30)).toBe(0);
  await until('the debug pod to run', () => ours(s).some((p) => (p['status'] as { phase?: string } | undefined)?.phase === 'Running'), 30_000);
  await tmux.waitFor(['KUBE-SERVICES'], 30_000).catch(() => tmux.waitFor([NODE], 5_000));
  const pid = nodescopePid(tmux.name);
  return {
    tmux,
    pid,
    stderr: () => (existsSync(errFile) ? readFileSync(errFile, 'utf8') : ''),
    code: () => (existsSync(codeFile) ? Number(readFileSync(codeFile, 'utf8').trim()) : null),
  };
}

/** Runs the built CLI (`trace`, `show`) with the test server's kubeconfig. */
const cli = (args: string[], s: ApiServerHandle = server) => startBinary(args, { env: { ...env(), KUBECONFIG: s.kubeconfigPath } });

beforeAll(async () => {
  if (!canRun) return;
  lab = await labUp('iptables', { prefix: PREFIX });
  server = await startApiServer({ objectsFile: lab.apiObjectsPath, netns: lab.names.node, podStartDelayMs: 200 });
  home = mkdtempSync(path.join(tmpdir(), 'nodescope-ex-home-'));
  process.env['XDG_STATE_HOME'] = path.join(home, '.local', 'state');
  process.env['KUBECONFIG'] = server.kubeconfigPath;
}, 120_000);

afterAll(async () => {
  delete process.env['XDG_STATE_HOME'];
  delete process.env['KUBECONFIG'];
  if (!canRun) return;
  await server?.close();
  await labDown({ prefix: PREFIX });
  rmSync(home, { recursive: true, force: true });
}, 60_000);

describe.runIf(canRun)('the TUI with --node deletes its debug pod on every exit path', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)('%s: the pod is deleted before the process exits (exit %i)', async (sig, code) => {
    const tui = await startTui(sig.toLowerCase());
    try {
      const pod = ours()[0]!.metadata.name!;
      process.kill(tui.pid, sig);
      await until('nodescope to exit', () => !alive(tui.pid), QUIT_BOUND_MS);
      expect(ours(), tui.stderr()).toEqual([]);
      expect(server.requests().some((q) => q.method === 'DELETE' && q.path.endsWith(`/pods/${pod}`) && q.status === 200)).toBe(true);
      await until('the exit code', () => tui.code() !== null, 5_000);
      expect(tui.code(), tui.stderr()).toBe(code);
      expect(tui.stderr()).not.toMatch(/left behind|internal error/);
    } finally {
      tui.tmux.kill();
    }
  }, 90_000);

  it('tmux kill-pane (the terminal closes: SIGHUP, then no tty): the pod is deleted and the process exits', async () => {
    const tui = await startTui('killpane');
    try {
      expect(ours()).toHaveLength(1);
      spawnSync('tmux', ['kill-pane', '-t', tui.tmux.name]);
      await until('nodescope to exit', () => !alive(tui.pid), QUIT_BOUND_MS);
      expect(ours()).toEqual([]);
    } finally {
      tui.tmux.kill();
    }
  }, 90_000);

  it('q while the API server does not answer: exits within the bound and names the pod left behind; the next run sweeps it', async () => {
    const tui = await startTui('frozen');
    let pod = '';
    try {
      pod = ours()[0]!.metadata.name!;
      server.freeze(true);
      const t0 = Date.now();
      await tui.tmux.keys('q');
      await until('nodescope to exit', () => !alive(tui.pid), QUIT_BOUND_MS + 5_000);
      const ms = Date.now() - t0;
      expect(ms, tui.stderr()).toBeLessThanOrEqual(QUIT_BOUND_MS);
      expect(server.held().some((h) => h.method === 'DELETE' && h.path.endsWith(`/pods/${pod}`))).toBe(true);
      expect(tui.stderr()).toContain('left behind:');
      expect(tui.stderr()).toContain(`debug pod default/${pod}`);
      expect(tui.stderr()).toContain(`kubectl delete pod -n default ${pod}`);
      // The process is gone, but the server may not have seen its connection close yet: a held
      // DELETE resumed before then would delete the pod behind the sweep's back.
      await until('the server to see the quit client go', () => server.held().every((h) => h.clientGone), 10_000);
    } finally {
      server.freeze(false);
      tui.tmux.kill();
    }
    // The held DELETE of a client that went away is not answered: the pod is still there…
    expect(ours().map((p) => p.metadata.name)).toEqual([pod]);
    // …until the next run on this machine, whose sweep finds its run gone.
    const next = await cli(['show', 'services', '--node', NODE]).done;
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(new RegExp(`deleted leftover debug pod default/${pod}: its nodescope run [0-9a-f]{12} on this machine is gone`));
    expect(ours()).toEqual([]);
  }, 90_000);
});

describe.runIf(canRun)('the leftover sweep identifies runs by a run id, not a PID', () => {
  it("a pod of a live run in another PID namespace (its PID dead here) is kept; a gone run's pod is deleted", async () => {
    const live = await holdRun({ pidns: canUnsharePid });
    const gone = await holdRun();
    await gone.kill();
    const deadPid = spawnSync('true').pid!;
    // The PID annotation an older nodescope wrote: dead here, alive in its own namespace.
    const pod = (name: string, run: string) => ({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: 'default', labels: { [MANAGED_BY_LABEL]: 'nodescope' }, annotations: { [OWNER_ANNOTATION]: localOwner(), [RUN_ANNOTATION]: run, 'nodescope/pid': String(deadPid) } },
      spec: { nodeName: NODE, containers: [{ name: 'debugger', image: 'busybox:1.36.1' }] },
      status: { phase: 'Running' },
    });
    server.upsert(pod('nodescope-live-other-ns', live.id));
    server.upsert(pod('nodescope-gone', gone.id));
    try {
      const r = await cli(['show', 'services', '--node', NODE]).done;
      expect(r.code, r.stderr).toBe(0);
      expect(ours().map((p) => p.metadata.name)).toEqual(['nodescope-live-other-ns']);
      expect(r.stderr).toContain(`left debug pod default/nodescope-live-other-ns alone: its nodescope run ${live.id} still runs on this machine`);
      expect(r.stderr).toContain(`deleted leftover debug pod default/nodescope-gone: its nodescope run ${gone.id} on this machine is gone`);
    } finally {
      await live.kill();
      for (const p of ours()) server.remove({ kind: 'Pod', namespace: 'default', name: p.metadata.name! });
    }
  }, 60_000);
});

describe.runIf(canRun)('a debug pod ended by its deadline', () => {
  it('the session shows the node as lost with the reason', async () => {
    const source = await openSource({ node: NODE, podDeadline: 3600 }, { progress: () => undefined });
    const session = new Session({ transport: source.transport, live: true, intervalMs: 3_600_000 });
    try {
      await session.start();
      const pod = ours()[0]!;
      expect((pod['spec'] as { activeDeadlineSeconds: number }).activeDeadlineSeconds).toBe(3600);
      // What the kubelet does when activeDeadlineSeconds passes.
      server.mutate({ kind: 'Pod', namespace: 'default', name: pod.metadata.name! }, (p) => {
        p['status'] = { phase: 'Failed', reason: 'DeadlineExceeded', message: 'Pod was active on the node longer than the specified deadline' };
      });
      session.refreshNow();
      await until('the failed refresh', () => !session.getState().refreshing && session.getState().error !== null);
      expect(session.getState().error).toContain(`node lost: the debug pod default/${pod.metadata.name} reached its deadline (activeDeadlineSeconds 3600, --pod-deadline)`);
    } finally {
      await session.stop();
    }
    expect(ours()).toEqual([]);
  }, 60_000);
});

describe.runIf(canRun)('trace --allow-trace: per-run tables, and nothing left on any exit path', () => {
  const traceArgs = (seconds: number) => ['trace', '--netns', lab.names.node, '--allow-trace', '--trace-seconds', String(seconds), '--from', client.ip, '--to', `${web.clusterIP}:${web.ports[0]!.port}/tcp`];
  const traceTables = async () => ((await nsExec(lab.names.node, ['nft', 'list', 'tables'])).stdout.match(/nodescope-trace\S*/g) ?? []).sort();
  const monitors = () => spawnSync('pgrep', ['-f', 'nft -a monitor trace'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  const listening = (all: string) => all.includes('send the traffic now');

  it('two runs at once each have their own table, both trace the packet, and neither removes the other\'s', async () => {
    const a = cli(traceArgs(15));
    await until('run A to listen', () => listening(a.stderr()));
    const b = cli(traceArgs(5));
    await until('run B to listen', () => listening(b.stderr()));
    const during = await traceTables();
    expect(during, `A: ${a.stderr()}\nB: ${b.stderr()}`).toHaveLength(2);
    expect(during.every((t) => /^nodescope-trace-[0-9a-f]{12}$/.test(t))).toBe(true);
    const http = await sendHttp(lab.podNs('client'), `http://${web.clusterIP}:${web.ports[0]!.port}/`, 1, { timeoutMs: 2000 });
    expect(http.failures).toBe(0);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    for (const r of [ra, rb]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("same walk: the kernel's events equal nodescope's");
      expect(r.stdout).toMatch(/table inet nodescope-trace-[0-9a-f]{12} removed/);
    }
    expect(rb.stderr).toMatch(/another trace runs on this node: table inet nodescope-trace-[0-9a-f]{12} .*\(alive on this machine\), left alone/);
    expect(await traceTables()).toEqual([]);
  }, 60_000);

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s during the trace: no table and no nft monitor process left (exit %i)', async (sig, code) => {
    const run = cli(traceArgs(30));
    await until('the trace to listen', () => listening(run.stderr()));
    expect(await traceTables()).toHaveLength(1);
    expect(monitors().length).toBeGreaterThan(0);
    run.child.kill(sig);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(code);
    expect(await traceTables()).toEqual([]);
    await until('no nft monitor trace process', () => monitors().length === 0, 3_000);
  }, 60_000);

  it('the table of a SIGKILLed run is reported and removed at the next run', async () => {
    const killed = cli(traceArgs(3));
    await until('the trace to listen', () => listening(killed.stderr()));
    const [left] = await traceTables();
    expect(left).toMatch(/^nodescope-trace-[0-9a-f]{12}$/);
    killed.child.kill('SIGKILL');
    await killed.done;
    expect(await traceTables()).toEqual([left]);
    const next = await cli(traceArgs(1)).done;
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(`removed the trace table inet ${left} on netns:${lab.names.node} left by run ${left!.slice('nodescope-trace-'.length)} (killed: its record on this machine is not held)`);
    expect(await traceTables()).toEqual([]);
  }, 60_000);
});

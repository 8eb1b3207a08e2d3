/**
 * The pure parts of the kubectl-debug and cluster sources (no root, no server): the debug
 * pod's name prefix and spec, the leftover rule, exec Status → exit code, and API error
 * translation.
 */
import { describe, expect, it } from 'vitest';
import { TransportError, UserError } from '../../src/errors.js';
import {
  DEBUG_POD_DEADLINE_S, MANAGED_BY_LABEL, debugPodManifest, debugPodName, leftoverAction, parsePodDeadline, type LeftoverPod,
} from '../../src/sources/k8s-debug-pod.js';
import type { RunState } from '../../src/run-record.js';
import { K8sStatusError, collectionPath, explainK8sError, statusFromBody } from '../../src/sources/k8s-client.js';
import { exitCodeOf } from '../../src/sources/k8s-exec.js';
import { podProgress } from '../../src/sources/kubectl-debug.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function leftover(o: Partial<LeftoverPod> = {}): LeftoverPod {
  return { name: 'nodescope-n1-abcde', phase: 'Running', owner: 'me@laptop', run: '0123456789ab', ...o };
}

describe('debug pod', () => {
  it.each(['n1', 'ip-10-0-1-23.eu-west-1.compute.internal', 'A'.repeat(253), 'node_with_underscores'])('prefix of %s leaves a valid ≤63-char name', (node) => {
    const name = debugPodName(node);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(DNS_LABEL);
    expect(name.startsWith('nodescope-')).toBe(true);
  });

  it('binds to the node with host namespaces, privileged, host root at /host, a deadline and nodescope labels', () => {
    const pod = debugPodManifest({ name: debugPodName('n1', Buffer.from([0, 1, 2, 3, 4])), node: 'n1', namespace: 'ops', image: 'img:1', owner: 'me@laptop', run: 'feedc0ffee00' }) as {
      metadata: { namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
      spec: Record<string, unknown> & { containers: { command: string[]; image: string }[] };
    };
    expect(pod.metadata.namespace).toBe('ops');
    expect((pod.metadata as { name?: string }).name).toBe('nodescope-n1-bcdfg');
    expect(pod.metadata.labels[MANAGED_BY_LABEL]).toBe('nodescope');
    expect(pod.metadata.annotations).toEqual({ 'nodescope/owner': 'me@laptop', 'nodescope/run': 'feedc0ffee00' });
    expect(pod.spec).toMatchObject({ nodeName: 'n1', hostNetwork: true, hostPID: true, hostIPC: true, activeDeadlineSeconds: DEBUG_POD_DEADLINE_S });
    expect(pod.spec.containers[0]!.image).toBe('img:1');
    expect(Number(pod.spec.containers[0]!.command[1])).toBe(DEBUG_POD_DEADLINE_S);
    expect(DEBUG_POD_DEADLINE_S).toBe(4 * 3600);
    const short = debugPodManifest({ name: 'p', node: 'n1', namespace: 'ops', image: 'img:1', owner: 'me@laptop', run: 'feedc0ffee00', deadlineSeconds: 5400 }) as { spec: { activeDeadlineSeconds: number; containers: { command: string[] }[] } };
    expect(short.spec.activeDeadlineSeconds).toBe(5400);
    expect(short.spec.containers[0]!.command).toEqual(['sleep', '5400']);
  });

  it.each([['4h', 14_400], ['90m', 5400], ['3600', 3600], ['60s', 60], ['24h', 86_400]])('--pod-deadline %s = %i s', (text, want) => {
    expect(parsePodDeadline(text)).toBe(want);
  });

  it.each(['0', '59', '25h', '1d', '-1h', '', 'h'])('--pod-deadline %j is refused', (text) => {
    expect(() => parsePodDeadline(text)).toThrow(/1m to 24h/);
  });
});

describe('leftoverAction', () => {
  it.each<[string, LeftoverPod, RunState, 'delete' | 'keep']>([
    ['ended pod of anyone', leftover({ owner: 'other@host', phase: 'Succeeded' }), 'alive', 'delete'],
    ['failed (deadline) pod', leftover({ phase: 'Failed' }), 'alive', 'delete'],
    ['its run recorded here as gone', leftover(), 'gone', 'delete'],
    ['its run alive here', leftover(), 'alive', 'keep'],
    ['its run not recorded here (same user@host, another PID namespace or machine)', leftover(), 'unknown', 'keep'],
    ["a colleague's running pod", leftover({ owner: 'other@host' }), 'unknown', 'keep'],
    ['no run id (an older nodescope)', leftover({ run: undefined }), 'gone', 'keep'],
  ])('%s → %s', (_, pod, state, want) => {
    expect(leftoverAction(pod, state).action).toBe(want);
  });
});

describe('API answers', () => {
  it('reads Status bodies and keeps other text', () => {
    const e = statusFromBody(403, JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'Forbidden', message: 'pods is forbidden: User "u" cannot create resource "pods"' }));
    expect({ code: e.code, reason: e.reason, message: e.message }).toEqual({ code: 403, reason: 'Forbidden', message: 'pods is forbidden: User "u" cannot create resource "pods"' });
    expect(statusFromBody(502, '<html>bad gateway</html>').message).toBe('<html>bad gateway</html>');
    expect(statusFromBody(500, '').message).toBe('HTTP 500');
  });

  it('explains 403 with verb, resource and scope; 401 and network failures by kind', () => {
    const ns = explainK8sError(new K8sStatusError(403, 'Forbidden', 'x'), { verb: 'create', resource: 'pods/exec', namespace: 'ops' }, 'https://api');
    expect(ns).toBeInstanceOf(UserError);
    expect(ns.message).toContain('"create" on "pods/exec" in namespace "ops"');
    expect((ns as UserError).hint).toContain('kubectl auth can-i create pods/exec -n ops');
    expect(explainK8sError(new K8sStatusError(403, 'Forbidden', 'x'), { verb: 'list', resource: 'nodes' }, 'https://api').message).toContain('at the cluster scope');
    expect(explainK8sError(new K8sStatusError(401, 'Unauthorized', 'x'), { verb: 'list', resource: 'pods' }, 'https://api')).toBeInstanceOf(UserError);
    expect(explainK8sError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), { verb: 'list', resource: 'pods' }, 'https://api')).toBeInstanceOf(TransportError);
  });

  it('exec Status → exit code', () => {
    expect(exitCodeOf({ metadata: {}, status: 'Success' })).toBe(0);
    expect(exitCodeOf({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } })).toBe(3);
    expect(exitCodeOf({ status: 'Failure', reason: 'InternalError', message: 'executable file not found' })).toBeNull();
  });

  it('collection paths and pod progress words', () => {
    expect(collectionPath('endpointslices', 'a')).toBe('/apis/discovery.k8s.io/v1/namespaces/a/endpointslices');
    expect(collectionPath('nodes', 'a')).toBe('/api/v1/nodes');
    expect(collectionPath('pods')).toBe('/api/v1/pods');
    expect(podProgress({ metadata: { name: 'p', namespace: 'n' }, status: { phase: 'Pending', containerStatuses: [{ state: { waiting: { reason: 'ImagePullBackOff' } } }] } })).toBe('Pending: ImagePullBackOff');
    expect(podProgress({ metadata: { name: 'p', namespace: 'n' } })).toBe('Pending');
  });
});

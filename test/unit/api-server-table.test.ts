import { describe, expect, it } from 'vitest';
import { makeEndpointSlice, makeNode, makePod, makeService } from '../api-server/builders.js';
import { humanDuration } from '../api-server/duration.js';
import { admitPod, preparePod, runningStatus } from '../api-server/pods.js';
import {
  cellsFor, COLUMNS, formatDiscoveryEndpoints, formatDiscoveryPorts, nodeRoles, podSummary, serviceExternalIP, servicePorts, toTable,
} from '../api-server/table.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('humanDuration (apimachinery util/duration)', () => {
  it.each([
    [-5 * S, '<invalid>'],
    [-1 * S, '0s'],
    [1 * S, '1s'],
    [70 * S, '70s'],
    [190 * S, '3m10s'],
    [5 * M, '5m'],
    [70 * M, '70m'],
    [3 * H + 5 * M, '3h5m'],
    [47 * H, '47h'],
    [49 * H, '2d1h'],
    [(8 * 24 + 2) * H, '8d'],
    [367 * D, '367d'],
    [(365 * 2 * 24 + 25) * H, '2y1d'],
    [(365 * 8 * 24 + 2) * H, '8y'],
  ])('%d ms → %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('Table cells (kube-apiserver printers)', () => {
  const now = new Date('2026-11-01T10:05:00Z');

  it('prints a ClusterIP service row with every column', () => {
    expect(cellsFor('services', makeService(), now)).toEqual(['web', 'ClusterIP', '10.96.12.34', '<none>', '80/TCP', '5m', 'app=web']);
    expect(cellsFor('services', makeService(), now)).toHaveLength(COLUMNS.services.length);
  });

  it('prints NodePort ports as port:nodePort/proto and LoadBalancer external IPs', () => {
    expect(servicePorts([{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }])).toBe('80:30080/TCP,53/UDP');
    const lb = { ...makeService({ type: 'LoadBalancer' }), status: { loadBalancer: { ingress: [{ ip: '203.0.113.7' }] } } };
    expect(serviceExternalIP(lb)).toBe('203.0.113.7');
    expect(serviceExternalIP(makeService({ type: 'LoadBalancer' }))).toBe('<pending>');
  });

  it('prints EndpointSlice ports and endpoints with the 3-item limit and <unset>', () => {
    expect(formatDiscoveryPorts([{ port: 8080 }, { name: 'metrics' }, {}])).toBe('8080,metrics,*');
    expect(formatDiscoveryEndpoints(makeEndpointSlice({ addresses: ['a1', 'a2', 'a3', 'a4', 'a5'] })['endpoints'])).toBe('a1,a2,a3 + 2 more...');
    expect(formatDiscoveryEndpoints([])).toBe('<unset>');
  });

  it('summarises pods: Running, ContainerCreating, Completed', () => {
    expect(podSummary(makePod(), now)).toEqual({ ready: '1/1', reason: 'Running', restarts: '0' });
    const pending = admitPod(preparePod({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } }, 'default'), now, 'node-1');
    expect(podSummary(pending, now)).toEqual({ ready: '0/1', reason: 'ContainerCreating', restarts: '0' });
    const running = { ...pending, status: runningStatus(pending, now, '192.168.50.2', '10.244.200.2') };
    expect(podSummary(running, now).reason).toBe('Running');
  });

  it('gives a hostNetwork pod the node IP as its pod IP', () => {
    const p = admitPod(preparePod({ metadata: { name: 'd' }, spec: { hostNetwork: true, containers: [{ name: 'c', image: 'busybox' }] } }, 'default'), now, 'node-1');
    expect(runningStatus(p, now, '192.168.50.2', '10.244.200.2')['podIP']).toBe('192.168.50.2');
  });

  it('prints node roles from node-role labels', () => {
    expect(nodeRoles(makeNode({ roles: ['worker', 'control-plane'] }))).toBe('control-plane,worker');
    expect(cellsFor('nodes', makeNode(), now).slice(0, 5)).toEqual(['node-1', 'Ready', '<none>', '5m', 'v1.32.4']);
  });

  it('omits column definitions when asked (later watch events)', () => {
    const t = toTable('pods', [makePod()], { resourceVersion: '5', now, include: 'None', apiVersion: 'meta.k8s.io/v1', noHeaders: true }) as Record<string, unknown>;
    expect(t['columnDefinitions']).toBeNull();
    expect((t['rows'] as { object?: unknown }[])[0]!.object).toBeUndefined();
  });
});

/** `trace --from POD` and `--to-service NS/NAME[:PORT]` (issue 22 item 3): resolution, then the real binary. */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { parseK8sObjects } from '../../src/parsers/k8s-objects.js';
import { isAddressArg, podAddress, serviceDestination } from '../../src/cli/trace-names.js';

const fixture = (name: string) => path.join(packageRoot(), 'fixtures', name);
const api = parseK8sObjects(readFileSync(path.join(fixture('lab-iptables'), 'api.json'), 'utf8'), 'api.json').value;
const binary = path.join(packageRoot(), 'dist', 'bin', 'nodescope.js');
const run = (...args: string[]) => spawnSync('node', [binary, ...args], { encoding: 'utf8', input: '' });

describe('trace names', () => {
  it('tells addresses from Pod names', () => {
    for (const a of ['10.244.0.9', '10.244.0.9:3456', '[fd00::1]:80', 'fd00::1']) expect(isAddressArg(a), a).toBe(true);
    for (const n of ['client', 'default/client', 'web-7c9d8b5f4-2xkqp']) expect(isAddressArg(n), n).toBe(false);
  });

  it('resolves a Pod by NAME or NAMESPACE/NAME, and -n; refuses an unknown one or no API objects', () => {
    expect(podAddress(api, 'client', undefined)).toBe('10.244.0.9');
    expect(podAddress(api, 'default/web-7c9d8b5f4-zt5wn', undefined)).toBe('10.244.1.15');
    expect(() => podAddress(api, 'client', 'kube-system')).toThrow('--from client: no such Pod in namespace kube-system');
    expect(() => podAddress(null, 'client', undefined)).toThrow('needs API objects');
  });

  it('resolves a Service to its ClusterIP and port (number or name); several ports need one named', () => {
    expect(serviceDestination(api, 'default/web')).toBe('10.96.12.34:80/tcp');
    expect(serviceDestination(api, 'default/web:http')).toBe('10.96.12.34:80/tcp');
    expect(serviceDestination(api, 'kube-system/kube-dns:dns')).toBe('10.96.0.10:53/udp');
    expect(serviceDestination(api, 'kube-system/kube-dns:dns-tcp')).toBe('10.96.0.10:53/tcp');
    expect(() => serviceDestination(api, 'kube-system/kube-dns:53')).toThrow('the Service has several ports: 53/UDP (dns), 53/TCP (dns-tcp)');
    expect(() => serviceDestination(api, 'default/web:81')).toThrow('no such port');
    expect(() => serviceDestination(api, 'default/web-headless')).toThrow('no ClusterIP');
    expect(() => serviceDestination(api, 'web')).toThrow('expected NAMESPACE/NAME[:PORT]');
  });

  it('the binary traces the same packet from names as from addresses', () => {
    const replay = ['--replay', fixture('lab-iptables'), '-o', 'json'];
    const byIp = run('trace', '--from', '10.244.0.9', '--to', '10.96.12.34:80/tcp', ...replay);
    const byName = run('trace', '--from', 'default/client', '--to-service', 'default/web:http', ...replay);
    expect(byName.status, byName.stderr).toBe(0);
    expect(byName.stdout).toBe(byIp.stdout);
    const none = run('trace', '--from', 'client', '--replay', fixture('lab-iptables'));
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('trace needs a destination');
  }, 60_000);
});

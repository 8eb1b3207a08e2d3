import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCapture, makePod } from '../api-server/builders.js';
import { mapHostChroot, resolveExecutable } from '../api-server/exec.js';
import { startApiServer, type ApiServerHandle } from '../api-server/index.js';
import { execRaw } from '../api-server/test-client.js';

let server: ApiServerHandle;
beforeAll(async () => {
  const capture = makeCapture();
  capture.items.push(makePod({ name: 'two', containers: ['a', 'b'] }), makePod({ name: 'waiting', phase: 'Pending' }), makePod({ name: 'done', phase: 'Succeeded' }));
  server = await startApiServer({ objects: capture, forbid: [{ verb: 'create', resource: 'pods/exec', namespace: 'kube-system' }] });
});
afterAll(async () => {
  await server.close();
});

describe('exec over v5.channel.k8s.io', () => {
  it('sends the ready frame, stdout, stderr, the Success status, then closes 1000', async () => {
    const t = await execRaw(server, { pod: 'web-0', command: ['sh', '-c', 'echo out; echo err >&2'] });
    expect(t.protocol).toBe('v5.channel.k8s.io');
    expect(t.frames[0]).toEqual({ channel: 1, data: Buffer.alloc(0) });
    expect(t.stdout).toBe('out\n');
    expect(t.stderr).toBe('err\n');
    expect(t.frames.at(-1)!.channel).toBe(3);
    expect(t.frames.at(-1)!.data.toString()).toBe('{"metadata":{},"status":"Success"}');
    expect(t.closeCode).toBe(1000);
  });

  it('reports a non-zero exit as NonZeroExitCode with the ExitCode cause', async () => {
    const t = await execRaw(server, { pod: 'web-0', command: ['sh', '-c', 'exit 7'] });
    expect(t.status).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: error executing command [sh -c exit 7], exit code 7',
      reason: 'NonZeroExitCode',
      details: { causes: [{ reason: 'ExitCode', message: '7' }] },
    });
  });

  it('feeds stdin and ends it on the CLOSE signal [255, 0]', async () => {
    const t = await execRaw(server, { pod: 'web-0', command: ['cat'], stdin: ['hello ', 'world'] });
    expect(t.stdout).toBe('hello world');
    expect(t.status.status).toBe('Success');
  });

  it('negotiates v4 when only v4 is offered', async () => {
    const t = await execRaw(server, { pod: 'web-0', command: ['echo', 'v4'], protocols: ['v4.channel.k8s.io'] });
    expect(t.protocol).toBe('v4.channel.k8s.io');
    expect(t.stdout).toBe('v4\n');
  });

  it('maps a leading chroot /host to the host root', async () => {
    const t = await execRaw(server, { pod: 'web-0', command: ['chroot', '/host', 'sh', '-c', 'pwd'] });
    expect(t.stdout).toBe('/\n');
    expect(mapHostChroot(['chroot', '/host'])).toEqual(['/bin/sh']);
    expect(mapHostChroot(['ls', '/host'])).toEqual(['ls', '/host']);
  });

  it('reports a missing executable as an InternalError status', async () => {
    expect(resolveExecutable('sh')).toMatch(/\/sh$/);
    const t = await execRaw(server, { pod: 'web-0', command: ['no-such-binary-xyz'] });
    expect(t.status).toMatchObject({ status: 'Failure', reason: 'InternalError', code: 500 });
    expect(t.status.message).toContain('"no-such-binary-xyz": executable file not found in $PATH');
  });
});

describe('exec refusals are HTTP Status answers to the upgrade', () => {
  const refused = async (o: Parameters<typeof execRaw>[1]) => {
    const e = (await execRaw(server, o).then(() => undefined, (x: unknown) => x)) as { statusCode: number; body: string } | undefined;
    expect(e, 'the upgrade should have been refused').toBeDefined();
    return { code: e!.statusCode, status: JSON.parse(e!.body) as { message: string; reason: string } };
  };

  it('404 for a missing pod', async () => {
    const r = await refused({ pod: 'ghost', command: ['true'] });
    expect(r.code).toBe(404);
    expect(r.status.message).toBe('pods "ghost" not found');
  });

  it('400 for a pod that is not Running, or completed', async () => {
    expect((await refused({ pod: 'waiting', command: ['true'] })).code).toBe(400);
    expect((await refused({ pod: 'done', command: ['true'] })).status.message).toBe('cannot exec into a container in a completed pod; current phase is Succeeded');
  });

  it('400 when a multi-container pod gets no container, or a wrong one', async () => {
    expect((await refused({ pod: 'two', command: ['true'] })).status.message).toBe('a container name must be specified for pod two, choose one of: [a b]');
    expect((await refused({ pod: 'web-0', container: 'nope', command: ['true'] })).status.message).toBe('container nope is not valid for pod web-0');
    const ok = await execRaw(server, { pod: 'two', container: 'b', command: ['true'] });
    expect(ok.status.status).toBe('Success');
  });

  it('403 with the RBAC message for a forbidden pods/exec', async () => {
    server.upsert(makePod({ name: 'coredns-0', namespace: 'kube-system' }));
    const r = await refused({ namespace: 'kube-system', pod: 'coredns-0', command: ['true'] });
    expect(r.code).toBe(403);
    expect(r.status.message).toBe(`pods "coredns-0" is forbidden: User "${server.user}" cannot create resource "pods/exec" in API group "" in the namespace "kube-system"`);
  });

  it('400 when no supported sub-protocol is offered', async () => {
    expect((await refused({ pod: 'web-0', command: ['true'], protocols: ['channel.k8s.io'] })).code).toBe(400);
  });
});

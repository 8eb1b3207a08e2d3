import { describe, expect, it } from 'vitest';
import { decodeK8sProtobuf, decodeMessage, K8S_PROTOBUF_MAGIC, ProtobufUnsupported } from '../api-server/protobuf.js';

// A minimal protobuf encoder, enough to build what a gogo-generated Go client writes.
const varint = (n: number | bigint): Buffer => {
  let v = BigInt(n);
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
};
const str = (no: number, s: string | Buffer) => {
  const b = Buffer.isBuffer(s) ? s : Buffer.from(s);
  return Buffer.concat([varint((no << 3) | 2), varint(b.length), b]);
};
const num = (no: number, n: number | boolean) => Buffer.concat([varint(no << 3), varint(typeof n === 'boolean' ? (n ? 1 : 0) : n)]);
const msg = (no: number, ...parts: Buffer[]) => str(no, Buffer.concat(parts));

/** The pod `kubectl debug node/node-1 --profile=sysadmin -- sh -c 'echo x'` posts, with gogo's empty fields. */
function debugPodBytes(): Buffer {
  const meta = Buffer.concat([str(1, 'node-debugger-node-1-abcde'), str(2, ''), str(3, ''), str(6, ''), num(7, 0), msg(8)]);
  const container = Buffer.concat([
    str(1, 'debugger'), str(2, 'busybox'), str(3, 'sh'), str(3, '-c'), str(3, 'echo x'), str(5, ''), msg(8),
    msg(9, str(1, 'host-root'), num(2, false), str(3, '/host')), str(13, ''), str(14, ''),
    msg(15, num(2, true)), num(16, false), num(17, false), num(18, false), str(20, 'File'),
  ]);
  const spec = Buffer.concat([
    msg(1, str(1, 'host-root'), msg(2, msg(1, str(1, '/')))), msg(2, container), str(3, 'Never'), str(6, ''),
    str(10, 'node-1'), num(11, true), num(12, true), num(13, true), msg(22, str(1, ''), str(2, 'Exists'), str(3, ''), str(4, '')),
  ]);
  const pod = Buffer.concat([msg(1, meta), msg(2, spec), msg(3, str(1, ''))]);
  return Buffer.concat([K8S_PROTOBUF_MAGIC, msg(1, str(1, 'v1'), str(2, 'Pod')), str(2, pod), str(3, ''), str(4, '')]);
}

describe('Kubernetes protobuf pod bodies', () => {
  it('decodes the node-debug pod into the JSON a client would post', () => {
    expect(decodeK8sProtobuf(debugPodBytes())).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'node-debugger-node-1-abcde' },
      spec: {
        volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
        containers: [{
          name: 'debugger', image: 'busybox', command: ['sh', '-c', 'echo x'],
          volumeMounts: [{ name: 'host-root', mountPath: '/host' }], securityContext: { privileged: true }, terminationMessagePolicy: 'File',
        }],
        restartPolicy: 'Never', nodeName: 'node-1', hostNetwork: true, hostPID: true, hostIPC: true, tolerations: [{ operator: 'Exists' }],
      },
    });
  });

  it('reads labels maps and creation timestamps', () => {
    const meta = Buffer.concat([str(1, 'p'), msg(11, str(1, 'app'), str(2, 'web')), msg(8, num(1, 1_700_000_000))]);
    expect(decodeMessage('ObjectMeta', meta)).toEqual({ name: 'p', labels: { app: 'web' }, creationTimestamp: '2023-11-14T22:13:20Z' });
  });

  it('refuses a non-empty field it does not understand, and drops empty ones', () => {
    expect(decodeMessage('PodSpec', Buffer.concat([str(10, 'n'), str(99, '')]))).toEqual({ nodeName: 'n' });
    expect(() => decodeMessage('PodSpec', Buffer.concat([str(10, 'n'), msg(18, str(1, 'x'))]))).toThrow(ProtobufUnsupported);
  });

  it('refuses other kinds, a missing prefix and truncated input', () => {
    const svc = Buffer.concat([K8S_PROTOBUF_MAGIC, msg(1, str(1, 'v1'), str(2, 'Service')), str(2, '')]);
    expect(() => decodeK8sProtobuf(svc)).toThrow(ProtobufUnsupported);
    expect(() => decodeK8sProtobuf(Buffer.from('{"kind":"Pod"}'))).toThrow(ProtobufUnsupported);
    expect(() => decodeK8sProtobuf(debugPodBytes().subarray(0, 40))).toThrow(ProtobufUnsupported);
  });
});

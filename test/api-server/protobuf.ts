/**
 * Decoding of Kubernetes protobuf request bodies
 * (`Content-Type: application/vnd.kubernetes.protobuf`), for the pod bodies
 * kubectl's typed clients post (`kubectl debug node/…` creates its pod this way).
 *
 * Envelope (`k8s.io/apimachinery/pkg/runtime/serializer/protobuf`): the magic
 * bytes `k8s\0`, then a `runtime.Unknown` {1: TypeMeta{1 apiVersion, 2 kind},
 * 2: raw (the object message), 3: contentEncoding, 4: contentType}.
 * Wire format: protobuf varint/length-delimited fields (proto2, gogo-generated:
 * every non-pointer field is written even when empty).
 *
 * Only the Pod fields in {@link SCHEMA} are understood (field numbers from
 * `k8s.io/api/core/v1/generated.proto` and `apimachinery/pkg/apis/meta/v1/generated.proto`).
 * A field outside it that carries a non-empty value raises
 * {@link ProtobufUnsupported}, so a body is never silently half-read; empty
 * unknown fields are the zero values gogo writes and are dropped.
 */

/** A protobuf body this decoder cannot represent faithfully. */
export class ProtobufUnsupported extends Error {
  override readonly name = 'ProtobufUnsupported';
}

/** The 4-byte prefix of every Kubernetes protobuf body. */
export const K8S_PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'bytes';
/** One field: `ptr` keeps zero values (Go pointer fields), `inline` merges a message into its parent (VolumeSource). */
interface FieldSpec {
  name: string;
  type: Scalar | { msg: string } | { map: Scalar | { msg: string } };
  repeated?: boolean;
  ptr?: boolean;
  inline?: boolean;
}

const f = (name: string, type: FieldSpec['type'], extra: Partial<FieldSpec> = {}): FieldSpec => ({ name, type, ...extra });
const msg = (m: string) => ({ msg: m });

/** The message schemas understood, by message name and field number. */
const SCHEMA: Record<string, Record<number, FieldSpec>> = {
  Unknown: { 1: f('typeMeta', msg('TypeMeta')), 2: f('raw', 'bytes'), 3: f('contentEncoding', 'string'), 4: f('contentType', 'string') },
  TypeMeta: { 1: f('apiVersion', 'string'), 2: f('kind', 'string') },
  Pod: { 1: f('metadata', msg('ObjectMeta')), 2: f('spec', msg('PodSpec')), 3: f('status', msg('PodStatus')) },
  PodStatus: {},
  ObjectMeta: {
    1: f('name', 'string'), 2: f('generateName', 'string'), 3: f('namespace', 'string'), 4: f('selfLink', 'string'),
    5: f('uid', 'string'), 6: f('resourceVersion', 'string'), 7: f('generation', 'int64'), 8: f('creationTimestamp', msg('Time')),
    9: f('deletionTimestamp', msg('Time')), 10: f('deletionGracePeriodSeconds', 'int64', { ptr: true }),
    11: f('labels', { map: 'string' }), 12: f('annotations', { map: 'string' }),
    13: f('ownerReferences', msg('OwnerReference'), { repeated: true }), 14: f('finalizers', 'string', { repeated: true }),
  },
  OwnerReference: {
    1: f('kind', 'string'), 3: f('name', 'string'), 4: f('uid', 'string'), 5: f('apiVersion', 'string'),
    6: f('controller', 'bool', { ptr: true }), 7: f('blockOwnerDeletion', 'bool', { ptr: true }),
  },
  Time: { 1: f('seconds', 'int64'), 2: f('nanos', 'int32') },
  PodSpec: {
    1: f('volumes', msg('Volume'), { repeated: true }), 2: f('containers', msg('Container'), { repeated: true }),
    3: f('restartPolicy', 'string'), 4: f('terminationGracePeriodSeconds', 'int64', { ptr: true }),
    5: f('activeDeadlineSeconds', 'int64', { ptr: true }), 6: f('dnsPolicy', 'string'), 7: f('nodeSelector', { map: 'string' }),
    8: f('serviceAccountName', 'string'), 9: f('serviceAccount', 'string'), 10: f('nodeName', 'string'),
    11: f('hostNetwork', 'bool'), 12: f('hostPID', 'bool'), 13: f('hostIPC', 'bool'), 16: f('hostname', 'string'),
    17: f('subdomain', 'string'), 19: f('schedulerName', 'string'), 20: f('initContainers', msg('Container'), { repeated: true }),
    21: f('automountServiceAccountToken', 'bool', { ptr: true }), 22: f('tolerations', msg('Toleration'), { repeated: true }),
    24: f('priorityClassName', 'string'), 25: f('priority', 'int32', { ptr: true }), 27: f('shareProcessNamespace', 'bool', { ptr: true }),
    29: f('runtimeClassName', 'string', { ptr: true }), 30: f('enableServiceLinks', 'bool', { ptr: true }),
    31: f('preemptionPolicy', 'string', { ptr: true }), 35: f('setHostnameAsFQDN', 'bool', { ptr: true }), 37: f('hostUsers', 'bool', { ptr: true }),
  },
  Container: {
    1: f('name', 'string'), 2: f('image', 'string'), 3: f('command', 'string', { repeated: true }), 4: f('args', 'string', { repeated: true }),
    5: f('workingDir', 'string'), 6: f('ports', msg('ContainerPort'), { repeated: true }), 7: f('env', msg('EnvVar'), { repeated: true }),
    8: f('resources', msg('ResourceRequirements')), 9: f('volumeMounts', msg('VolumeMount'), { repeated: true }),
    13: f('terminationMessagePath', 'string'), 14: f('imagePullPolicy', 'string'), 15: f('securityContext', msg('SecurityContext'), { ptr: true }),
    16: f('stdin', 'bool'), 17: f('stdinOnce', 'bool'), 18: f('tty', 'bool'), 20: f('terminationMessagePolicy', 'string'),
  },
  ContainerPort: { 1: f('name', 'string'), 2: f('hostPort', 'int32'), 3: f('containerPort', 'int32'), 4: f('protocol', 'string'), 5: f('hostIP', 'string') },
  EnvVar: { 1: f('name', 'string'), 2: f('value', 'string') },
  ResourceRequirements: { 1: f('limits', { map: msg('Quantity') }), 2: f('requests', { map: msg('Quantity') }) },
  Quantity: { 1: f('string', 'string') },
  VolumeMount: {
    1: f('name', 'string'), 2: f('readOnly', 'bool'), 3: f('mountPath', 'string'), 4: f('subPath', 'string'),
    5: f('mountPropagation', 'string', { ptr: true }), 6: f('subPathExpr', 'string'),
  },
  Volume: { 1: f('name', 'string'), 2: f('volumeSource', msg('VolumeSource'), { inline: true }) },
  VolumeSource: { 1: f('hostPath', msg('HostPathVolumeSource'), { ptr: true }), 2: f('emptyDir', msg('EmptyDirVolumeSource'), { ptr: true }) },
  HostPathVolumeSource: { 1: f('path', 'string', { ptr: true }), 2: f('type', 'string', { ptr: true }) },
  EmptyDirVolumeSource: { 1: f('medium', 'string'), 2: f('sizeLimit', msg('Quantity'), { ptr: true }) },
  SecurityContext: {
    1: f('capabilities', msg('Capabilities'), { ptr: true }), 2: f('privileged', 'bool', { ptr: true }), 4: f('runAsUser', 'int64', { ptr: true }),
    5: f('runAsNonRoot', 'bool', { ptr: true }), 6: f('readOnlyRootFilesystem', 'bool', { ptr: true }),
    7: f('allowPrivilegeEscalation', 'bool', { ptr: true }), 8: f('runAsGroup', 'int64', { ptr: true }), 9: f('procMount', 'string', { ptr: true }),
  },
  Capabilities: { 1: f('add', 'string', { repeated: true }), 2: f('drop', 'string', { repeated: true }) },
  Toleration: {
    1: f('key', 'string'), 2: f('operator', 'string'), 3: f('value', 'string'), 4: f('effect', 'string'),
    5: f('tolerationSeconds', 'int64', { ptr: true }),
  },
};

interface RawField {
  no: number;
  wire: number;
  varint?: bigint;
  bytes?: Buffer;
}

/** Splits one message into raw fields. Throws {@link ProtobufUnsupported} on truncated or unknown wire types. */
export function readFields(buf: Buffer): RawField[] {
  const out: RawField[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new ProtobufUnsupported('truncated varint');
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new ProtobufUnsupported('varint too long');
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new ProtobufUnsupported('truncated length-delimited field');
      out.push({ no, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (i + n > buf.length) throw new ProtobufUnsupported('truncated fixed field');
      out.push({ no, wire, bytes: buf.subarray(i, i + n) });
      i += n;
    } else throw new ProtobufUnsupported(`unsupported wire type ${wire}`);
  }
  return out;
}

function isEmpty(r: RawField): boolean {
  return r.wire === 0 ? r.varint === 0n : (r.bytes?.length ?? 0) === 0;
}

function scalar(type: Scalar, r: RawField, path: string): unknown {
  if (type === 'string' || type === 'bytes') {
    if (r.wire !== 2) throw new ProtobufUnsupported(`${path}: expected length-delimited`);
    return type === 'string' ? r.bytes!.toString('utf8') : Buffer.from(r.bytes!);
  }
  if (r.wire !== 0) throw new ProtobufUnsupported(`${path}: expected varint`);
  const v = r.varint!;
  if (type === 'bool') return v !== 0n;
  if (type === 'int32') return Number(BigInt.asIntN(32, v));
  return Number(BigInt.asIntN(64, v));
}

function isZero(v: unknown): boolean {
  return v === '' || v === false || v === 0 || (typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v) && Object.keys(v).length === 0);
}

/** `metav1.Time` {seconds, nanos} → RFC 3339 (second precision, as JSON carries it); zero → undefined. */
function timeText(t: Record<string, unknown>): string | undefined {
  const s = Number(t['seconds'] ?? 0);
  if (s === 0) return undefined;
  return new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Decodes one message of schema `name` into its JSON form. `path` names the field for errors. */
export function decodeMessage(name: string, buf: Buffer, path = name): Record<string, unknown> {
  const schema = SCHEMA[name];
  if (!schema) throw new ProtobufUnsupported(`${path}: message ${name} is not understood`);
  const out: Record<string, unknown> = {};
  for (const r of readFields(buf)) {
    const spec = schema[r.no];
    const at = `${path}.${spec?.name ?? `#${r.no}`}`;
    if (!spec) {
      if (isEmpty(r)) continue;
      throw new ProtobufUnsupported(`${at}: field ${r.no} of ${name} is not understood by the recorded API server`);
    }
    let value: unknown;
    if (typeof spec.type === 'string') value = scalar(spec.type, r, at);
    else if ('msg' in spec.type) {
      if (r.wire !== 2) throw new ProtobufUnsupported(`${at}: expected a message`);
      const inner = decodeMessage(spec.type.msg, r.bytes!, at);
      value = spec.type.msg === 'Time' ? timeText(inner) : spec.type.msg === 'Quantity' ? inner['string'] : inner;
    } else {
      if (r.wire !== 2) throw new ProtobufUnsupported(`${at}: expected a map entry`);
      let k = '';
      let v: unknown;
      for (const e of readFields(r.bytes!)) {
        if (e.no === 1) k = String(scalar('string', e, at));
        else if (e.no === 2) {
          const vt = spec.type.map;
          v = typeof vt === 'string' ? scalar(vt, e, at) : vt.msg === 'Quantity' ? decodeMessage('Quantity', e.bytes!, at)['string'] : decodeMessage(vt.msg, e.bytes!, at);
        }
      }
      const m = (out[spec.name] as Record<string, unknown> | undefined) ?? {};
      m[k] = v ?? '';
      out[spec.name] = m;
      continue;
    }
    if (value === undefined) continue;
    if (spec.repeated) {
      const list = (out[spec.name] as unknown[] | undefined) ?? [];
      list.push(value);
      out[spec.name] = list;
    } else if (spec.inline && typeof value === 'object' && value !== null) {
      Object.assign(out, value);
    } else if (spec.ptr || !isZero(value)) {
      out[spec.name] = value;
    }
  }
  return out;
}

/**
 * Decodes a whole Kubernetes protobuf body whose object is a `Pod`, into the
 * same JSON a client would have posted. Throws {@link ProtobufUnsupported} for
 * another kind, a missing magic prefix or a field it does not understand.
 */
export function decodeK8sProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(K8S_PROTOBUF_MAGIC)) throw new ProtobufUnsupported('missing the k8s\\0 protobuf prefix');
  const unknown = decodeMessage('Unknown', body.subarray(4));
  const tm = (unknown['typeMeta'] ?? {}) as { apiVersion?: string; kind?: string };
  if (tm.kind !== 'Pod' || (tm.apiVersion ?? 'v1') !== 'v1') {
    throw new ProtobufUnsupported(`protobuf bodies are understood for v1 Pod only (got ${tm.apiVersion ?? '?'} ${tm.kind ?? '?'})`);
  }
  const encoding = unknown['contentEncoding'];
  if (encoding) throw new ProtobufUnsupported(`content encoding ${String(encoding)} is not supported`);
  const raw = (unknown['raw'] as Buffer | undefined) ?? Buffer.alloc(0);
  return { apiVersion: 'v1', kind: 'Pod', ...decodeMessage('Pod', raw) };
}

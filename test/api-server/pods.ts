/**
 * Pod creation as the apiserver, scheduler and kubelet would make it look:
 * validation (a subset of `pkg/apis/core/validation`), the defaults the
 * apiserver fills (`pkg/apis/core/v1/defaults.go`), the binding to a node, and
 * the Pending → Running status the kubelet would report.
 *
 * The containers are never run: a created pod stays Running until deleted, and
 * `exec` into it runs the command on this machine (see exec.ts).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { badRequest, invalid, StatusError, type StatusCause } from './status.js';
import type { K8sObject } from './types.js';

type J = Record<string, unknown>;

function obj(v: unknown): J {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as J) : {};
}

/** Characters of `utilrand.String` (no vowels, no confusable digits). */
const RAND_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** `generateName` suffix: 5 random characters from the apiserver's alphabet. */
export function randomSuffix(n = 5): string {
  const bytes = randomBytes(n);
  return [...bytes].map((b) => RAND_ALPHABET[b % RAND_ALPHABET.length]).join('');
}

/** `metav1.Time` text: RFC 3339 in UTC with second precision. */
export function k8sTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Validates a posted pod body and fills name (from `generateName`) and namespace.
 * Throws a {@link StatusError}: 400 for a namespace mismatch or a non-Pod body,
 * 422 Invalid listing every field error.
 */
export function preparePod(body: unknown, namespace: string): K8sObject {
  const pod = obj(body);
  if (pod['kind'] !== undefined && pod['kind'] !== 'Pod') throw new StatusError(badRequest(`the body of the request was of kind "${String(pod['kind'])}", expected "Pod"`));
  if (pod['apiVersion'] !== undefined && pod['apiVersion'] !== 'v1') throw new StatusError(badRequest(`the API version in the data (${String(pod['apiVersion'])}) does not match the expected API version (v1)`));
  const meta = obj(pod['metadata']);
  if (meta['namespace'] !== undefined && meta['namespace'] !== '' && meta['namespace'] !== namespace) {
    throw new StatusError(badRequest('the namespace of the provided object does not match the namespace sent on the request'));
  }
  const causes: StatusCause[] = [];
  let name = typeof meta['name'] === 'string' ? meta['name'] : '';
  if (name === '' && typeof meta['generateName'] === 'string' && meta['generateName'] !== '') name = meta['generateName'] + randomSuffix();
  if (name === '') causes.push({ reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' });
  else if (!DNS1123_SUBDOMAIN.test(name) || name.length > 253) {
    causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`, field: 'metadata.name' });
  }
  const spec = obj(pod['spec']);
  const containers = Array.isArray(spec['containers']) ? spec['containers'].map(obj) : [];
  if (containers.length === 0) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' });
  containers.forEach((c, i) => {
    if (typeof c['name'] !== 'string' || c['name'] === '') causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `spec.containers[${i}].name` });
    else if (!DNS1123_LABEL.test(c['name'])) causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: "${c['name']}": must be a lowercase RFC 1123 label`, field: `spec.containers[${i}].name` });
    if (typeof c['image'] !== 'string' || c['image'] === '') causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: `spec.containers[${i}].image` });
  });
  if (causes.length) throw new StatusError(invalid('Pod', name, causes));
  return { ...pod, apiVersion: 'v1', kind: 'Pod', metadata: { ...meta, name, namespace }, spec } as K8sObject;
}

function imagePullPolicy(image: string): string {
  const lastSlash = image.lastIndexOf('/');
  const tail = image.slice(lastSlash + 1);
  if (image.includes('@')) return 'IfNotPresent';
  const colon = tail.lastIndexOf(':');
  return colon < 0 || tail.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultContainer(c: J): J {
  return {
    ...c,
    imagePullPolicy: c['imagePullPolicy'] ?? imagePullPolicy(String(c['image'])),
    resources: c['resources'] ?? {},
    terminationMessagePath: c['terminationMessagePath'] ?? '/dev/termination-log',
    terminationMessagePolicy: c['terminationMessagePolicy'] ?? 'File',
  };
}

/**
 * Fills what the apiserver stores on create: uid, creationTimestamp, spec
 * defaults (restartPolicy Always, dnsPolicy ClusterFirst, schedulerName, grace
 * period 30 s, container defaults), `nodeName` (the "scheduler": `node` if the
 * pod names none), and a Pending status whose containers wait in `ContainerCreating`.
 */
export function admitPod(pod: K8sObject, now: Date, node: string | undefined): K8sObject {
  const spec = obj(pod['spec']);
  const containers = (spec['containers'] as unknown[]).map((c) => defaultContainer(obj(c)));
  const nodeName = typeof spec['nodeName'] === 'string' && spec['nodeName'] !== '' ? spec['nodeName'] : node;
  const out: K8sObject = {
    ...pod,
    metadata: { ...pod.metadata, uid: randomUUID(), creationTimestamp: k8sTime(now) },
    spec: {
      ...spec,
      containers,
      restartPolicy: spec['restartPolicy'] ?? 'Always',
      terminationGracePeriodSeconds: spec['terminationGracePeriodSeconds'] ?? 30,
      dnsPolicy: spec['dnsPolicy'] ?? 'ClusterFirst',
      securityContext: spec['securityContext'] ?? {},
      schedulerName: spec['schedulerName'] ?? 'default-scheduler',
      enableServiceLinks: spec['enableServiceLinks'] ?? true,
      preemptionPolicy: spec['preemptionPolicy'] ?? 'PreemptLowerPriority',
      priority: spec['priority'] ?? 0,
      ...(nodeName ? { nodeName } : {}),
    },
    status: {
      phase: 'Pending',
      qosClass: 'BestEffort',
      ...(nodeName
        ? {
            conditions: [{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: k8sTime(now) }],
            containerStatuses: containers.map((c) => ({
              name: c['name'], image: c['image'], imageID: '', ready: false, restartCount: 0, started: false,
              state: { waiting: { reason: 'ContainerCreating' } }, lastState: {},
            })),
          }
        : {}),
    },
  };
  return out;
}

/**
 * The status the kubelet reports once the containers started: phase Running,
 * all conditions True, `hostIP` (the node's InternalIP), `podIP` (the host IP
 * for hostNetwork pods, else `podIP`), and running container statuses.
 */
export function runningStatus(pod: K8sObject, now: Date, hostIP: string | undefined, podIP: string): J {
  const spec = obj(pod['spec']);
  const containers = Array.isArray(spec['containers']) ? spec['containers'].map(obj) : [];
  const ip = spec['hostNetwork'] === true && hostIP ? hostIP : podIP;
  const t = k8sTime(now);
  const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: t });
  const created = Date.parse(String(pod.metadata.creationTimestamp ?? ''));
  return {
    phase: 'Running',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(cond),
    ...(hostIP ? { hostIP, hostIPs: [{ ip: hostIP }] } : {}),
    podIP: ip,
    podIPs: [{ ip }],
    startTime: Number.isNaN(created) ? t : k8sTime(new Date(created)),
    containerStatuses: containers.map((c) => ({
      name: c['name'], image: c['image'], imageID: '', containerID: `containerd://${randomBytes(32).toString('hex')}`,
      ready: true, restartCount: 0, started: true, state: { running: { startedAt: t } }, lastState: {},
    })),
    qosClass: 'BestEffort',
  };
}

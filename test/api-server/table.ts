/**
 * Server-side printing: `meta.k8s.io/v1` `Table` responses, the form `kubectl
 * get` asks for with `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`.
 *
 * Columns and cells follow kube-apiserver's printers
 * (`pkg/printers/internalversion/printers.go`: printService, printEndpointSlice,
 * printPod, printNode, printNamespace), generated with `Wide: true` as the
 * apiserver does, so priority-1 columns are always present and kubectl chooses.
 */
import { ageOf } from './duration.js';
import type { ResourceName } from './resources.js';
import type { K8sObject } from './types.js';

/** One `metav1.TableColumnDefinition`. */
export interface ColumnDefinition {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

/** What a row carries as `object` (`includeObject` query parameter, default `Metadata`). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

const NAME_DOC = 'Name must be unique within a namespace.';
const AGE_DOC = 'CreationTimestamp is a timestamp representing the server time when this object was created.';

function col(name: string, description: string, priority = 0, format = ''): ColumnDefinition {
  return { name, type: 'string', format, description, priority };
}

/** Column definitions per resource, in printer order. */
export const COLUMNS: Readonly<Record<ResourceName, readonly ColumnDefinition[]>> = {
  services: [
    col('Name', NAME_DOC, 0, 'name'),
    col('Type', 'type determines how the Service is exposed.'),
    col('Cluster-IP', 'clusterIP is the IP address of the service.'),
    col('External-IP', 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.'),
    col('Port(s)', 'The list of ports that are exposed by this service.'),
    col('Age', AGE_DOC),
    col('Selector', 'Route service traffic to pods with label keys and values matching this selector.', 1),
  ],
  endpointslices: [
    col('Name', NAME_DOC, 0, 'name'),
    col('AddressType', 'addressType specifies the type of address carried by this EndpointSlice.'),
    col('Ports', 'ports specifies the list of network ports exposed by each endpoint in this slice.'),
    col('Endpoints', 'endpoints is a list of unique endpoints in this slice.'),
    col('Age', AGE_DOC),
  ],
  pods: [
    col('Name', NAME_DOC, 0, 'name'),
    col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'The aggregate status of the containers in this pod.'),
    col('Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
    col('Age', AGE_DOC),
    col('IP', 'podIP address allocated to the pod.', 1),
    col('Node', 'Name of the Node this pod is assigned to.', 1),
    col('Nominated Node', 'nominatedNodeName is set when this pod preempts other pods on the node.', 1),
    col('Readiness Gates', 'If specified, all readiness gates will be evaluated for pod readiness.', 1),
  ],
  nodes: [
    col('Name', NAME_DOC, 0, 'name'),
    col('Status', 'The status of the node'),
    col('Roles', 'The roles of the node'),
    col('Age', AGE_DOC),
    col('Version', 'Kubelet Version reported by the node.'),
    col('Internal-IP', 'List of addresses reachable to the node.', 1),
    col('External-IP', 'List of addresses reachable to the node.', 1),
    col('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', 1),
    col('Kernel-Version', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
    col('Container-Runtime', 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', 1),
  ],
  namespaces: [
    col('Name', NAME_DOC, 0, 'name'),
    col('Status', 'The status of the namespace'),
    col('Age', AGE_DOC),
  ],
  servicecidrs: [
    col('Name', NAME_DOC, 0, 'name'),
    col('CIDRs', 'cidrs defines the IP blocks in CIDR notation from which to assign service cluster IPs.'),
    col('Age', AGE_DOC),
  ],
  ipaddresses: [
    col('Name', NAME_DOC, 0, 'name'),
    col('ParentRef', 'ParentRef references the resource that an IPAddress is attached to.'),
  ],
};

type J = Record<string, unknown>;

function obj(v: unknown): J {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as J) : {};
}
function arr(v: unknown): J[] {
  return Array.isArray(v) ? v.map(obj) : [];
}
function s(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** `labels.FormatLabels`: sorted `k=v,k2=v2`, or `<none>`. */
export function formatLabels(m: unknown): string {
  const entries = Object.entries(obj(m)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.length === 0 ? '<none>' : entries.map(([k, v]) => `${k}=${String(v)}`).join(',');
}

function listWithMore(list: string[], more: boolean, count: number, max: number): string {
  const ret = list.join(',');
  if (more) return `${ret} + ${count - max} more...`;
  return ret === '' ? '<unset>' : ret;
}

/** PORTS cell of an EndpointSlice (formatDiscoveryPorts): first 3 port numbers, `*` for an unset port. */
export function formatDiscoveryPorts(ports: unknown): string {
  const list: string[] = [];
  let more = false;
  let count = 0;
  for (const p of arr(ports)) {
    if (list.length < 3) list.push(typeof p['port'] === 'number' ? String(p['port']) : typeof p['name'] === 'string' ? p['name'] : '*');
    else more = true;
    count++;
  }
  return listWithMore(list, more, count, 3);
}

/** ENDPOINTS cell of an EndpointSlice (formatDiscoveryEndpoints): first 3 addresses, `+ N more...`. */
export function formatDiscoveryEndpoints(endpoints: unknown): string {
  const list: string[] = [];
  let more = false;
  let count = 0;
  for (const e of arr(endpoints)) {
    for (const a of Array.isArray(e['addresses']) ? e['addresses'] : []) {
      if (list.length < 3) list.push(String(a));
      else more = true;
      count++;
    }
  }
  return listWithMore(list, more, count, 3);
}

/** PORT(S) cell of a Service (makePortString): `80/TCP`, `80:30080/TCP`, joined by `,`; `<none>` if empty. */
export function servicePorts(ports: unknown): string {
  const out = arr(ports).map((p) => {
    const proto = s(p['protocol']) || 'TCP';
    const np = typeof p['nodePort'] === 'number' && p['nodePort'] > 0 ? `:${p['nodePort']}` : '';
    return `${String(p['port'])}${np}/${proto}`;
  });
  return out.length ? out.join(',') : '<none>';
}

/** EXTERNAL-IP cell of a Service (getServiceExternalIP with wide=true). */
export function serviceExternalIP(svc: K8sObject): string {
  const spec = obj(svc['spec']);
  const ext = Array.isArray(spec['externalIPs']) ? (spec['externalIPs'] as unknown[]).map(String) : [];
  switch (s(spec['type']) || 'ClusterIP') {
    case 'ClusterIP':
    case 'NodePort':
      return ext.length ? ext.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = arr(obj(obj(svc['status'])['loadBalancer'])['ingress']);
      const lb = ingress.map((i) => s(i['ip']) || s(i['hostname'])).filter((x) => x !== '');
      const all = [...lb, ...ext];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return s(spec['externalName']);
    default:
      return '<unknown>';
  }
}

function serviceCells(o: K8sObject, now: Date): unknown[] {
  const spec = obj(o['spec']);
  const ips = Array.isArray(spec['clusterIPs']) ? (spec['clusterIPs'] as unknown[]) : [];
  const internal = ips.length ? String(ips[0]) : '<none>';
  return [o.metadata.name, s(spec['type']), internal, serviceExternalIP(o), servicePorts(spec['ports']), ageOf(o.metadata.creationTimestamp, now), formatLabels(spec['selector'])];
}

function endpointSliceCells(o: K8sObject, now: Date): unknown[] {
  return [o.metadata.name, s(o['addressType']), formatDiscoveryPorts(o['ports']), formatDiscoveryEndpoints(o['endpoints']), ageOf(o.metadata.creationTimestamp, now)];
}

/** READY/STATUS/RESTARTS of a pod, after printPod (init-container detail kept to the common cases). */
export function podSummary(o: K8sObject, now: Date): { ready: string; reason: string; restarts: string } {
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const total = arr(spec['containers']).length;
  let reason = s(status['reason']) || s(status['phase']);
  let ready = 0;
  let restarts = 0;
  let lastRestart = 0;
  let initializing = false;
  const inits = arr(status['initContainerStatuses']);
  inits.forEach((c, i) => {
    if (initializing) return;
    restarts += Number(c['restartCount'] ?? 0);
    const state = obj(c['state']);
    const term = obj(state['terminated']);
    const wait = obj(state['waiting']);
    if (state['terminated'] && Number(term['exitCode'] ?? 0) === 0) return;
    if (state['terminated']) reason = s(term['reason']) ? `Init:${s(term['reason'])}` : `Init:ExitCode:${Number(term['exitCode'] ?? 0)}`;
    else if (state['waiting'] && s(wait['reason']) && s(wait['reason']) !== 'PodInitializing') reason = `Init:${s(wait['reason'])}`;
    else reason = `Init:${i}/${arr(spec['initContainers']).length}`;
    initializing = true;
  });
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    const cs = arr(status['containerStatuses']);
    for (let i = cs.length - 1; i >= 0; i--) {
      const c = cs[i]!;
      restarts += Number(c['restartCount'] ?? 0);
      const lastTerm = obj(obj(c['lastState'])['terminated']);
      const fin = Date.parse(s(lastTerm['finishedAt']));
      if (!Number.isNaN(fin) && fin > lastRestart) lastRestart = fin;
      const state = obj(c['state']);
      const term = obj(state['terminated']);
      if (state['waiting'] && s(obj(state['waiting'])['reason'])) reason = s(obj(state['waiting'])['reason']);
      else if (state['terminated'] && s(term['reason'])) reason = s(term['reason']);
      else if (state['terminated']) reason = term['signal'] ? `Signal:${String(term['signal'])}` : `ExitCode:${Number(term['exitCode'] ?? 0)}`;
      else if (c['ready'] === true && state['running']) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const readyCond = arr(status['conditions']).some((c) => c['type'] === 'Ready' && c['status'] === 'True');
      reason = readyCond ? 'Running' : 'NotReady';
    }
  }
  const phase = s(status['phase']);
  if (o.metadata.deletionTimestamp && s(status['reason']) === 'NodeLost') reason = 'Unknown';
  else if (o.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';
  const restartsStr = restarts !== 0 && lastRestart > 0 ? `${restarts} (${ageOf(new Date(lastRestart).toISOString(), now)} ago)` : String(restarts);
  return { ready: `${ready}/${total}`, reason, restarts: restartsStr };
}

function podCells(o: K8sObject, now: Date): unknown[] {
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const sum = podSummary(o, now);
  const podIPs = arr(status['podIPs']);
  const ip = podIPs.length ? s(podIPs[0]!['ip']) : '';
  const gates = arr(spec['readinessGates']);
  let gatesCell = '<none>';
  if (gates.length) {
    const conds = arr(status['conditions']);
    const t = gates.filter((g) => conds.find((c) => c['type'] === g['conditionType'])?.['status'] === 'True').length;
    gatesCell = `${t}/${gates.length}`;
  }
  return [
    o.metadata.name, sum.ready, sum.reason, sum.restarts, ageOf(o.metadata.creationTimestamp, now),
    ip || '<none>', s(spec['nodeName']) || '<none>', s(status['nominatedNodeName']) || '<none>', gatesCell,
  ];
}

/** ROLES of a node (findNodeRoles): `node-role.kubernetes.io/X` labels and `kubernetes.io/role`, sorted. */
export function nodeRoles(o: K8sObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) {
      const r = k.slice('node-role.kubernetes.io/'.length);
      if (r) roles.add(r);
    } else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

function nodeCells(o: K8sObject, now: Date): unknown[] {
  const status = obj(o['status']);
  const readyCond = arr(status['conditions']).find((c) => c['type'] === 'Ready');
  const st: string[] = readyCond ? [readyCond['status'] === 'True' ? 'Ready' : 'NotReady'] : ['Unknown'];
  if (obj(o['spec'])['unschedulable'] === true) st.push('SchedulingDisabled');
  const info = obj(status['nodeInfo']);
  const addr = (t: string) => s(arr(status['addresses']).find((a) => a['type'] === t)?.['address']) || '<none>';
  return [
    o.metadata.name, st.join(','), nodeRoles(o), ageOf(o.metadata.creationTimestamp, now), s(info['kubeletVersion']),
    addr('InternalIP'), addr('ExternalIP'), s(info['osImage']) || '<unknown>', s(info['kernelVersion']) || '<unknown>',
    s(info['containerRuntimeVersion']) || '<unknown>',
  ];
}

function namespaceCells(o: K8sObject, now: Date): unknown[] {
  return [o.metadata.name, s(obj(o['status'])['phase']), ageOf(o.metadata.creationTimestamp, now)];
}

/** The cells of one row for `resource`, in {@link COLUMNS} order. */
export function cellsFor(resource: ResourceName, o: K8sObject, now: Date): unknown[] {
  switch (resource) {
    case 'services':
      return serviceCells(o, now);
    case 'endpointslices':
      return endpointSliceCells(o, now);
    case 'pods':
      return podCells(o, now);
    case 'nodes':
      return nodeCells(o, now);
    case 'namespaces':
      return namespaceCells(o, now);
    case 'servicecidrs': {
      const cidrs = obj(o['spec'])['cidrs'];
      return [o.metadata.name, Array.isArray(cidrs) ? cidrs.map(s).join(',') : '', ageOf(o.metadata.creationTimestamp, now)];
    }
    case 'ipaddresses': {
      const ref = obj(obj(o['spec'])['parentRef']);
      return [o.metadata.name, `${s(ref['resource'])}${ref['group'] ? `.${s(ref['group'])}` : ''}/${ref['namespace'] ? `${s(ref['namespace'])}/` : ''}${s(ref['name'])}`];
    }
  }
}

/** `PartialObjectMetadata` for an object (what `includeObject=Metadata` puts in a row). */
export function partialMetadata(o: K8sObject, apiVersion = 'meta.k8s.io/v1'): object {
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: o.metadata };
}

/**
 * A whole `Table`. `noHeaders` drops the column definitions (`null`), as the
 * apiserver does for every watch event after the first.
 */
export function toTable(
  resource: ResourceName,
  items: readonly K8sObject[],
  opts: { resourceVersion: string; now: Date; include: IncludeObject; apiVersion: string; noHeaders?: boolean; continueToken?: string },
): object {
  const metaApi = opts.apiVersion;
  const rows = items.map((o) => {
    const row: Record<string, unknown> = { cells: cellsFor(resource, o, opts.now) };
    const phase = s(obj(o['status'])['phase']);
    if (resource === 'pods' && (phase === 'Succeeded' || phase === 'Failed')) {
      row['conditions'] = [
        { type: 'Completed', status: 'True', reason: phase, message: phase === 'Succeeded' ? 'The pod has completed successfully.' : 'The pod failed.' },
      ];
    }
    if (opts.include === 'Metadata') row['object'] = partialMetadata(o, metaApi);
    else if (opts.include === 'Object') row['object'] = o;
    return row;
  });
  const metadata: Record<string, string> = { resourceVersion: opts.resourceVersion };
  if (opts.continueToken) metadata['continue'] = opts.continueToken;
  return {
    kind: 'Table',
    apiVersion: metaApi,
    metadata,
    columnDefinitions: opts.noHeaders ? null : COLUMNS[resource],
    rows,
  };
}

/**
 * The resources the recorded API server serves, and its discovery documents.
 *
 * Discovery is what kubectl reads first: the legacy documents (`/api`,
 * `/api/v1`, `/apis`, `/apis/discovery.k8s.io/v1`: `APIVersions`,
 * `APIResourceList`, `APIGroupList`) and the aggregated `apidiscovery.k8s.io/v2`
 * `APIGroupDiscoveryList` that kubectl ≥1.30 asks for with
 * `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`
 * (KEP-3352; types in `k8s.io/api/apidiscovery/v2`). Verbs list only what this
 * server implements, so a client never sees a verb that would then fail.
 */
import type { K8sObject, Verb } from './types.js';

/** The plural resource names served. */
export type ResourceName = 'namespaces' | 'nodes' | 'pods' | 'services' | 'endpointslices' | 'servicecidrs' | 'ipaddresses';

/** One served resource. `fieldLabels` maps the supported field-selector labels to a getter. */
export interface ResourceInfo {
  readonly resource: ResourceName;
  readonly group: '' | 'discovery.k8s.io' | 'networking.k8s.io';
  readonly version: 'v1';
  readonly kind: string;
  readonly listKind: string;
  readonly singular: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly Verb[];
  readonly subresources: readonly { name: string; kind: string; group?: string; version?: string; verbs: readonly Verb[] }[];
  readonly fieldLabels: Readonly<Record<string, (o: K8sObject) => string>>;
}

const READ: readonly Verb[] = ['get', 'list', 'watch'];

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
}

function at(o: unknown, ...path: string[]): unknown {
  let cur: unknown = o;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

const META_FIELDS = {
  'metadata.name': (o: K8sObject) => str(o.metadata.name),
  'metadata.namespace': (o: K8sObject) => str(o.metadata.namespace),
};

/** Every served resource (core/v1, discovery.k8s.io/v1 and networking.k8s.io/v1's ServiceCIDR and IPAddress, KEP-1880). */
export const RESOURCES: readonly ResourceInfo[] = [
  {
    resource: 'namespaces', group: '', version: 'v1', kind: 'Namespace', listKind: 'NamespaceList', singular: 'namespace',
    namespaced: false, shortNames: ['ns'], categories: [], verbs: READ, subresources: [],
    fieldLabels: { 'metadata.name': META_FIELDS['metadata.name'], 'status.phase': (o) => str(at(o, 'status', 'phase')) },
  },
  {
    resource: 'nodes', group: '', version: 'v1', kind: 'Node', listKind: 'NodeList', singular: 'node',
    namespaced: false, shortNames: ['no'], categories: [], verbs: READ, subresources: [],
    fieldLabels: { 'metadata.name': META_FIELDS['metadata.name'], 'spec.unschedulable': (o) => String(at(o, 'spec', 'unschedulable') === true) },
  },
  {
    resource: 'pods', group: '', version: 'v1', kind: 'Pod', listKind: 'PodList', singular: 'pod',
    namespaced: true, shortNames: ['po'], categories: ['all'], verbs: ['create', 'delete', 'get', 'list', 'watch'],
    subresources: [{ name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] }, { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] }],
    fieldLabels: {
      ...META_FIELDS,
      'spec.nodeName': (o) => str(at(o, 'spec', 'nodeName')),
      'spec.restartPolicy': (o) => str(at(o, 'spec', 'restartPolicy')),
      'spec.schedulerName': (o) => str(at(o, 'spec', 'schedulerName')),
      'spec.serviceAccountName': (o) => str(at(o, 'spec', 'serviceAccountName')),
      'spec.hostNetwork': (o) => String(at(o, 'spec', 'hostNetwork') === true),
      'status.phase': (o) => str(at(o, 'status', 'phase')),
      'status.podIP': (o) => str(at(o, 'status', 'podIP')),
      'status.nominatedNodeName': (o) => str(at(o, 'status', 'nominatedNodeName')),
    },
  },
  {
    resource: 'services', group: '', version: 'v1', kind: 'Service', listKind: 'ServiceList', singular: 'service',
    namespaced: true, shortNames: ['svc'], categories: ['all'], verbs: READ, subresources: [],
    fieldLabels: { ...META_FIELDS, 'spec.clusterIP': (o) => str(at(o, 'spec', 'clusterIP')), 'spec.type': (o) => str(at(o, 'spec', 'type')) },
  },
  {
    resource: 'endpointslices', group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', listKind: 'EndpointSliceList',
    singular: 'endpointslice', namespaced: true, shortNames: [], categories: [], verbs: READ, subresources: [],
    fieldLabels: { ...META_FIELDS, addressType: (o) => str(o['addressType']) },
  },
  {
    resource: 'servicecidrs', group: 'networking.k8s.io', version: 'v1', kind: 'ServiceCIDR', listKind: 'ServiceCIDRList',
    singular: 'servicecidr', namespaced: false, shortNames: [], categories: [], verbs: READ, subresources: [],
    fieldLabels: { 'metadata.name': META_FIELDS['metadata.name'] },
  },
  {
    resource: 'ipaddresses', group: 'networking.k8s.io', version: 'v1', kind: 'IPAddress', listKind: 'IPAddressList',
    singular: 'ipaddress', namespaced: false, shortNames: ['ip'], categories: [], verbs: READ, subresources: [],
    fieldLabels: { 'metadata.name': META_FIELDS['metadata.name'] },
  },
];

/** The resource with this plural name in this group, if served. */
export function findResource(group: string, resource: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.group === group && r.resource === resource);
}

/** The resource whose kind is `kind` (e.g. `EndpointSlice`), if served. */
export function resourceForKind(kind: string): ResourceInfo | undefined {
  return RESOURCES.find((r) => r.kind === kind);
}

/** `v1` or `discovery.k8s.io/v1`: the apiVersion of objects of this resource. */
export function apiVersionOf(r: ResourceInfo): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/** The served groups other than core, with their versions. */
const GROUPS = [{ name: 'discovery.k8s.io', version: 'v1' }, { name: 'networking.k8s.io', version: 'v1' }] as const;

/** `/api`: `APIVersions`. `serverAddress` is `host:port` the clients should use. */
export function apiVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** `/apis`: `APIGroupList`. */
export function apiGroupList(): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: GROUPS.map(apiGroup) };
}

/** `/apis/GROUP`: `APIGroup`, or undefined when the group is not served. */
export function apiGroupFor(name: string): object | undefined {
  const g = GROUPS.find((x) => x.name === name);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g) } : undefined;
}

function apiGroup(g: { name: string; version: string }): object {
  const gv = { groupVersion: `${g.name}/${g.version}`, version: g.version };
  return { name: g.name, versions: [gv], preferredVersion: gv };
}

/** `/api/v1` or `/apis/GROUP/VERSION`: `APIResourceList`, or undefined when not served. */
export function apiResourceList(group: string, version: string): object | undefined {
  const rs = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (rs.length === 0) return undefined;
  const resources: object[] = [];
  for (const r of rs) {
    resources.push({
      name: r.resource, singularName: r.singular, namespaced: r.namespaced, kind: r.kind, verbs: [...r.verbs],
      ...(r.shortNames.length ? { shortNames: [...r.shortNames] } : {}),
      ...(r.categories.length ? { categories: [...r.categories] } : {}),
    });
    for (const s of r.subresources) {
      resources.push({ name: `${r.resource}/${s.name}`, singularName: '', namespaced: r.namespaced, kind: s.kind, verbs: [...s.verbs] });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group === '' ? version : `${group}/${version}`, resources };
}

/** Aggregated discovery media type asked for by kubectl ≥1.30 (and its v2beta1 predecessor). */
export type AggregatedVersion = 'v2' | 'v2beta1';

/**
 * `/api` or `/apis` as `apidiscovery.k8s.io/{v2,v2beta1}` `APIGroupDiscoveryList`:
 * `legacy` = the core group (`/api`), otherwise the named groups (`/apis`).
 */
export function aggregatedDiscovery(legacy: boolean, version: AggregatedVersion): object {
  const groups = legacy ? [{ name: '', version: 'v1' }] : GROUPS.map((g) => ({ name: g.name, version: g.version }));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: g.name === '' ? { creationTimestamp: null } : { name: g.name, creationTimestamp: null },
      versions: [
        {
          version: g.version,
          resources: RESOURCES.filter((r) => r.group === g.name && r.version === g.version).map((r) => ({
            resource: r.resource,
            responseKind: { group: r.group, version: r.version, kind: r.kind },
            scope: r.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: r.singular,
            verbs: [...r.verbs],
            ...(r.shortNames.length ? { shortNames: [...r.shortNames] } : {}),
            ...(r.categories.length ? { categories: [...r.categories] } : {}),
            ...(r.subresources.length
              ? {
                  subresources: r.subresources.map((s) => ({
                    subresource: s.name,
                    responseKind: { group: s.group ?? '', version: s.version ?? 'v1', kind: s.kind },
                    verbs: [...s.verbs],
                  })),
                }
              : {}),
          })),
          freshness: 'Current',
        },
      ],
    })),
  };
}

/**
 * `/version`: the `version.Info` this server claims. Major/minor matter (kubectl's
 * version dispatcher picks its client by them); commit and build date are zeroed, not invented.
 */
export function versionInfo(): object {
  return {
    major: '1',
    minor: '32',
    gitVersion: 'v1.32.4',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '1970-01-01T00:00:00Z',
    goVersion: 'go1.23.6',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

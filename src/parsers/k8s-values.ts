/**
 * The values the API object converters accept for each enumerated field, and the frozen
 * empties they share: one list for the full converter (src/parsers/k8s-convert.ts) and the
 * straight one (src/parsers/k8s-convert-fast.ts), so both accept exactly the same values.
 * Source: k8s.io/api core/v1 and discovery/v1 `types.go`.
 */
import type { AddressType, IpFamily, IpFamilyPolicy, NodeAddressType, PodPhase, Protocol, ServiceType, SessionAffinity, TrafficPolicy } from '../model/k8s.js';

/** `ServicePort.protocol`, `EndpointPort.protocol`, `ContainerPort.protocol`. */
export const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];
/** `ServiceSpec.type`. */
export const SERVICE_TYPES: readonly ServiceType[] = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
/** `ServiceSpec.ipFamilies[]`. */
export const IP_FAMILIES: readonly IpFamily[] = ['IPv4', 'IPv6'];
/** `ServiceSpec.ipFamilyPolicy`. */
export const IP_FAMILY_POLICIES: readonly IpFamilyPolicy[] = ['SingleStack', 'PreferDualStack', 'RequireDualStack'];
/** `ServiceSpec.sessionAffinity`. */
export const AFFINITIES: readonly SessionAffinity[] = ['None', 'ClientIP'];
/** `ServiceSpec.externalTrafficPolicy` and `internalTrafficPolicy`. */
export const TRAFFIC_POLICIES: readonly TrafficPolicy[] = ['Cluster', 'Local'];
/** `EndpointSlice.addressType`. */
export const ADDRESS_TYPES: readonly AddressType[] = ['IPv4', 'IPv6', 'FQDN'];
/** `PodStatus.phase`. */
export const POD_PHASES: readonly PodPhase[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
/** `NodeAddress.type`. */
export const NODE_ADDRESS_TYPES: readonly NodeAddressType[] = ['InternalIP', 'ExternalIP', 'Hostname', 'InternalDNS', 'ExternalDNS'];

// Memory: a huge capture has 250,000 endpoints, so every empty list or map in the typed
// view is one frozen instance.
/** The one empty string list. */
export const NO_STRINGS: readonly string[] = Object.freeze([]);
/** The one empty string map. */
export const NO_MAP: Readonly<Record<string, string>> = Object.freeze({});

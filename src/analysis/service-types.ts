/**
 * The row types of the Services view (src/analysis/service-view.ts), apart from the view
 * so the compact rows (src/analysis/service-row.ts) can implement them without an import
 * cycle.
 */
import type { AddressType, Endpoint, EndpointPort, PodPhase, Protocol, Service, ServiceType, SessionAffinity, TrafficPolicy, TriState } from '../model/k8s.js';

/**
 * One Service port with what the slices resolve it to.
 * - `targetPort`: as declared (number or container port name).
 * - `endpointPorts`: the distinct ports (ascending) that slice ports of the same name and
 *   protocol give; several when a named targetPort resolves differently per Pod; `[]`
 *   when no slice has the port.
 */
export interface PortRow {
  readonly name: string;
  readonly protocol: Protocol;
  readonly port: number;
  readonly targetPort: number | string;
  readonly nodePort: number | undefined;
  readonly appProtocol: string | undefined;
  readonly endpointPorts: readonly number[];
}

/**
 * One port of an endpoint: the slice port, and the Service port it serves
 * (`servicePort` undefined when no Service port has that name and protocol).
 * `port` null means the slice leaves it unconstrained.
 */
export interface EndpointPortRow {
  readonly name: string;
  readonly protocol: Protocol;
  readonly port: number | null;
  readonly servicePort: number | undefined;
}

/** The Pod an endpoint's targetRef names, when that Pod is known. */
export interface EndpointPod {
  readonly namespace: string;
  readonly name: string;
  readonly phase: PodPhase | undefined;
  readonly hostNetwork: boolean;
  readonly ready: TriState;
}

/** The Node an endpoint runs on, when that Node is known. */
export interface EndpointNode {
  readonly name: string;
  readonly zone: string | undefined;
  readonly internalIPs: readonly string[];
}

/**
 * One endpoint address of one slice.
 * - `ready` / `serving` / `terminating`: the slice's conditions, tri-state (null = unset).
 * - `nodeName`: the endpoint's `nodeName`, else its Pod's `spec.nodeName`.
 * - `onNode`: whether it runs on the viewed node; `null` when no node was given or the
 *   endpoint's node is unknown.
 */
export interface EndpointRow extends Omit<Endpoint, 'addresses'> {
  readonly address: string;
  readonly addressType: AddressType;
  readonly sliceName: string;
  readonly ports: readonly EndpointPortRow[];
  readonly onNode: boolean | null;
  readonly pod: EndpointPod | undefined;
  readonly node: EndpointNode | undefined;
}

/** A Pod the Service's selector matches; `containerPortNames` are its named container ports (sorted). */
export interface SelectedPod {
  readonly name: string;
  readonly phase: PodPhase | undefined;
  readonly nodeName: string | undefined;
  readonly podIPs: readonly string[];
  readonly containerPortNames: readonly string[];
}

/** One EndpointSlice of a Service, summarised. */
export interface SliceRow {
  readonly name: string;
  readonly addressType: AddressType;
  readonly managedBy: string | undefined;
  readonly ports: readonly EndpointPort[];
  readonly endpointCount: number;
}

/**
 * One row of the Services pane.
 * - `loadBalancerIPs`: the `ip` of each `status.loadBalancer.ingress` entry.
 * - `selector`: `undefined` when the Service has none (or `{}`, which the API treats the same).
 * - `selectedPods`: the Pods of the namespace whose labels match the selector, by name;
 *   `null` when there is no selector or no Pod is known at all.
 * - `service`: the model object (for its `raw` JSON).
 */
export interface ServiceRow {
  readonly namespace: string;
  readonly name: string;
  readonly type: ServiceType;
  readonly headless: boolean;
  readonly clusterIPs: readonly string[];
  readonly externalName: string | undefined;
  readonly externalIPs: readonly string[];
  readonly loadBalancerIPs: readonly string[];
  readonly sessionAffinity: SessionAffinity;
  readonly sessionAffinityTimeoutSeconds: number | undefined;
  readonly externalTrafficPolicy: TrafficPolicy | undefined;
  readonly internalTrafficPolicy: TrafficPolicy | undefined;
  readonly trafficDistribution: string | undefined;
  readonly selector: Readonly<Record<string, string>> | undefined;
  readonly ports: readonly PortRow[];
  readonly slices: readonly SliceRow[];
  readonly endpoints: readonly EndpointRow[];
  readonly selectedPods: readonly SelectedPod[] | null;
  readonly service: Service;
}

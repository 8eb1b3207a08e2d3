/**
 * The lab scenario with Services for the traffic policies step mode must get right,
 * for the policy oracle test (its own lab prefix): a NodePort Service with
 * `externalTrafficPolicy: Local` (endpoints on both nodes), one whose only endpoint is
 * on the other node (outside traffic must be dropped), and a ClusterIP Service with
 * `sessionAffinity: ClientIP`.
 */
import type { LabScenario, ScenarioService } from '../../src/analysis/lab-scenario-types.js';
import { LAB_PODS, LAB_SCENARIO, endpointsFor } from './scenario.js';

const WEB = { app: 'web' } as const;
const webEndpoints = endpointsFor(WEB, LAB_PODS);

/** Extra Services: ETP=Local with local endpoints, ETP=Local without, ClientIP affinity. */
export const POLICY_SERVICES: readonly ScenarioService[] = [
  {
    namespace: 'default', name: 'web-local', type: 'NodePort', clusterIP: '10.96.20.20', selector: WEB,
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30081 }],
    externalTrafficPolicy: 'Local',
    endpoints: webEndpoints,
  },
  {
    namespace: 'default', name: 'web-remote-only', type: 'NodePort', clusterIP: '10.96.20.21', selector: WEB,
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: 30082 }],
    externalTrafficPolicy: 'Local',
    endpoints: webEndpoints.filter((e) => e.nodeName !== LAB_SCENARIO.nodeName),
  },
  {
    namespace: 'default', name: 'web-sticky', type: 'ClusterIP', clusterIP: '10.96.30.30', selector: WEB,
    ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }],
    sessionAffinity: { timeoutSeconds: 10800 },
    endpoints: webEndpoints,
  },
];

/** The lab scenario plus {@link POLICY_SERVICES}. */
export const POLICY_SCENARIO: LabScenario = { ...LAB_SCENARIO, services: [...LAB_SCENARIO.services, ...POLICY_SERVICES] };

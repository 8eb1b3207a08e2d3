/**
 * A kubeconfig (`clientcmd/api/v1` `Config`) pointing at the recorded API
 * server: one cluster with `certificate-authority-data`, one user with a bearer
 * `token`, one current context whose namespace is `default`.
 */
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

/** Names used in the written kubeconfig. */
export const KUBECONFIG_NAMES = { cluster: 'nodescope-recorded', user: 'nodescope-tester', context: 'nodescope-recorded' } as const;

/** The kubeconfig document as an object (YAML-serialisable). */
export function kubeconfigDocument(server: string, caPem: string, token: string, namespace = 'default'): object {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: KUBECONFIG_NAMES.cluster, cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: KUBECONFIG_NAMES.user, user: { token } }],
    contexts: [{ name: KUBECONFIG_NAMES.context, context: { cluster: KUBECONFIG_NAMES.cluster, user: KUBECONFIG_NAMES.user, namespace } }],
    'current-context': KUBECONFIG_NAMES.context,
    preferences: {},
  };
}

/** Writes the kubeconfig as YAML, mode 0600 (it holds the token). */
export function writeKubeconfig(path: string, server: string, caPem: string, token: string): void {
  writeFileSync(path, stringify(kubeconfigDocument(server, caPem, token)), { mode: 0o600 });
}

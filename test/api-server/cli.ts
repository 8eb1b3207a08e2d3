/**
 * Starts the recorded API server standalone, for poking at it with kubectl:
 *
 *   npx tsc -p . && node dist/test/api-server/cli.js --objects capture.json [--netns node] [--port 6443]
 *     [--forward kube-system/coredns-x=ns-coredns-1 …]   (pods/portforward into those namespaces)
 *
 * Prints the kubeconfig path (export KUBECONFIG=…) and runs until SIGINT/SIGTERM.
 * The token is in the kubeconfig only; it is never printed.
 */
import { Command } from 'commander';
import { netnsDialer, startApiServer, type ForbidRule, type Verb } from './index.js';

const program = new Command()
  .name('recorded-apiserver')
  .description('Serve a capture of Kubernetes API objects over the real REST/watch/exec protocol')
  .requiredOption('--objects <file>', 'kubectl get … -o json List file (JSON or YAML)')
  .option('--netns <name>', 'run exec commands in this network namespace (ip netns exec)')
  .option('--port <n>', 'port to listen on (default: any free port)', (v) => Number(v))
  .option('--pod-start-delay <ms>', 'Pending → Running delay of created pods', (v) => Number(v), 300)
  .option('--forbid <verb:resource[:namespace]...>', 'deny requests as RBAC would, e.g. create:pods/exec')
  .option('--forward <ns/pod=netns...>', 'serve pods/portforward for these pods by dialling localhost:PORT in the network namespace')
  .parse();

const o = program.opts<{ objects: string; netns?: string; port?: number; podStartDelay: number; forbid?: string[]; forward?: string[] }>();
const forwards = new Map((o.forward ?? []).map((f) => {
  const m = /^([^/=]+)\/([^/=]+)=(.+)$/.exec(f);
  if (!m) throw new Error(`--forward wants namespace/pod=netns, got ${f}`);
  return [`${m[1]}/${m[2]}`, m[3]!] as const;
}));
const forbid: ForbidRule[] = (o.forbid ?? []).map((f) => {
  const [verb, resource, namespace] = f.split(':');
  if (!verb || !resource) throw new Error(`--forbid wants verb:resource[:namespace], got ${f}`);
  return { verb: verb as Verb, resource, ...(namespace ? { namespace } : {}) };
});
const server = await startApiServer({
  objectsFile: o.objects,
  podStartDelayMs: o.podStartDelay,
  forbid,
  ...(o.netns ? { netns: o.netns } : {}),
  ...(o.port !== undefined ? { port: o.port } : {}),
  ...(forwards.size ? { portForward: netnsDialer((pod) => forwards.get(`${pod.namespace}/${pod.name}`)) } : {}),
});
process.stdout.write(`listening on ${server.url}\nexport KUBECONFIG=${server.kubeconfigPath}\n`);
if (server.skipped.length) process.stdout.write(`not served (kinds outside the five): ${server.skipped.join(', ')}\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

/**
 * How the recorded API server reaches a pod's port for a port-forward: like the
 * container runtime behind the kubelet (containerd's `portForward`, dockershim's
 * `nsenter -t PID -n socat - TCP4:localhost:PORT`), it dials `localhost:PORT` inside the
 * pod's network namespace. Here that is `ip netns exec NS socat -d -d STDIO TCP4:localhost:PORT`
 * (a process cannot enter another namespace for one socket from Node), and the
 * connection is socat's stdin/stdout. socat's `-d -d` notices tell a made connection
 * ("starting data transfer loop") from a failed one (exit before it, the error on stderr).
 */
import { spawn } from 'node:child_process';
import { Duplex } from 'node:stream';

/** Dials `port` of the pod; rejects with the reason the connection could not be made. */
export type PodDialer = (pod: { namespace: string; name: string }, port: number) => Promise<Duplex>;

/** The socat stderr line of a failed connect, without socat's timestamp prefix (`connect(5, …): Connection refused`). */
function socatError(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => / E /.test(l));
  const last = lines[lines.length - 1] ?? stderr.trim().split('\n').pop() ?? '';
  return last.replace(/^.*? E /, '').trim() || 'socat failed';
}

/**
 * A dialer into network namespaces: `netnsOf(pod)` names the pod's namespace (undefined:
 * the pod has no network here, the dial fails). The error text follows containerd's
 * (`failed to connect to localhost:PORT inside namespace "NS", IPv4: …`).
 */
export function netnsDialer(netnsOf: (pod: { namespace: string; name: string }) => string | undefined): PodDialer {
  return (pod, port) =>
    new Promise((resolve, reject) => {
      const ns = netnsOf(pod);
      if (!ns) {
        reject(new Error(`failed to find the network namespace of pod ${pod.namespace}/${pod.name}`));
        return;
      }
      const child = spawn('ip', ['netns', 'exec', ns, 'socat', '-d', '-d', 'STDIO', `TCP4:localhost:${port}`], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      let connected = false;
      const fail = (why: string) => reject(new Error(`failed to connect to localhost:${port} inside namespace "${ns}", IPv4: ${why}`));
      child.on('error', (e) => fail(e.message));
      child.stdin.on('error', () => undefined); // socat may exit before reading
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString('utf8');
        if (!connected && stderr.includes('starting data transfer loop')) {
          connected = true;
          resolve(processStream(child));
        }
      });
      child.on('exit', () => {
        if (!connected) fail(socatError(stderr));
      });
    });
}

/** The connection as a Duplex over socat's stdin/stdout; destroying it ends socat. */
function processStream(child: ReturnType<typeof spawn>): Duplex {
  const stream = new Duplex({
    read: () => child.stdout!.resume(),
    write: (chunk: Buffer, _enc, cb) => {
      child.stdin!.write(chunk, cb);
    },
    final: (cb) => {
      child.stdin!.end();
      cb();
    },
    destroy: (err, cb) => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      cb(err);
    },
  });
  child.stdout!.on('data', (d: Buffer) => {
    if (!stream.push(d)) child.stdout!.pause();
  });
  child.stdout!.on('end', () => stream.push(null));
  return stream;
}

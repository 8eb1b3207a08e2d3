/**
 * How the recorded API server reaches a pod's port for a port-forward: like the
 * container runtime behind the kubelet (containerd's `portForward`, dockershim's
 * `nsenter -t PID -n socat - TCP4:localhost:PORT`), it dials `localhost:PORT` (IPv4)
 * inside the pod's network namespace. A Node process cannot enter another namespace for
 * one socket, so a small Node program does the dial there (`ip netns exec NS node -e …
 * PORT`), announcing the made connection on stderr, and the connection is its
 * stdin/stdout — socat's role, without needing socat.
 */
import { spawn } from 'node:child_process';
import { Duplex } from 'node:stream';

/** Dials `port` of the pod; rejects with the reason the connection could not be made. */
export type PodDialer = (pod: { namespace: string; name: string }, port: number) => Promise<Duplex>;

/** Marker the dial program prints on stderr once connected. */
const CONNECTED = 'connected';

/**
 * The dial program: connects to localhost:PORT over IPv4, prints {@link CONNECTED} (or
 * `error: MESSAGE` and exits 1), then copies stdin → socket → stdout; exits when the
 * socket closes. An ended stdin half-closes the socket.
 */
const DIAL_SOURCE = `'use strict';
const net = require('node:net');
const s = net.connect({ host: 'localhost', port: Number(process.argv[1]), family: 4 });
s.on('connect', () => { process.stderr.write('${CONNECTED}\\n'); process.stdin.pipe(s); s.pipe(process.stdout); });
s.on('error', (e) => { process.stderr.write('error: ' + e.message + '\\n'); process.exit(1); });
s.on('close', () => process.exit(0)); // writes to a pipe are synchronous on Linux: nothing is lost
`;

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
      const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', DIAL_SOURCE, String(port)], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      let connected = false;
      const fail = (why: string) => reject(new Error(`failed to connect to localhost:${port} inside namespace "${ns}", IPv4: ${why}`));
      child.on('error', (e) => fail(e.message));
      child.stdin.on('error', () => undefined); // the program may exit before reading
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString('utf8');
        if (!connected && stderr.split('\n').includes(CONNECTED)) {
          connected = true;
          resolve(processStream(child));
        }
      });
      child.on('exit', () => {
        if (!connected) fail(/^error: (.*)$/m.exec(stderr)?.[1] ?? (stderr.trim() || 'the dial program failed'));
      });
    });
}

/** The connection as a Duplex over the program's stdin/stdout; destroying it ends the program. */
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

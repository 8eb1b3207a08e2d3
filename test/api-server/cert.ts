/**
 * A throwaway certificate authority and a server certificate for the recorded
 * API server, made with the machine's `openssl` (OpenSSL ≥3.0 for `req -CA`).
 *
 * The CA is what a kubeconfig carries as `certificate-authority-data`; the
 * server certificate names `127.0.0.1`, `::1` and `localhost` (plus any extra
 * hosts) in its subjectAltName, so Go's and Node's TLS verification both pass.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';

/** PEM texts of the CA certificate, the server certificate and its private key. */
export interface ServerCertificates {
  readonly caPem: string;
  readonly certPem: string;
  readonly keyPem: string;
}

/**
 * Generates a P-256 CA and a server certificate signed by it, valid 2 days.
 * Throws an `Error` naming openssl's stderr when `openssl` is missing or fails.
 */
export function generateCertificates(extraHosts: readonly string[] = []): ServerCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'nodescope-cert-'));
  const hosts = ['127.0.0.1', '::1', 'localhost', ...extraHosts];
  const san = hosts.map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];
  const run = (args: string[]) => {
    try {
      execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      const err = e as { stderr?: Buffer; message: string };
      throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString().trim() || err.message}`);
    }
  };
  try {
    run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-subj', '/CN=nodescope-recorded-apiserver-ca',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    run(['req', '-x509', ...ec, '-keyout', 'tls.key', '-out', 'tls.crt', '-subj', '/CN=kube-apiserver',
      '-CA', 'ca.crt', '-CAkey', 'ca.key', '-addext', `subjectAltName=${san}`,
      '-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'extendedKeyUsage=serverAuth',
      '-addext', 'keyUsage=critical,digitalSignature']);
    return {
      caPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
      certPem: readFileSync(join(dir, 'tls.crt'), 'utf8'),
      keyPem: readFileSync(join(dir, 'tls.key'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

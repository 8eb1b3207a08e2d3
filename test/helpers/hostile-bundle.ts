/**
 * A hostile capture bundle for the terminal-escape tests (issue 24): a copy of the shipped
 * fixtures/lab-iptables with escape sequences, C1 controls and bidi overrides injected where
 * a node, the API, DNS or a bundle could put them.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../src/paths.js';

/** The repro (OSC 0 retitle, OSC 52 clipboard write, CSI clear screen) plus a C1 CSI and a bidi override. */
export const PAYLOAD = 'x\x1b]0;PWNED\x07\x1b]52;c;bGl2ZQ==\x07\x1b[2J\x9b31m\u202eevil';

/** How {@link PAYLOAD} reads once escaped (src/text/terminal-safe.ts). */
export const PAYLOAD_SHOWN = 'x\\x1b]0;PWNED\\x07\\x1b]52;c;bGl2ZQ==\\x07\\x1b[2J\\x9b31m\\u202eevil';

/** A start of {@link PAYLOAD_SHOWN} short enough to survive a narrow cell cut. */
export const PAYLOAD_SHOWN_HEAD = 'x\\x1b]0;PWNED';

/** Every character a terminal could act on or not draw, except newline and tab (documents keep those). */
export const RAW_CONTROL = /[\0-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/u;

/** The injected names (each holds {@link PAYLOAD}; some a newline, which must not start a line of its own). */
export const HOSTILE = {
  iptablesComment: `fwd ${PAYLOAD}`,
  /** On a rule every packet to web's ClusterIP is checked against first (it does not match): `trace` shows it. */
  traceComment: `trace ${PAYLOAD}`,
  nftComment: `nft ${PAYLOAD}\n! forged`,
  serviceNamespace: `ns${PAYLOAD}`,
  serviceName: `svc${PAYLOAD}\nforged`,
  nodeName: `node2${PAYLOAD}`,
  cname: `cname${PAYLOAD}\nforged.example.`,
  manifestNode: `lab-node${PAYLOAD}\nforged line`,
  conntrackLine: `ipv4     2 tcp      6 bogus ${PAYLOAD}`,
} as const;

/** Writes the hostile bundle into a new temporary directory and returns it. */
export function makeHostileBundle(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'nodescope-hostile-'));
  cpSync(path.join(packageRoot(), 'fixtures', 'lab-iptables'), dir, { recursive: true });
  const file = (p: string) => path.join(dir, p);
  const edit = (p: string, f: (text: string) => string) => writeFileSync(file(p), f(readFileSync(file(p), 'utf8')));

  edit('probes/iptables-save.stdout', (t) => {
    const out = t.replace('--comment "kubernetes forwarding rules"', `--comment "${HOSTILE.iptablesComment}"`);
    const web = '[9:540] -A KUBE-SERVICES -d 10.96.12.34/32';
    if (out === t || !out.includes(web)) throw new Error('fixture changed: no "kubernetes forwarding rules" comment or web ClusterIP rule');
    return out.replace(web, `[0:0] -A KUBE-SERVICES -d 192.0.2.1/32 -p tcp -m comment --comment "${HOSTILE.traceComment}" -m tcp --dport 80 -j RETURN\n${web}`);
  });
  edit('probes/nft-json.stdout', (t) => {
    const doc = JSON.parse(t) as { nftables: unknown[] };
    doc.nftables.push(
      { table: { family: 'inet', name: 'hostile', handle: 900 } },
      { chain: { family: 'inet', table: 'hostile', name: 'input', handle: 1, type: 'filter', hook: 'input', prio: 0, policy: 'accept' } },
      { rule: { family: 'inet', table: 'hostile', chain: 'input', handle: 2, comment: HOSTILE.nftComment, expr: [{ accept: null }] } },
    );
    return JSON.stringify(doc);
  });
  edit('probes/conntrack.stdout', (t) => `${t}${HOSTILE.conntrackLine}\n`);
  edit('api.json', (t) => {
    const doc = JSON.parse(t) as { items: Array<{ kind: string; metadata: { name: string; namespace?: string }; spec?: unknown; endpoints?: Array<{ nodeName?: string }> }> };
    const web = doc.items.find((i) => i.kind === 'Service' && i.metadata.name === 'web')!;
    const svc = structuredClone(web) as typeof web & { spec: { clusterIP: string; clusterIPs: string[]; selector?: unknown } };
    svc.metadata = { ...svc.metadata, name: HOSTILE.serviceName, namespace: HOSTILE.serviceNamespace };
    svc.spec = { ...svc.spec, clusterIP: '10.96.99.99', clusterIPs: ['10.96.99.99'] };
    doc.items.push(svc);
    const slice = doc.items.find((i) => i.kind === 'EndpointSlice' && i.metadata.name === 'web-tm2wl')!;
    const remote = slice.endpoints!.find((e) => e.nodeName === 'lab-node2')!;
    remote.nodeName = HOSTILE.nodeName;
    // The node nodescope finds itself on (by address), named in the header of every document.
    doc.items.find((i) => i.kind === 'Node' && i.metadata.name === 'lab-node')!.metadata.name = HOSTILE.manifestNode;
    return JSON.stringify(doc, null, 2);
  });
  edit('extra/dns.json', (t) => {
    const doc = JSON.parse(t) as { exchanges: Array<{ qname: string; qtype: string; answers: Array<Record<string, unknown>> }> };
    for (const e of doc.exchanges) {
      if (e.qname === 'web.default.svc.cluster.local' && e.qtype === 'A') {
        e.answers.unshift({ section: 'answer', name: 'web.default.svc.cluster.local', type: 'CNAME', ttl: 5, data: HOSTILE.cname });
      }
    }
    // The capture's own layout: one exchange per line (src/dns/capture.ts).
    return `{"formatVersion":1,"exchanges":[\n${doc.exchanges.map((e) => JSON.stringify(e)).join(',\n')}\n]}\n`;
  });
  edit('manifest.json', (t) => {
    const doc = JSON.parse(t) as { node: string };
    doc.node = HOSTILE.manifestNode;
    return JSON.stringify(doc, null, 1);
  });
  return dir;
}

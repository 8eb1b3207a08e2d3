/**
 * The new LB control plane's StateDB tables as `cilium-dbg shell -- db/show frontends|backends|services`
 * prints them (Cilium 1.17+; also the `*.table` expectations in cilium/cilium
 * `pkg/loadbalancer/tests/testdata/*.txtar`). Whitespace-aligned columns under a header;
 * empty cells are blank; `Backends` is a comma-separated address list; a terminating backend
 * instance gets ` [terminating]` appended in `Instances`.
 *
 * Several tables may follow each other in one text (each starts at its header line).
 */
import type { Diagnostic, ParseResult } from '../model/diagnostics.js';
import { diagnostic } from '../model/diagnostics.js';
import type { LbFrontend, StateDbBackend, StateDbFrontend, StateDbInstance, StateDbService, StateDbTables } from '../model/cilium.js';
import { serviceTypeFromName } from '../model/cilium.js';
import { parseL3n4 } from './cilium-addr.js';
import type { HeaderColumn } from './cilium-columns.js';
import { isKubectlNotice, splitRow, textLines } from './cilium-columns.js';

type TableKind = 'frontends' | 'backends' | 'services';

/** Header names that identify each table (other columns may come and go between versions). */
const SIGNATURES: readonly { kind: TableKind; first: string; required: readonly string[] }[] = [
  { kind: 'frontends', first: 'Address', required: ['Type', 'ServiceName'] },
  { kind: 'backends', first: 'Address', required: ['Instances'] },
  { kind: 'services', first: 'Name', required: ['Source'] },
];

function headerOf(line: string): { kind: TableKind; cols: HeaderColumn[] } | null {
  const cols = [...line.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], start: m.index ?? 0 }));
  const names = cols.map((c) => c.name);
  const sig = SIGNATURES.find((s) => names[0] === s.first && cols[0]?.start === 0 && s.required.every((r) => names.includes(r)));
  return sig ? { kind: sig.kind, cols } : null;
}

const frontend = (text: string): LbFrontend | null => {
  const a = parseL3n4(text);
  return a && { ip: a.ip, port: a.port, protocol: a.protocol, scope: a.scope };
};

/** `default/echo (http) [terminating]` → instance. */
function instance(text: string): StateDbInstance | null {
  const m = /^(\S+?)(?: \(([^)]*)\))?((?: \[[^\]]+\])*)$/.exec(text.trim());
  if (!m) return null;
  return { service: m[1] ?? '', portName: m[2] ?? null, terminating: (m[3] ?? '').includes('[terminating]') };
}

/**
 * A frontend's `Backends` cell: at most five addresses, then ` + N more ...` (pkg/loadbalancer
 * `showBackends`); early 1.17 development builds appended each backend's state (` (active)`).
 */
function backendList(cell: string): { shown: string[]; more: number } {
  if (cell === '') return { shown: [], more: 0 };
  const m = / \+ (\d+) more \.\.\.$/.exec(cell);
  const list = m ? cell.slice(0, m.index) : cell;
  return { shown: list.split(', ').map((b) => b.replace(/ \([a-z]+\)$/, '')), more: m ? Number(m[1]) : 0 };
}

/** Parses one or more StateDB tables (frontends, backends, services). Never throws. */
export function parseCiliumStateDbTables(text: string, origin: string): ParseResult<StateDbTables> {
  const diags: Diagnostic[] = [];
  const frontends: StateDbFrontend[] = [];
  const backends: StateDbBackend[] = [];
  const services: StateDbService[] = [];
  let table: { kind: TableKind; cols: HeaderColumn[] } | null = null;
  textLines(text).forEach((line, i) => {
    const n = i + 1;
    const bad = (msg: string) => diags.push(diagnostic('error', origin, n, line, 'bad-row', msg));
    if (line.trim() === '' || isKubectlNotice(line)) return;
    const header = headerOf(line);
    if (header) {
      table = header;
      return;
    }
    if (table === null) {
      diags.push(diagnostic('error', origin, n, line, 'no-header', 'row before any StateDB table header'));
      return;
    }
    const { kind, cols } = table as { kind: TableKind; cols: HeaderColumn[] };
    const cells = splitRow(line, cols);
    const cell = (name: string) => cells[cols.findIndex((c) => c.name === name)] ?? '';
    if (kind === 'frontends') {
      const address = frontend(cell('Address'));
      const { shown, more } = backendList(cell('Backends'));
      const list = shown.map(frontend);
      if (address === null || list.some((b) => b === null)) return bad('frontend address or backend list not understood');
      frontends.push({
        address,
        type: serviceTypeFromName(cell('Type')),
        serviceName: cell('ServiceName'),
        portName: cell('PortName'),
        backends: list as LbFrontend[],
        ...(more > 0 ? { backendsNotShown: more } : {}),
        redirectTo: cell('RedirectTo'),
        status: cell('Status'),
        since: cell('Since'),
        error: cell('Error'),
        raw: line,
      });
    } else if (kind === 'backends') {
      const address = frontend(cell('Address'));
      const instances = cell('Instances').split(', ').map(instance);
      if (address === null || instances.some((x) => x === null)) return bad('backend address or instances not understood');
      backends.push({ address, instances: instances as StateDbInstance[], nodeName: cell('NodeName') || null, raw: line });
    } else {
      const ports = cell('PortNames') === '' ? [] : cell('PortNames').split(', ').map((p) => /^(.*)=(\d+)$/.exec(p));
      if (ports.some((p) => p === null)) return bad('PortNames not name=port pairs');
      services.push({
        name: cell('Name'),
        source: cell('Source'),
        portNames: ports.map((p) => ({ name: p?.[1] ?? '', port: Number(p?.[2]) })),
        trafficPolicy: cell('TrafficPolicy'),
        flags: cell('Flags'),
        raw: line,
      });
    }
  });
  return { value: { frontends, backends, services }, diagnostics: diags };
}

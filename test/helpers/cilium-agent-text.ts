/**
 * `cilium-dbg status --verbose` and `cilium-dbg shell -- db/show frontends` texts as the agent
 * prints them (cilium/cilium pkg/client `FormatStatusResponse`: `Key:\tvalue` lines and the
 * controller table through a tabwriter, padding 3; pkg/loadbalancer `Frontend.TableRow`,
 * `Since` as Kubernetes' `duration.HumanDuration`), built from rows for the fleet tests.
 */
import { tabwrite } from '../../src/parsers/cilium-tabwriter.js';

/** One controller row: name, last success, last error, consecutive failures, message. */
export type ControllerRow = readonly [string, string, string, number, string];

/** A status text: the API watch line (`Ok   1.34 (v1.34.2) [linux/amd64]`), the controllers. */
export function statusText(kubernetes: string, controllers: readonly ControllerRow[]): string {
  const failing = controllers.filter((c) => c[3] > 0).length;
  const top = tabwrite(
    [
      'KVStore:\tDisabled\t',
      `Kubernetes:\t${kubernetes}`,
      'Kubernetes APIs:\t["EndpointSliceOrEndpoint", "cilium/v2::CiliumNode", "core/v1::Pods"]',
      'KubeProxyReplacement:\tTrue\t[eth0   192.168.49.2 (Direct Routing)]',
      'Cilium:\tOk   1.18.4 (v1.18.4-afda2aa9)',
      `Controller Status:\t${controllers.length - failing}/${controllers.length} healthy`,
      '',
    ].join('\n'),
    { minwidth: 0, padding: 3 },
  );
  const table = tabwrite(['  Name\tLast success\tLast error\tCount\tMessage', ...controllers.map((c) => `  ${c.join('\t')}\t`).sort(), ''].join('\n'), { minwidth: 0, padding: 3 });
  return `${top}${table}Proxy Status:   No managed proxy redirect\n`;
}

/** One frontends row: address, type, service, port name, backends, status, since, error. */
export type FrontendRow = readonly [string, string, string, string, string, string, string, string];

/** A `db/show frontends` text. */
export function frontendsText(rows: readonly FrontendRow[]): string {
  const line = (r: readonly string[]) => `${[...r.slice(0, 5), '', ...r.slice(5)].join('\t')}\n`;
  return tabwrite(line(['Address', 'Type', 'ServiceName', 'PortName', 'Backends', 'Status', 'Since', 'Error']).replace('\t\tStatus', '\tRedirectTo\tStatus') + rows.map(line).join(''), { minwidth: 0, padding: 3 });
}

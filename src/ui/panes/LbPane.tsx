/**
 * The LB pane (Cilium eBPF load balancing): where the rows came from (pinned BPF maps or
 * cilium-dbg, and whether cilium-agent answered), every frontend with its flags, ID
 * (rev-NAT index), count+qcount and Service, then the selected frontend's backend slots
 * (address, state, whether new connections may pick it, node, EndpointSlice conditions),
 * then map entries nodescope could not decode, with the reason.
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import { foldMapNames, lbConditionsText, type LbBackendRow, type LbFrontendRow, type LbView } from '../../analysis/lb-view.js';
import { Diagnostics, diagnosticsHeight } from '../components/Diagnostics.js';
import { Table, windowStart, type TableRow } from '../components/Table.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { cellWidth, fitCell, type ColumnSpec } from '../../text/cells.js';
import { theme } from '../theme.js';
import { formatServiceRef } from '../../model/service-ref.js';

/** Props of {@link LbPane}: `data` from `buildLbView`; `cursor` is the selected frontend; `height` counts every line. */
export interface LbPaneProps {
  readonly data: LbView;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly cursor: number;
  readonly lang: Lang;
  /**
   * The node's Service dataplane when it is read and is not Cilium (`iptables`, `nftables`,
   * `ipvs`): without LB maps the pane then says what the node uses, as `show lb` does.
   */
  readonly nodeMode?: string | null;
}

/** `text` broken at spaces into at most `lines` lines of `width` cells (the last one cut with `…`). */
export function wrapWords(text: string, width: number, lines: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width && out.length < lines - 1) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  out.push(line);
  return out.map((l) => fitCell(l, width));
}

/** The source lines: which maps (or which cilium-dbg listing), then what cilium-agent said. */
export function sourceLines(data: LbView, lang: Lang): string[] {
  const s = data.source;
  const from =
    s.kind === 'bpf-maps' ? tf(lang, 'lb.source.maps', { maps: foldMapNames(s.maps).join(', ') }) : s.kind ? tf(lang, 'lb.source.agent', { what: s.kind }) : '';
  const agent =
    s.agent === 'answered'
      ? tf(lang, 'lb.agent.answered', { version: s.agentDetail ?? '?' })
      : s.agent === 'unreachable'
        ? tf(lang, 'lb.agent.unreachable', { reason: s.agentDetail ?? '' })
        : t(lang, 'lb.agent.notAsked');
  return from ? [from, agent] : [agent];
}

/**
 * The FRONTEND column: 22 wide (`192.168.49.200:30080/TCP` fits), wider for the IPv6 ones
 * in view (`[fd00:10:96::1234]:80/TCP/i`), up to 44 on a wide terminal and 26 on a narrow one.
 */
function frontendWidth(rows: readonly TableRow[], wide: boolean): number {
  const longest = rows.reduce((n, r) => Math.max(n, String(r.cells[0] ?? '').length), 0);
  return Math.min(wide ? 44 : 26, Math.max(22, longest));
}

function frontendColumns(lang: Lang, wide: boolean, frontendCols = 22): ColumnSpec[] {
  return [
    { key: 'frontend', title: t(lang, 'col.frontend'), width: frontendCols },
    wide ? { key: 'flags', title: t(lang, 'col.flags'), flex: 2, minWidth: 23 } : { key: 'flags', title: t(lang, 'col.flags'), width: 23 },
    { key: 'id', title: t(lang, 'col.lbId'), width: 5, align: 'right' },
    { key: 'slots', title: t(lang, 'col.slots'), width: 5, align: 'right' },
    { key: 'service', title: t(lang, 'col.service'), flex: 2, minWidth: 8, elide: 'middle' },
  ];
}

function backendColumns(lang: Lang, wide: boolean): ColumnSpec[] {
  // As wide as its words (`いいえ` is 6 cells): a yes/no cut to `い…` says neither. The node
  // column gives up what it takes on a narrow terminal, so the conditions stay whole.
  const fresh = Math.max(4, ...[t(lang, 'col.new'), t(lang, 'lb.yes'), t(lang, 'lb.no')].map(cellWidth));
  return [
    { key: 'slot', title: t(lang, 'col.slot'), width: 4, align: 'right' },
    ...(wide ? [{ key: 'id', title: t(lang, 'col.backendId'), width: 5, align: 'right' } satisfies ColumnSpec] : []),
    { key: 'backend', title: t(lang, 'col.backend'), flex: 2, minWidth: 16 },
    { key: 'state', title: t(lang, 'col.state'), width: 11 },
    { key: 'new', title: t(lang, 'col.new'), width: fresh },
    wide ? { key: 'node', title: t(lang, 'col.nodeName'), flex: 2 } : { key: 'node', title: t(lang, 'col.nodeName'), width: 13 - (fresh - 4) },
    { key: 'cond', title: t(lang, 'col.conditions'), width: 26 },
  ];
}

function serviceText(f: LbFrontendRow, wide: boolean): string {
  if (!f.service) return '';
  const name = formatServiceRef(f.service);
  return wide && f.service.portName ? `${name} (${f.service.portName})` : name;
}

function frontendCells(f: LbFrontendRow, lang: Lang, wide: boolean): string[] {
  const slots = f.count === null ? String(f.backends.length) : `${f.count}+${f.qcount ?? 0}`;
  return [f.address, f.flags, f.revNatId === null ? '' : String(f.revNatId), slots, serviceText(f, wide)];
}

function backendCells(b: LbBackendRow, lang: Lang, wide: boolean): string[] {
  const node = b.nodeName === null ? '' : wide && b.onNode ? `${b.nodeName} (${t(lang, 'services.onThisNode')})` : b.nodeName;
  const state = b.state === 'missing' ? t(lang, 'lb.state.missing') : b.state ?? '';
  const fresh = b.newConnections === null ? '' : t(lang, b.newConnections ? 'lb.yes' : 'lb.no');
  const address = b.address ?? tf(lang, 'lb.missingBackend', { id: b.backendId ?? '?' });
  return [b.slot === null ? '' : String(b.slot), ...(wide ? [b.backendId === null ? '' : String(b.backendId)] : []), address, state, fresh, node, lbConditionsText(b)];
}

function titleText(f: LbFrontendRow, lang: Lang): string {
  return tf(lang, 'lb.title', {
    service: f.service ? `${f.service.namespace}/${f.service.name}${f.service.portName ? ` (${f.service.portName})` : ''}` : t(lang, 'lb.noService'),
    frontend: f.address,
    id: f.revNatId ?? '?',
    count: f.count ?? '?',
    qcount: f.qcount ?? '?',
  });
}

/** Renders the pane. */
export function LbPane({ data, width, height, focused, cursor, lang, nodeMode = null }: LbPaneProps): React.JSX.Element {
  const wide = width >= 100;
  const diagLines = diagnosticsHeight(data.diagnostics);
  // The reason is the point (which sizes were found, which layouts exist): it gets three lines.
  const undecoded = data.undecoded.flatMap((u) => wrapWords(`⚠ ${tf(lang, 'lb.undecoded', { map: u.map, count: u.lines.length, reason: u.reason })}`, width, 3));
  const notes = (
    <>
      {undecoded.map((line, i) => (
        <Text key={`u${i}`} color={theme.warn}>
          {line}
        </Text>
      ))}
      <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} />
    </>
  );
  if (data.status !== 'ready') {
    const other = data.status === 'absent' && nodeMode !== null;
    const text = data.status === 'loading' ? t(lang, 'status.loading') : other ? tf(lang, 'lb.otherMode', { mode: nodeMode }) : tf(lang, 'lb.absent', { reason: data.absentReason ?? '' });
    return (
      <Box flexDirection="column">
        {wrapWords(text, width, 3).map((l, i) => (
          <Text key={i} color={theme.muted}>
            {l}
          </Text>
        ))}
        {data.status === 'absent' && !other ? <Text color={theme.muted}>{fitCell(t(lang, 'lb.absentHint'), width)}</Text> : null}
        {notes}
      </Box>
    );
  }
  const [from = '', agent] = sourceLines(data, lang);
  const source = [...wrapWords(from, width, 2), ...(agent === undefined ? [] : [fitCell(agent, width)])];
  const selected = data.frontends[cursor];
  const backends = selected?.backends ?? [];
  const fixed = source.length + 1 + 1 + 1 + undecoded.length + diagLines; // source, frontend header, title, backend header
  const beHeight = Math.min(Math.max(backends.length, 1), Math.max(2, Math.floor((height - fixed) / 3)));
  const feHeight = Math.max(1, height - fixed - beHeight);
  // Only the frontends in view are formatted.
  const feStart = windowStart(data.frontends.length, cursor, feHeight);
  const feRows: TableRow[] = data.frontends.slice(feStart, feStart + feHeight).map((f) => ({
    key: f.key,
    cells: frontendCells(f, lang, wide),
    ...(f.backends.length === 0 ? { color: 'warn' as const } : f.backends.some((b) => b.state === 'missing') ? { color: 'error' as const } : {}),
  }));
  const beRows: TableRow[] = backends.map((b, i) => ({
    key: `${b.slot ?? i}/${b.backendId ?? ''}`,
    cells: backendCells(b, lang, wide),
    ...(b.state === 'missing' ? { color: 'error' as const } : b.newConnections === false || (b.state !== null && b.state !== 'active') ? { color: 'warn' as const } : {}),
  }));
  return (
    <Box flexDirection="column">
      {source.map((l, i) => (
        <Text key={`s${i}`} color={theme.muted}>
          {l}
        </Text>
      ))}
      {data.frontends.length === 0 ? (
        <Text color={theme.muted}>{fitCell(t(lang, data.total === 0 ? 'lb.empty' : 'lb.noMatch'), width)}</Text>
      ) : (
        <Table columns={frontendColumns(lang, wide, frontendWidth(feRows, wide))} rows={feRows} cursor={cursor - feStart} width={width} height={feHeight} focused={focused} />
      )}
      <Text bold color={theme.accent}>
        {fitCell(selected ? titleText(selected, lang) : '', width)}
      </Text>
      {selected && backends.length === 0 ? (
        <Text color={theme.warn}>{fitCell(t(lang, 'lb.noBackends'), width)}</Text>
      ) : (
        <Table columns={backendColumns(lang, wide)} rows={beRows} cursor={-1} width={width} height={beHeight} focused={false} sortable={false} />
      )}
      {notes}
    </Box>
  );
}

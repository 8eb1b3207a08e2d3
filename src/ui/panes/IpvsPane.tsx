/**
 * The IPVS pane: the kernel's virtual servers as kube-proxy's IPVS mode programs them
 * (scheduler, scheduler flags, persistence, connection totals), and the selected one's
 * real servers (forwarding method, weight, ActiveConn / InActConn, totals). A table that
 * was not read says so with the probes that would read it, never "0 virtual servers".
 */
import { Box } from 'ink';
import { Text } from '../components/SafeText.js';
import React from 'react';
import { ipvsCountText, type IpvsRealServerRow, type IpvsView, type IpvsVirtualServerRow } from '../../analysis/ipvs-view.js';
import type { IpvsCount } from '../../model/ipvs.js';
import { wrapCells } from '../../tour/wrap.js';
import { whyText } from '../../text/why.js';
import { Diagnostics, diagnosticsHeight } from '../components/Diagnostics.js';
import { Table, windowStart, type TableRow } from '../components/Table.js';
import { t, tf, type Lang } from '../../text/i18n.js';
import { fitCell, humanBytes, humanCount, type ColumnSpec } from '../../text/cells.js';
import { theme } from '../theme.js';

/** Props of {@link IpvsPane}. `cursor`: the selected virtual server; `height`: lines available. */
export interface IpvsPaneProps {
  readonly data: IpvsView;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  readonly cursor: number;
  readonly lang: Lang;
}

/** A counter short enough for its column; `?` when the listing that has it was not read. */
function count(c: IpvsCount | undefined | null, bytes = false): string {
  if (!c) return '?';
  if (c.suffix !== null) return ipvsCountText(c);
  return bytes ? humanBytes(c.value) : humanCount(c.value);
}

function num(n: number | null): string {
  return n === null ? '?' : String(n);
}

function vsColumns(lang: Lang, wide: boolean): ColumnSpec[] {
  return [
    { key: 'service', title: t(lang, 'col.service'), flex: 1, minWidth: 22, elide: 'middle' },
    { key: 'sched', title: t(lang, 'col.ipvs.scheduler'), width: 6 },
    { key: 'flags', title: t(lang, 'col.ipvs.flags'), width: wide ? 24 : 19 },
    { key: 'persist', title: t(lang, 'col.ipvs.persistence'), width: wide ? 18 : 8 },
    { key: 'real', title: t(lang, 'col.ipvs.real'), width: 5, align: 'right' },
    { key: 'conns', title: t(lang, 'col.ipvs.conns'), width: 7, align: 'right' },
    ...(wide ? [{ key: 'inPkts', title: t(lang, 'col.ipvs.inPkts'), width: 9, align: 'right' as const }] : []),
  ];
}

function persistenceText(v: IpvsVirtualServerRow, lang: Lang, wide: boolean): string {
  const p = v.persistence;
  if (!p) return v.scheduler === null ? '?' : '-';
  if (!wide) return `${p.timeout}s`;
  return [tf(lang, 'ipvs.persistent', { timeout: p.timeout }), p.mask ? `mask ${p.mask}` : '', p.pe ? `pe ${p.pe}` : ''].filter(Boolean).join(' ');
}

function vsCells(v: IpvsVirtualServerRow, lang: Lang, wide: boolean): string[] {
  const flags = v.flags.length ? v.flags.join(',') : v.scheduler === null ? '?' : '-';
  return [v.service, v.scheduler ?? '?', flags, persistenceText(v, lang, wide), String(v.realServers.length), count(v.stats?.conns), ...(wide ? [count(v.stats?.inPkts)] : [])];
}

function rsColumns(lang: Lang, wide: boolean): ColumnSpec[] {
  const right = 'right' as const;
  return [
    { key: 'address', title: t(lang, 'col.address'), flex: 1, minWidth: 21 },
    { key: 'forward', title: t(lang, 'col.ipvs.forward'), width: 7 },
    { key: 'weight', title: t(lang, 'col.ipvs.weight'), width: 6, align: right },
    { key: 'active', title: t(lang, 'col.ipvs.active'), width: wide ? 10 : 7, align: right },
    { key: 'inact', title: t(lang, 'col.ipvs.inactive'), width: wide ? 10 : 7, align: right },
    { key: 'conns', title: t(lang, 'col.ipvs.conns'), width: 7, align: right },
    ...(wide
      ? [
          { key: 'inPkts', title: t(lang, 'col.ipvs.inPkts'), width: 9, align: right },
          { key: 'outPkts', title: t(lang, 'col.ipvs.outPkts'), width: 9, align: right },
          { key: 'inBytes', title: t(lang, 'col.ipvs.inBytes'), width: 9, align: right },
        ]
      : []),
  ];
}

function rsCells(r: IpvsRealServerRow, wide: boolean): string[] {
  const s = r.stats;
  return [r.address, r.forward ?? '?', num(r.weight), num(r.activeConn), num(r.inActConn), count(s?.conns), ...(wide ? [count(s?.inPkts), count(s?.outPkts), count(s?.inBytes, true)] : [])];
}

/** Some value of the table is `?`: a listing was not read. */
function hasUnread(rows: readonly IpvsVirtualServerRow[]): boolean {
  return rows.some((v) => v.scheduler === null || v.stats === null || v.realServers.some((r) => r.weight === null || r.stats === null));
}

/** The not-read table: why, and the probes that would read it. */
function UnknownTable({ reason, probes, width, lang }: { readonly reason: string; readonly probes: readonly string[]; readonly width: number; readonly lang: Lang }): React.JSX.Element {
  const lines = [...wrapCells(tf(lang, 'ipvs.unknown', { reason: whyText(lang, reason) }), width).slice(0, 4), ...wrapCells(tf(lang, 'ipvs.readBy', { probes: probes.join(', ') }), width).slice(0, 2)];
  return (
    <Box flexDirection="column">
      {lines.map((l, i) => (
        <Text key={i} color={i < lines.length - 1 ? theme.warn : theme.muted}>
          {l}
        </Text>
      ))}
    </Box>
  );
}

/** Renders the pane. */
export function IpvsPane({ data, width, height, focused, cursor, lang }: IpvsPaneProps): React.JSX.Element {
  if (data.status === 'pending') return <Text color={theme.muted}>{t(lang, 'status.loading')}</Text>;
  if (data.status === 'unknown') return <UnknownTable reason={data.reason} probes={data.probes} width={width} lang={lang} />;
  const wide = width >= 100;
  const servers = data.virtualServers;
  const source = wrapCells(tf(lang, 'ipvs.source', { version: data.version ?? t(lang, 'ipvs.versionUnknown'), count: servers.length, sources: data.sources.join(' + ') }), width).slice(0, 2);
  const sourceLines = source.map((l, i) => (
    <Text key={`s${i}`} color={theme.muted}>
      {l}
    </Text>
  ));
  if (servers.length === 0) {
    return (
      <Box flexDirection="column">
        {sourceLines}
        <Text color={theme.muted}>{fitCell(t(lang, 'ipvs.empty'), width)}</Text>
        <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} />
      </Box>
    );
  }
  const selected = servers[Math.min(cursor, servers.length - 1)];
  const reals = selected?.realServers ?? [];
  const note = hasUnread(servers) ? 1 : 0;
  const fixed = source.length + 1 + 1 + 1 + note + diagnosticsHeight(data.diagnostics); // source, VS header, title, RS header
  const rsHeight = Math.min(Math.max(reals.length, 1), Math.max(2, Math.floor((height - fixed) / 3)));
  const vsHeight = Math.max(1, height - fixed - rsHeight);
  const vsStart = windowStart(servers.length, cursor, vsHeight);
  const vsRows: TableRow[] = servers.slice(vsStart, vsStart + vsHeight).map((v, i) => ({
    key: `${vsStart + i}`,
    cells: vsCells(v, lang, wide),
    ...(v.realServers.length === 0 ? { color: 'warn' as const } : {}),
  }));
  const rsRows: TableRow[] = reals.map((r, i) => ({ key: `${i}`, cells: rsCells(r, wide), ...(r.weight === 0 ? { color: 'warn' as const } : {}) }));
  const title = selected ? tf(lang, 'ipvs.title', { service: selected.service.replace(/ +/, ' '), scheduler: selected.scheduler ?? t(lang, 'ipvs.noScheduler'), count: reals.length }) : '';
  return (
    <Box flexDirection="column">
      {sourceLines}
      <Table columns={vsColumns(lang, wide)} rows={vsRows} cursor={cursor - vsStart} width={width} height={vsHeight} focused={focused} />
      <Text bold color={theme.accent}>
        {fitCell(title, width)}
      </Text>
      {selected && reals.length === 0 ? (
        <Text color={theme.warn}>{fitCell(t(lang, 'ipvs.noReal'), width)}</Text>
      ) : (
        <Table columns={rsColumns(lang, wide)} rows={rsRows} cursor={-1} width={width} height={rsHeight} focused={false} sortable={false} />
      )}
      {note ? <Text color={theme.muted}>{fitCell(t(lang, 'ipvs.countersNote'), width)}</Text> : null}
      <Diagnostics diagnostics={data.diagnostics} width={width} lang={lang} />
    </Box>
  );
}

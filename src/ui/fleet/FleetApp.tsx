/**
 * `nodescope --fleet DIR`: the fleet matrix, and from a cell the node's usual panes on that
 * Service (the single-node App over that node's bundle, the Service pinned and the Services
 * pane filtered to it); Esc with nothing left to close there returns to the matrix.
 */
import { useApp, useInput, useStdout } from 'ink';
import React, { useCallback, useRef, useState } from 'react';
import type { SessionLike } from '../../collect/session.js';
import type { FleetDiagnosis } from '../../fleet/diagnose.js';
import { tf, type Lang } from '../../text/i18n.js';
import { App } from '../App.js';
import { initialUiState, type UiState } from '../state.js';
import { matrixColumns } from './fleet-matrix.js';
import { FleetMatrixPane } from './FleetMatrixPane.js';

/** A node opened from the matrix: its session, and how to end it. */
export interface OpenedNode {
  readonly session: SessionLike;
  stop(): Promise<void>;
}

/** Props of {@link FleetApp}. `openNode` opens a captured node's bundle (throws when it cannot). */
export interface FleetAppProps {
  readonly data: FleetDiagnosis;
  readonly dir: string;
  readonly lang: Lang;
  readonly openNode: (node: string) => Promise<OpenedNode>;
  readonly width?: number;
  readonly height?: number;
  readonly onQuit?: () => void;
}

/** The UI state a node opens with: the Service pinned, the Services pane filtered to its name. */
export function nodeUiState(service: string): UiState {
  const name = service.slice(service.indexOf('/') + 1);
  return { ...initialUiState, pinnedService: service, selectedService: service, filters: { ...initialUiState.filters, services: name } };
}

/** The fleet TUI. */
export function FleetApp({ data, dir, lang, openNode, width: forcedWidth, height: forcedHeight, onQuit }: FleetAppProps): React.JSX.Element {
  const { stdout } = useStdout();
  const { exit } = useApp();
  const width = forcedWidth ?? stdout.columns ?? 80;
  const height = forcedHeight ?? stdout.rows ?? 24;
  const columns = matrixColumns(data);
  const [cursor, setCursor] = useState({ row: 0, col: 0 });
  const [notice, setNotice] = useState<string | null>(null);
  const [opened, setOpened] = useState<{ node: string; service: string; node_: OpenedNode } | null>(null);
  const cursorRef = useRef(cursor);
  cursorRef.current = cursor;

  const back = useCallback(() => {
    const was = opened;
    setOpened(null);
    void was?.node_.stop();
  }, [opened]);

  useInput(
    (input, key) => {
      const c = cursorRef.current;
      const move = (row: number, col: number) => setCursor({ row: Math.max(0, Math.min(data.services.length - 1, row)), col: Math.max(0, Math.min(columns.length - 1, col)) });
      if (input === 'q' || (key.ctrl && input === 'c')) {
        onQuit?.();
        exit();
      } else if (key.upArrow || input === 'k') move(c.row - 1, c.col);
      else if (key.downArrow || input === 'j') move(c.row + 1, c.col);
      else if (key.leftArrow || input === 'h') move(c.row, c.col - 1);
      else if (key.rightArrow || input === 'l') move(c.row, c.col + 1);
      else if (key.return) {
        const row = data.services[c.row];
        const col = columns[c.col];
        if (!row || !col || col.failed) return;
        const service = `${row.namespace}/${row.name}`;
        setNotice(tf(lang, 'fleet.opening', { node: col.node }));
        openNode(col.node).then(
          (node_) => {
            setNotice(null);
            setOpened({ node: col.node, service, node_ });
          },
          (e: unknown) => setNotice(`${col.node}: ${(e as Error).message}`),
        );
      }
    },
    { isActive: opened === null },
  );

  if (opened) {
    return <App key={`${opened.node} ${opened.service}`} session={opened.node_.session} lang={lang} width={width} height={height} initialState={nodeUiState(opened.service)} onBack={back} {...(onQuit ? { onQuit } : {})} />;
  }
  return <FleetMatrixPane data={data} dir={dir} cursor={cursor} width={width} height={height} lang={lang} notice={notice} />;
}

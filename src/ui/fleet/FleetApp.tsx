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
import type { NodeSnapshot } from '../../model/snapshot.js';
import { initialUiState, type UiState } from '../state.js';
import { servicesView } from '../views.js';
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

/**
 * The UI state a node opens with: the Service pinned (Conntrack, DNS, Modes show it) and the
 * Services cursor on its row (`snapshot`: the node's first snapshot, null while loading).
 */
export function nodeUiState(service: string, snapshot: NodeSnapshot | null): UiState {
  const rows = servicesView(snapshot, '').rows ?? [];
  const at = rows.findIndex((r) => `${r.namespace}/${r.name}` === service);
  return { ...initialUiState, pinnedService: service, selectedService: service, cursors: { ...initialUiState.cursors, services: Math.max(0, at) } };
}

/** Resolves with the session's first snapshot (or null after `ms`: the App then shows it loading). */
function firstSnapshot(session: SessionLike, ms = 10_000): Promise<NodeSnapshot | null> {
  const now = session.getState().snapshot;
  if (now) return Promise.resolve(now);
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(null), ms);
    const off = session.subscribe(() => {
      const s = session.getState().snapshot;
      if (s) done(s);
    });
    function done(s: NodeSnapshot | null) {
      clearTimeout(timer);
      off();
      resolve(s);
    }
  });
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
  const [opened, setOpened] = useState<{ node: string; service: string; node_: OpenedNode; ui: UiState } | null>(null);
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
          async (node_) => {
            const ui = nodeUiState(service, await firstSnapshot(node_.session));
            setNotice(null);
            setOpened({ node: col.node, service, node_, ui });
          },
          (e: unknown) => setNotice(`${col.node}: ${(e as Error).message}`),
        );
      }
    },
    { isActive: opened === null },
  );

  if (opened) {
    return <App key={`${opened.node} ${opened.service}`} session={opened.node_.session} lang={lang} width={width} height={height} initialState={opened.ui} onBack={back} {...(onQuit ? { onQuit } : {})} />;
  }
  return <FleetMatrixPane data={data} dir={dir} cursor={cursor} width={width} height={height} lang={lang} notice={notice} />;
}

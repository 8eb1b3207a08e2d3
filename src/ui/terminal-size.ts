/**
 * The terminal's size as React state: Ink redraws its last frame on a `resize` of stdout,
 * but components that read `stdout.columns` only see the new size at their next render,
 * which without this hook came with the next key. Listening to `resize` (Node emits it on
 * SIGWINCH for a TTY stream) re-renders the app at once.
 */
import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

/** `{columns, rows}` of stdout (80×24 when the stream does not say), updated on every resize. */
export function useTerminalSize(): { readonly columns: number; readonly rows: number } {
  const { stdout } = useStdout();
  // The size is read at each render (a render for any other reason sees it too); the event only asks for one.
  const [, setResizes] = useState(0);
  useEffect(() => {
    const onResize = () => setResizes((n) => n + 1);
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return { columns: stdout.columns || 80, rows: stdout.rows || 24 };
}

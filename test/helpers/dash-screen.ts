/**
 * `nodescope dash` (src/dash/run.ts, blessed-contrib) drawn on a blessed screen with no
 * terminal behind it: the screen's cell buffer read back as text lines, keys written to its
 * input. For frame tests of the dashboard, which Ink's test renderer cannot draw.
 */
import { PassThrough } from 'node:stream';
import blessed from 'blessed';
import type { SessionLike } from '../../src/collect/session.js';
import { runDash } from '../../src/dash/run.js';
import type { Lang } from '../../src/text/i18n.js';

/** A dashboard on an off-screen terminal of `width` × `height` cells. */
export interface DashScreen {
  /** The screen as text, one line per row (blessed's wide-character filler cells left out). */
  frame(): string;
  /** Writes `keys` to the screen's input and waits for the redraw. */
  press(keys: string): Promise<void>;
  /** Quits the dashboard (as `q`) and waits for it to end. */
  close(): Promise<void>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens the dashboard of `service` over `session` in `lang`; resolves once it has drawn. */
export async function openDash(session: SessionLike, service: string, lang: Lang, width: number, height = 30): Promise<DashScreen> {
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: width, rows: height });
  output.resume();
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined });
  const screen = blessed.screen({ input: input as never, output: output as never, terminal: 'xterm-256color', fullUnicode: true, forceUnicode: true, warnings: false });
  const dash = runDash({ session, service, lang, screen });
  await pause(150);
  const lines = () => (screen as unknown as { lines: [number, string][][] }).lines;
  return {
    frame: () => lines().map((row) => row.map((cell) => cell[1]).filter((ch) => ch !== '\x03').join('')).join('\n'),
    press: async (keys: string) => {
      input.write(keys);
      await pause(80);
    },
    close: async () => {
      dash.stop();
      await dash.done;
    },
  };
}

/**
 * The one frame helper every UI test goes through (CONVENTIONS.md §9): renders an Ink
 * element with ink-testing-library, pins the terminal width (ink-testing-library's
 * fake stdout always says 100 columns), wraps the renders in React's `act`, and
 * returns frames as plain text (ANSI stripped, trailing blanks of each line removed).
 */
import { act, type ReactElement } from 'react';
import { render } from 'ink-testing-library';
import stripAnsi from 'strip-ansi';

// React warns about updates outside act() unless the environment says it is a test.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

/** A rendered element: its current frame as text, and ways to update or end it. */
export interface RenderedFrame {
  /** The last frame, ANSI stripped, with trailing spaces of each line removed. */
  frame(): string;
  /** Renders `element` in place of the current one and returns the new frame. */
  rerender(element: ReactElement): string;
  unmount(): void;
}

/** Plain text of an Ink frame: ANSI codes stripped, trailing blanks of every line cut. */
export function plainFrame(frame: string | undefined): string {
  return stripAnsi(frame ?? '')
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .join('\n');
}

/**
 * Renders `element` on a terminal `width` columns wide (80 and 120 in the frame tests).
 * The first render happens at the library's fixed 100 columns; the helper then sets the
 * width and renders again, so every frame it returns has the pinned width.
 */
export function renderAt(element: ReactElement, width: number): RenderedFrame {
  let instance!: ReturnType<typeof render>;
  act(() => {
    instance = render(element);
  });
  Object.defineProperty(instance.stdout, 'columns', { value: width, configurable: true });
  act(() => {
    instance.rerender(element);
  });
  return {
    frame: () => plainFrame(instance.lastFrame()),
    rerender(next: ReactElement): string {
      act(() => {
        instance.rerender(next);
      });
      return plainFrame(instance.lastFrame());
    },
    unmount(): void {
      act(() => {
        instance.unmount();
      });
    },
  };
}


/** The widths every frame test renders at (columns). */
export const FRAME_WIDTHS = [80, 120] as const;

/** Key sequences as a terminal sends them (xterm / VT100). */
export const KEYS = {
  up: '\u001B[A',
  down: '\u001B[B',
  pageUp: '\u001B[5~',
  pageDown: '\u001B[6~',
  enter: '\r',
  escape: '\u001B',
  tab: '\t',
  backspace: '\u007F',
} as const;

/** A rendered app whose key handling needs the event loop between keys. */
export interface RenderedApp {
  frame(): string;
  /** Types keys one by one, letting Ink's input handler and React settle after each. */
  press(...keys: string[]): Promise<void>;
  unmount(): void;
}

const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

/**
 * Like {@link renderAt}, for trees with `useInput` (the whole App): Ink reads stdin
 * asynchronously, so each key is followed by a short settle inside `act`. The
 * terminal is `width` × `height`.
 */
export async function renderApp(element: ReactElement, width: number, height = 24): Promise<RenderedApp> {
  let instance!: ReturnType<typeof render>;
  await act(async () => {
    instance = render(element);
    Object.defineProperty(instance.stdout, 'columns', { value: width, configurable: true });
    Object.defineProperty(instance.stdout, 'rows', { value: height, configurable: true });
    instance.rerender(element);
    await settle();
  });
  return {
    frame: () => plainFrame(instance.lastFrame()),
    press: async (...keys: string[]) => {
      for (const k of keys) {
        await act(async () => {
          instance.stdin.write(k);
          await settle();
        });
      }
    },
    unmount: () => act(() => instance.unmount()),
  };
}

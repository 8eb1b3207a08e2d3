/**
 * An error of the node lab tool (`npm run lab`) its user can act on; `hint` says what to
 * try. Not nodescope's `UserError` (src/errors.ts), whose messages are keys with a
 * Japanese text: the lab is a developer's tool and speaks English.
 */
export class LabError extends Error {
  override readonly name = 'LabError';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

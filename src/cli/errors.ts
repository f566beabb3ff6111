// The CLI's two kinds of failure (D1: a clear one-line error and a non-zero exit).
/** Bad input: wrong arguments, unknown options, malformed values. Exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The command was understood but could not be carried out (no such tenant, host taken, ...). Exit code 1. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** One line, whatever the error carries (stack traces and multi-line driver messages are folded). */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' ').trim() || 'unknown error';
}

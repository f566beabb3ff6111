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
  return describe(error).replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * The real cause, whatever was thrown: an Error's message (or its code / class when the message is empty)
 * with the messages of its causes; a rejection without a value says so instead of printing `undefined`.
 */
function describe(error: unknown, depth = 0): string {
  if (error === undefined || error === null) return 'failed without a reason (a library rejected with no error)';
  if (!(error instanceof Error)) return typeof error === 'string' ? error : JSON.stringify(error) ?? String(error);
  const code = (error as NodeJS.ErrnoException).code;
  let text = error.message.trim() || (code ? `${error.name} ${code}` : error.name);
  if (error instanceof AggregateError && error.errors.length) text += `: ${error.errors.map((e) => describe(e, depth + 1)).join('; ')}`;
  if (error.cause !== undefined && depth < 3) {
    const cause = describe(error.cause, depth + 1);
    if (!text.includes(cause)) text += ` (cause: ${cause})`;
  }
  return text;
}

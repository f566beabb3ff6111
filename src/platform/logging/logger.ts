import { pino, stdSerializers, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { readConfig } from '../config.js';

// Children's data: tokens and personal data never reach the log. Request logs carry method, route,
// status and timing; known sensitive keys are redacted wherever they appear.
export type { Logger };

/**
 * Text that may quote data: PostgreSQL's `detail` (the failing row, a key's value) which MikroORM appends to
 * its messages, the entity MikroORM dumps into a validation error, a value quoted after a colon (`invalid input syntax for type date: "…"`), e-mail addresses
 * and tokens. Identifiers (tables, columns, constraints) stay, so a failure can still be found.
 */
export function scrubText(text: string): string {
  return text
    .replace(/\n? - detail: [^\n]*/g, '')
    .replace(/\nentity: (\w+) \{[\s\S]*?\n\}/g, '\nentity: $1 {…}')
    .replace(/Failing row contains \(.*\)/g, 'Failing row contains (…)')
    .replace(/(Key \((?:[^()\n]|\([^()\n]*\))*\))=\(.*\)/g, '$1=(…)')
    .replace(/hpt_[1-9A-HJ-NP-Za-km-z]+/g, 'hpt_…')
    .replace(/[\p{L}\p{N}._%+'-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu, '…@…')
    .replace(/: "(?:[^"\\\n]|\\.)*"/g, ': "…"');
}

/** Only these fields of an error reach the log; `detail`, `where`, parameters and anything else are left out. */
const ERROR_FIELDS = ['type', 'message', 'stack', 'code', 'severity', 'schema', 'table', 'column', 'constraint', 'routine', 'status', 'statusCode'] as const;

/** The `err` serializer: pino's (class, message and stack with causes), narrowed and scrubbed. */
export function serializeError(err: unknown): unknown {
  const full = stdSerializers.err(err as Error) as unknown as Record<string, unknown>;
  // Not an Error (a thrown string or object): its class and, for a string, the scrubbed text.
  if ((full as unknown) === err || full === null || typeof full !== 'object') {
    return { type: err === null ? 'null' : typeof err, message: typeof err === 'string' ? scrubText(err) : undefined };
  }
  const out: Record<string, unknown> = {};
  for (const k of ERROR_FIELDS) {
    const v = full[k];
    if (v !== undefined) out[k] = typeof v === 'string' ? scrubText(v) : v;
  }
  return out;
}

/** `destination`: stdout unless given (tests capture the log in memory). */
export function createLogger(level: string = readConfig().logLevel, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: undefined,
    serializers: { err: serializeError },
    redact: {
      paths: [
        'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization', 'token', '*.token',
        'email', '*.email', 'firstname', '*.firstname', 'lastname', '*.lastname', 'dateOfBirth', '*.dateOfBirth',
        'phone', '*.phone', 'password', '*.password', 'secret', '*.secret',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export const rootLogger = createLogger();

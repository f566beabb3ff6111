import { pino, type Logger } from 'pino';

// Children's data: tokens and personal data never reach the log. Request logs carry method, route,
// status and timing; known sensitive keys are redacted wherever they appear.
export type { Logger };

export function createLogger(level = process.env.LOG_LEVEL || 'info'): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: [
        'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization', 'token', '*.token',
        'email', '*.email', 'firstname', '*.firstname', 'lastname', '*.lastname', 'dateOfBirth', '*.dateOfBirth',
        'phone', '*.phone', 'password', '*.password',
      ],
      censor: '[redacted]',
    },
  });
}

export const rootLogger = createLogger();

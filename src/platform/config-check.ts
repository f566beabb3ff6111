import { ConfigError, readConfig } from './config.js';

// Imported first by the entry points (src/main.ts, src/cli/index.ts), before any module that reads a setting:
// a wrong value stops the process here with one sentence naming the setting, instead of a stack trace from
// wherever it was first read (or a silent default).
try {
  readConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`configuration error: ${err.message}\n`);
  process.exit(2);
}

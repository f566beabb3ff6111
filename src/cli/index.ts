// First: a wrong setting stops the command with one sentence before any module reads it (platform/config.ts).
import '../platform/config-check.js';
import { demoCommand } from './demo.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, oneLine, UsageError } from './errors.js';
import { helpFor, USAGE } from './help.js';
import { configureZod } from '../platform/http/validation.js';
import { mailCommand } from './mail.js';
import { migrateCommand } from './migrate.js';
import { setUpStreams } from './output.js';
import { retentionCommand } from './retention.js';
import { secretsCommand } from './secrets.js';
import { tenantCommand } from './tenant.js';
import { tokenCommand } from './token.js';

// The operator CLI (D1): `npm run --silent cli -- <command>`. Its commands, arguments and output formats are
// a contract driven by outside checks (usage texts: help.ts). stdout carries only a command's output; notes, logs
// and errors go to stderr. Exit codes: 0 done, 1 the command failed, 2 bad usage.
export async function run(argv: string[]): Promise<number> {
  configureZod(); // issue 26: zod's messages set once, before anything parses
  const [command, ...args] = argv;
  if (command === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT_USAGE;
  }
  if (command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    // Issue 24: `tenant suspend --help` prints that command's usage, `tenant --help` the tenant commands.
    process.stdout.write(`${helpFor(argv)}\n`);
    return EXIT_OK;
  }
  try {
    switch (command) {
      case 'migrate':
        await migrateCommand(args);
        break;
      case 'tenant':
        await tenantCommand(args);
        break;
      case 'token':
        await tokenCommand(args);
        break;
      case 'demo':
        await demoCommand(args);
        break;
      case 'retention':
        await retentionCommand(args);
        break;
      case 'mail':
        await mailCommand(args);
        break;
      case 'secrets':
        await secretsCommand(args);
        break;
      default:
        process.stderr.write(`error: unknown command "${command}"\n\n${USAGE}\n`);
        return EXIT_USAGE;
    }
    return EXIT_OK;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${oneLine(error)} (see --help)\n`);
      return EXIT_USAGE;
    }
    process.stderr.write(`error: ${oneLine(error)}\n`);
    return EXIT_FAILURE;
  }
}

setUpStreams();
// Closing the terminal (SIGHUP) or Ctrl-C ends a command like an error would: `exit` hooks still run, so an embedded
// PostgreSQL this command started is stopped (platform/db/embedded-postmaster.ts).
for (const [signal, n] of [['SIGINT', 2], ['SIGTERM', 15], ['SIGHUP', 1]] as const) process.once(signal, () => process.exit(128 + n));
const code = await run(process.argv.slice(2));
// The runtime is closed by now; exit explicitly so a stray handle (a library timer) cannot keep us alive.
process.exit(code);

// First: a wrong setting stops the command with one sentence before any module reads it (platform/config.ts).
import '../platform/config-check.js';
import { demoCommand } from './demo.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, oneLine, UsageError } from './errors.js';
import { mailCommand } from './mail.js';
import { migrateCommand } from './migrate.js';
import { setUpStreams } from './output.js';
import { retentionCommand } from './retention.js';
import { secretsCommand } from './secrets.js';
import { tenantCommand } from './tenant.js';
import { tokenCommand } from './token.js';

// The operator CLI (D1): `npm run --silent cli -- <command>`. Its commands, arguments and output formats are
// a contract driven by outside checks. stdout carries only a command's output; notes, logs and errors go to
// stderr. Exit codes: 0 done, 1 the command failed, 2 bad usage.
export const USAGE = `usage: npm run --silent cli -- <command>

commands:
  migrate
      migrates the control schema and every tenant schema, with progress; prints
      "control: ..." and "tenant <slug>: applied <migration>... | up to date | FAILED: <error>"
  tenant add <slug> --host <hostname>[/<basePath>]... [--name <text>] [--set key=value]...
      registers the tenant, creates and migrates its schema; idempotent for the same arguments.
      A host without a path is an admin host under /api; "<hostname>/" serves the API at the root.
  tenant set <slug> key=value...
      changes settings: publicAccess, organisersEditParticipantLists, organisersTransferParticipants,
      retentionWeeks, offerUrlTemplate, receiptNumberPrefix, mailFrom, contactEmail
  tenant list
      one line per tenant: <slug>\\t<host>[,<host>...]\\t<name>; a host is printed as
      <hostname><basePath> (demo.example/api), or as the bare host name when its base path is /
  tenant remove <slug> --yes
      drops the tenant and its schema with all its data
  tenant sync [--demo]
      applies tenants/*.json (TENANTS_DIR overrides the folder); prints each tenant as "tenant list" does.
      A file marked "demo": true (tenants/demo.json) is applied only with the embedded database, --demo
      or DEMO=1
  token issue <slug> --role admin|organiser [--organiser <alias|uuid>]... [--access read|read-write]
              [--legacy] [--name <text>] [--expires <date>] [--service]
      prints a new token alone on the last line of stdout. --legacy: an old personal token with scope
      api:offer:read; default access read-write; --role organiser needs --organiser; --expires takes a
      date (start of that day, Europe/Berlin) or a timestamp with offset, in the future; --service issues
      it to a service account instead of a person
  token list <slug>
      one line per token: <uuid>\\t<name>\\t<role>\\t<access>\\t<createdAt>\\t<expiresAt or ->\\t<revokedAt or ->
  token revoke <slug> <token-uuid>
  demo [<slug>]
      fills a tenant (default demo; created from tenants/<slug>.json when missing) with demo data
  retention run <slug> [--dry-run]
      pseudonymises the participants whose offers all ended more than retentionWeeks ago and the accounts
      left without a living child (the daily job's run); prints "participant\t<uuid>" and "account\t<uuid>"
      per record (uuids only), then <slug>\t<done|dry-run>\tparticipants=<n>\taccounts=<n>\tapplications=<n>;
      --dry-run changes nothing
  mail list <slug> [--failed] [--limit <n>]
      the tenant's e-mails, newest first: <uuid>\t<kind>\t<sent|waiting|failed>\t<attempts>\t<createdAt>\t
      <sentAt or next attempt or ->\t<last error or -> (no recipients or texts); --failed: given up only
  mail retry <slug> <mail-uuid>|--all-failed
      makes given-up mails due again with a fresh set of attempts; prints <slug>\tretried=<n>
  secrets rotate
      seals every stored secret (webhook signing secrets) again with the current SECRETS_KEY, opening each
      with SECRETS_KEY or a key in SECRETS_KEY_PREVIOUS; prints <slug>\tresealed=<n> per tenant; afterwards
      SECRETS_KEY_PREVIOUS can be removed (docs/operations.md)

environment: DATABASE_URL (unset: the embedded PostgreSQL in .data/pg; a running one, e.g. of npm start,
  is used), TENANTS_DIR, DEMO, LOG_LEVEL, SECRETS_KEY, SECRETS_KEY_PREVIOUS`;

export async function run(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT_USAGE;
  }
  if (command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
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
const code = await run(process.argv.slice(2));
// The runtime is closed by now; exit explicitly so a stray handle (a library timer) cannot keep us alive.
process.exit(code);

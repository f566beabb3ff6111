// The operator CLI's usage texts (D1): one entry per command, so `<command> --help` prints its own (issue 24)
// and `--help` alone prints them all. The synopses are the contract the outside checks drive; extend, never rename.

type Command = { name: string; synopsis: string; text: string };

export const COMMANDS: Command[] = [
  {
    name: 'migrate', synopsis: 'migrate',
    text: `migrates the control schema and every tenant schema, with progress; prints
"control: ..." and "tenant <slug>: applied <migration>... | up to date | FAILED: <error>"`,
  },
  {
    name: 'tenant add', synopsis: 'tenant add <slug> --host <hostname>[/<basePath>]... [--name <text>] [--set key=value]...',
    text: `registers the tenant, creates and migrates its schema; idempotent for the same arguments.
A host without a path is an admin host under /api; "<hostname>/" serves the API at the root.`,
  },
  {
    name: 'tenant set', synopsis: 'tenant set <slug> key=value...',
    text: `changes settings: publicAccess, organisersEditParticipantLists, organisersTransferParticipants,
retentionWeeks, offerUrlTemplate, receiptNumberPrefix, mailFrom, contactEmail,
confirmationUrlTemplate, consentUrlTemplate`,
  },
  {
    name: 'tenant list', synopsis: 'tenant list [--json]',
    text: `one line per tenant: <slug>\\t<host>[,<host>...]\\t<name>. Each host is printed as --host takes it: the
bare name for an admin host (API below /api), "<hostname>/" for a separate API domain (API at the root),
"<hostname><basePath>" for any other base path. --json: an array of {slug, name, schema, hosts, suspended}`,
  },
  {
    name: 'tenant show', synopsis: 'tenant show <slug> [--json]',
    text: `one municipality at a glance: hosts, settings, suspension, schema version, counts of editions,
offers, organisers, families, participants, applications and tokens, the mail backlog, webhooks, and its
last activity (newest event, change, or token use to the hour). --json: the same as one object`,
  },
  {
    name: 'tenant suspend', synopsis: 'tenant suspend <slug> [--reason <text>]',
    text: `suspends a municipality without losing anything: within seconds every request to its hosts is
answered 503 with a sentence (naming --reason, which callers see), and its background jobs, e-mail and
webhooks wait. Its data, tokens and hosts are kept; "tenant resume" brings it back`,
  },
  {
    name: 'tenant resume', synopsis: 'tenant resume <slug>',
    text: 'ends a suspension: the API answers again within seconds; waiting jobs and mail run within a minute or two',
  },
  {
    name: 'tenant host add', synopsis: 'tenant host add <slug> <hostname>[/<basePath>]',
    text: `adds a host (an admin host under /api without a path, "<hostname>/" for an API domain); refused when
another tenant has it. A tenant declared in tenants/*.json gets its file's hosts back at the next sync or start`,
  },
  {
    name: 'tenant host remove', synopsis: 'tenant host remove <slug> <hostname>',
    text: 'removes one host of a tenant (a tenant keeps at least one)',
  },
  {
    name: 'tenant export', synopsis: 'tenant export <slug> <file>',
    text: `writes the municipality into one portable, versioned archive (gzip'd JSON lines): its registry entry
(name, hosts, settings), every row of every table of its schema (files and tokens included: tokens keep
working after an import) and its schema version. Suspend it first for a consistent move (the export reads
one snapshot either way). Use "-" as <file> for stdout`,
  },
  {
    name: 'tenant import', synopsis: 'tenant import <file> [--slug <new-slug>] [--host <hostname>[/<basePath>]]... [--name <text>]',
    text: `recreates an exported municipality in this deployment: registers it (under --slug, with the --host
list instead of the archive's hosts, with --name), creates its schema at the archive's version, loads every
row and migrates it to this deployment's version. Refused, changing nothing, for an archive of a newer
schema version than this deployment knows, or a slug or host already taken here`,
  },
  {
    name: 'tenant remove', synopsis: 'tenant remove <slug> --yes',
    text: 'drops the tenant and its schema with all its data (tenant export keeps a copy)',
  },
  {
    name: 'tenant sync', synopsis: 'tenant sync [--demo]',
    text: `applies tenants/*.json (TENANTS_DIR overrides the folder); prints each tenant as "tenant list" does.
A file marked "demo": true (tenants/demo.json) is applied only with the embedded database, --demo
or DEMO=1`,
  },
  {
    name: 'token issue',
    synopsis: `token issue <slug> --role admin|organiser|website [--organiser <alias|uuid>]... [--access read|read-write]
            [--legacy] [--name <text>] [--expires <date>] [--service] [--rate <requests per minute>]`,
    text: `prints a new token alone on the last line of stdout. --legacy: an old personal token with scope
api:offer:read; default access read-write; --role organiser needs --organiser; --expires takes a
date (start of that day, Europe/Berlin) or a timestamp with offset, in the future; --service issues
it to a service account instead of a person. --role website: the municipality's public website
(a service account): public reads, family applications, confirmations, consents and answer files.
--rate: the token's own limit, refilled per minute (default 100; the bucket holds three minutes)`,
  },
  {
    name: 'token list', synopsis: 'token list <slug> [--json]',
    text: `one line per token: <uuid>\\t<name>\\t<role>\\t<access>\\t<createdAt>\\t<expiresAt or ->\\t<revokedAt or ->
\\t<organisers or ->\\t<lastUsedAt or ->\\t<requests per minute>; organisers are the aliases of the organisers
the token is bound to (comma-separated), lastUsedAt the hour of its last use, then its rate limit. --json: an
array of objects with the organisers' uuid, name and alias`,
  },
  { name: 'token revoke', synopsis: 'token revoke <slug> <token-uuid>', text: 'the token is refused (401) at once by every process' },
  {
    name: 'demo', synopsis: 'demo [<slug>]',
    text: 'fills a tenant (default demo; created from tenants/<slug>.json when missing) with demo data',
  },
  {
    name: 'retention run', synopsis: 'retention run <slug> [--dry-run]',
    text: `pseudonymises the participants whose offers all ended more than retentionWeeks ago and the accounts
left without a living child (the daily job's run); prints "participant\\t<uuid>" and "account\\t<uuid>"
per record (uuids only), then <slug>\\t<done|dry-run>\\tparticipants=<n>\\taccounts=<n>\\tapplications=<n>;
--dry-run changes nothing`,
  },
  {
    name: 'mail list', synopsis: 'mail list <slug> [--failed] [--limit <n>] [--json]',
    text: `the tenant's e-mails, newest first: <uuid>\\t<kind>\\t<sent|waiting|failed>\\t<attempts>\\t<createdAt>\\t
<sentAt or next attempt or ->\\t<last error or -> (no recipients or texts); --failed: given up only;
--json: an array of objects`,
  },
  {
    name: 'mail retry', synopsis: 'mail retry <slug> <mail-uuid>|--all-failed',
    text: 'makes given-up mails due again with a fresh set of attempts; prints <slug>\\tretried=<n>',
  },
  {
    name: 'secrets rotate', synopsis: 'secrets rotate',
    text: `seals every stored secret (webhook signing secrets) again with the current SECRETS_KEY, opening each
with SECRETS_KEY or a key in SECRETS_KEY_PREVIOUS; prints <slug>\\tresealed=<n> per tenant; afterwards
SECRETS_KEY_PREVIOUS can be removed (docs/operations.md)`,
  },
];

const PREFIX = 'usage: npm run --silent cli -- ';
const ENVIRONMENT = `environment: DATABASE_URL (unset: the embedded PostgreSQL in .data/pg; a running one, e.g. of npm start,
  is used), EMBEDDED_PG_PORT, TENANTS_DIR, DEMO, LOG_LEVEL, SECRETS_KEY, SECRETS_KEY_PREVIOUS`;

const indent = (text: string, by: string) => text.split('\n').map((l) => by + l).join('\n');

function entry(c: Command): string {
  return `  ${c.synopsis}\n${indent(c.text, '      ')}`;
}

export const USAGE = `${PREFIX}<command>

commands:
${COMMANDS.map(entry).join('\n')}

each command's own usage: <command> --help (e.g. tenant suspend --help)

${ENVIRONMENT}`;

/**
 * The help for what was typed before `--help`: the longest run of leading words that names a command prints
 * that command's usage; one that begins some commands (`tenant`, `tenant host`) prints those; else everything.
 */
export function helpFor(argv: string[]): string {
  const words = argv.filter((a) => a !== '--help' && a !== '-h' && a !== 'help');
  const leading: string[] = [];
  for (const w of words) {
    if (w.startsWith('-')) break;
    leading.push(w);
  }
  for (let n = leading.length; n > 0; n--) {
    const name = leading.slice(0, n).join(' ');
    const exact = COMMANDS.find((c) => c.name === name);
    if (exact) return `${PREFIX}${exact.synopsis}\n\n${exact.text}`;
    const group = COMMANDS.filter((c) => c.name.startsWith(`${name} `));
    if (group.length) return `${PREFIX}<command>\n\n${name} commands:\n${group.map(entry).join('\n')}`;
  }
  return USAGE;
}

/** The synopsis of one command, for usage errors. */
export function synopsis(name: string): string {
  const c = COMMANDS.find((x) => x.name === name);
  if (!c) throw new Error(`no command "${name}"`);
  return c.synopsis.replace(/\s*\n\s*/g, ' ');
}

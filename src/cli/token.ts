import { DateTime } from 'luxon';
import type { TokenAccess, TokenRecord, TokenRole } from '../platform/auth/tokens.js';
import type { Executor } from '../platform/db/sql.js';
import { formatTimestamp, parseDate, parseTimestamp, ZONE } from '../platform/http/dates.js';
import { parseId } from '../platform/http/ids.js';
import { expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { CommandError, UsageError } from './errors.js';
import { synopsis } from './help.js';
import { field, note, out, outJson } from './output.js';
import { requireTenant, withRuntime } from './runtime.js';

// `token issue|list|revoke` (D1, D3). A token is printed once, alone on the last line of stdout, and nowhere else.

const ISSUE =
  'token issue <slug> --role admin|organiser|website [--organiser <alias|uuid>]... [--access read|read-write] [--legacy] [--name <text>] [--expires <date>] [--service] [--rate <requests per minute>]';

/** D3's refill rate, which a token without `--rate` keeps (shown by `token list`). */
export const DEFAULT_RATE_PER_MINUTE = 100;

/** `--rate`: a whole number of requests per minute, 1..1000000 (issue 21: a token's own limit). */
export function parseRate(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000) {
    throw new UsageError(`--rate "${value}": a whole number of requests per minute, 1 to 1000000`);
  }
  return Number(value);
}

/**
 * `--expires`: a date (`2027-08-31`, meaning the start of that day in Berlin, as date filters read it, D10) or
 * a timestamp with an offset. It must lie in the future.
 */
export function parseExpires(value: string, now = new Date()): Date {
  const day = parseDate(value);
  const at = day ? DateTime.fromISO(day, { zone: ZONE }).toJSDate() : parseTimestamp(value);
  if (!at) throw new UsageError(`--expires "${value}": use a date (YYYY-MM-DD) or a timestamp with offset (2027-08-31T18:00:00+02:00)`);
  if (at.getTime() <= now.getTime()) throw new UsageError(`--expires "${value}" is not in the future`);
  return at;
}

/** An organiser of the tenant by alias, UUID or base58 id. */
async function findOrganiser(db: Executor, schema: string, ref: string): Promise<string | null> {
  const { inSchema, sql } = await import('../platform/db/sql.js');
  const id = parseId(ref);
  const row = await inSchema(db, schema).selectFrom('organisers').select('uuid')
    .where((eb) => (id ? eb.or([eb('alias', '=', ref.toLowerCase()), eb('uuid', '=', id)]) : eb('alias', '=', ref.toLowerCase())))
    .orderBy(sql`(uuid = ${id ?? null}::uuid)`, (ob) => ob.desc().nullsLast()).limit(1)
    .executeTakeFirst();
  return row?.uuid ?? null;
}

async function issue(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('token issue', args, {
    role: { type: 'string' },
    organiser: { type: 'string', multiple: true },
    access: { type: 'string' },
    legacy: { type: 'boolean' },
    name: { type: 'string' },
    expires: { type: 'string' },
    service: { type: 'boolean' },
    rate: { type: 'string' },
  });
  expectPositionals(ISSUE, positionals, 1, 1);
  const slug = expectSlug(positionals[0]);
  if (values.role === undefined) throw new UsageError(`token issue needs --role admin|organiser|website: usage: ${ISSUE}`);
  if (values.role !== 'admin' && values.role !== 'organiser' && values.role !== 'website') {
    throw new UsageError(`--role "${values.role}": use admin, organiser or website`);
  }
  const role: TokenRole = values.role;
  // D11: a website token is a service account of the public website; it is no person and no legacy token.
  if (role === 'website' && values.legacy) throw new UsageError('--legacy and --role website exclude each other');
  const ratePerMinute = values.rate === undefined ? null : parseRate(values.rate);
  if (values.access !== undefined && values.access !== 'read' && values.access !== 'read-write') {
    throw new UsageError(`--access "${values.access}": use read or read-write`);
  }
  if (values.legacy && values.access !== undefined) throw new UsageError('--legacy and --access exclude each other (a legacy token reads offers only)');
  if (values.legacy && values.service) throw new UsageError('--legacy and --service exclude each other (a legacy token is a personal token)');
  const access: TokenAccess = values.legacy ? 'legacy' : ((values.access as TokenAccess | undefined) ?? 'read-write');
  const organiserRefs = values.organiser ?? [];
  if (role === 'organiser' && organiserRefs.length === 0) throw new UsageError('--role organiser needs at least one --organiser <alias|uuid>');
  if (role !== 'organiser' && organiserRefs.length > 0) throw new UsageError('--organiser applies to --role organiser only');
  if (organiserRefs.some((r) => !r.trim())) throw new UsageError('--organiser must not be empty');
  const name = values.name?.trim() || `${role} token`;
  if (values.name !== undefined && !values.name.trim()) throw new UsageError('--name must not be empty');
  const expiresAt = values.expires === undefined ? null : parseExpires(values.expires);

  await withRuntime(async ({ db }) => {
    const tenant = await requireTenant(db, slug);
    const organiserIds: string[] = [];
    for (const ref of organiserRefs) {
      const uuid = await findOrganiser(db, tenant.schema, ref.trim());
      if (!uuid) throw new CommandError(`no organiser "${ref}" in tenant "${slug}"`);
      if (!organiserIds.includes(uuid)) organiserIds.push(uuid);
    }
    const ownerKind = values.service || role === 'website' ? 'service' : 'person';
    const { insertToken } = await import('../platform/auth/tokens.js');
    const issued = await insertToken(db, tenant.schema, { name, role, access, ownerKind, organiserIds, expiresAt, ratePerMinute });
    note(
      `issued token ${issued.uuid} on tenant "${slug}": ${role}, ${access}, ${ownerKind}` +
        (organiserIds.length ? `, organisers ${organiserIds.join(',')}` : '') +
        `, ${ratePerMinute ?? DEFAULT_RATE_PER_MINUTE} requests per minute` +
        (expiresAt ? `, expires ${formatTimestamp(expiresAt)}` : '') +
        '. It is shown once; store it now.',
    );
    await out(issued.token);
  });
}

/**
 * `<uuid>\t<name>\t<role>\t<access>\t<createdAt>\t<expiresAt or ->\t<revokedAt or ->` (D10), extended (issue 24) by
 * `\t<organisers' aliases or ->\t<lastUsedAt or ->` (the hour of the last use) and (issue 21)
 * `\t<requests per minute>` (the token's rate limit: D3's 100 unless issued with `--rate`).
 */
export function tokenLine(t: TokenRecord): string {
  return [
    t.uuid, field(t.name), t.role, t.access, formatTimestamp(t.createdAt) ?? '-', formatTimestamp(t.expiresAt) ?? '-', formatTimestamp(t.revokedAt) ?? '-',
    field(t.organisers.map((o) => o.alias).join(',')), formatTimestamp(t.lastUsedAt) ?? '-',
    String(t.ratePerMinute ?? DEFAULT_RATE_PER_MINUTE),
  ].join('\t');
}

/** A token as `token list --json` prints it (never its secret: only the hash is stored). */
export function tokenJson(t: TokenRecord) {
  return {
    uuid: t.uuid, name: t.name, role: t.role, access: t.access, ownerKind: t.ownerKind, organisers: t.organisers,
    createdAt: formatTimestamp(t.createdAt) ?? null, expiresAt: formatTimestamp(t.expiresAt) ?? null,
    revokedAt: formatTimestamp(t.revokedAt) ?? null, lastUsedAt: formatTimestamp(t.lastUsedAt) ?? null,
    ratePerMinute: t.ratePerMinute ?? DEFAULT_RATE_PER_MINUTE,
  };
}

async function list(args: string[]): Promise<void> {
  const { values, positionals } = parseCommandArgs('token list', args, { json: { type: 'boolean' } });
  expectPositionals(synopsis('token list'), positionals, 1, 1);
  const slug = expectSlug(positionals[0]);
  await withRuntime(async ({ db }) => {
    const tenant = await requireTenant(db, slug);
    const { listTokens } = await import('../platform/auth/tokens.js');
    const tokens = await listTokens(db, tenant.schema);
    if (values.json) return outJson(tokens.map(tokenJson));
    for (const t of tokens) await out(tokenLine(t));
  });
}

async function revoke(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('token revoke', args, {});
  expectPositionals('token revoke <slug> <token-uuid>', positionals, 2, 2);
  const slug = expectSlug(positionals[0]);
  const uuid = parseId(positionals[1]);
  if (!uuid) throw new UsageError(`"${positionals[1]}" is not a token uuid`);
  await withRuntime(async ({ db }) => {
    const tenant = await requireTenant(db, slug);
    const { revokeToken } = await import('../platform/auth/tokens.js');
    if (!(await revokeToken(db, tenant.schema, uuid))) throw new CommandError(`no token ${uuid} in tenant "${slug}"`);
    note(`revoked token ${uuid} on tenant "${slug}"`);
  });
}

export async function tokenCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'issue':
      return issue(rest);
    case 'list':
      return list(rest);
    case 'revoke':
      return revoke(rest);
    case undefined:
      throw new UsageError('token needs a subcommand: issue, list or revoke');
    default:
      throw new UsageError(`unknown command "token ${sub}": use issue, list or revoke`);
  }
}

import { tenantMigrations } from '../../../migrations/index.js';
import { sql, tablesOf, type Executor } from '../db/sql.js';
import { formatTimestamp } from '../http/dates.js';
import { appliedMigrations } from './versions.js';
import { formatHostArgument, type Tenant } from './tenant.js';

// Issue 24: one municipality at a glance (`tenant show <slug>`): its registry entry, the schema version, how much
// it holds, its mail backlog, its webhooks and when it was last used. Read in one statement over its schema, so
// it is cheap enough to run for a hundred municipalities in a loop.

export type TenantOverview = {
  slug: string;
  name: string;
  schema: string;
  hosts: { host: string; basePath: string; argument: string }[];
  settings: Tenant['settings'];
  suspended: { since: string; reason: string | null } | null;
  schemaVersion: { current: string | null; applied: number; expected: number; upToDate: boolean };
  counts: { editions: number; offers: number; organisers: number; families: number; participants: number; applications: number; tokens: number };
  mail: { waiting: number; failed: number; oldestWaitingSince: string | null };
  webhooks: { enabled: number; disabled: number; failing: number };
  /** The newest of: an event, a change to an application, offer or family, a token's use (to the hour). */
  lastActivity: string | null;
};

type Counts = {
  editions: number; offers: number; organisers: number; families: number; participants: number; applications: number; tokens: number;
  mail_waiting: number; mail_failed: number; mail_oldest: string | null;
  hooks_enabled: number; hooks_disabled: number; hooks_failing: number; last_activity: string | null;
};

export async function tenantOverview(db: Executor, tenant: Tenant): Promise<TenantOverview> {
  const t = tablesOf(tenant.schema);
  const applied = (await appliedMigrations(db, [tenant.schema])).get(tenant.schema) ?? [];
  const names = new Set(applied.map((n) => n.replace(/\.[jt]s$/, '')));
  const current = [...tenantMigrations].reverse().find((m) => names.has(m.name))?.name ?? null;
  const counts = names.size === 0 ? null : (await sql<Counts>`
    select
      (select count(*)::int from ${t('editions')}) as editions,
      (select count(*)::int from ${t('offers')}) as offers,
      (select count(*)::int from ${t('organisers')}) as organisers,
      (select count(*)::int from ${t('accounts')}) as families,
      (select count(*)::int from ${t('participants')}) as participants,
      (select count(*)::int from ${t('attendances')}) as applications,
      (select count(*)::int from ${t('api_tokens')} where revoked_at is null) as tokens,
      (select count(*)::int from ${t('outbox')} where sent_at is null and failed_at is null) as mail_waiting,
      (select count(*)::int from ${t('outbox')} where sent_at is null and failed_at is not null) as mail_failed,
      (select min(created_at) from ${t('outbox')} where sent_at is null and failed_at is null) as mail_oldest,
      (select count(*)::int from ${t('webhooks')} where enabled) as hooks_enabled,
      (select count(*)::int from ${t('webhooks')} where not enabled) as hooks_disabled,
      (select count(*)::int from ${t('webhooks')} where enabled and failing_since is not null) as hooks_failing,
      greatest(
        (select max(occurred_at) from ${t('event')}),
        (select max(modified_at) from ${t('attendances')}),
        (select max(modified_at) from ${t('offers')}),
        (select max(modified_at) from ${t('accounts')}),
        (select max(last_used_at) from ${t('api_tokens')})
      ) as last_activity`.execute(db)).rows[0];
  return {
    slug: tenant.slug,
    name: tenant.name,
    schema: tenant.schema,
    hosts: tenant.hosts.map((h) => ({ ...h, argument: formatHostArgument(h) })),
    settings: tenant.settings,
    suspended: tenant.suspended ? { since: formatTimestamp(tenant.suspended.since)!, reason: tenant.suspended.reason } : null,
    schemaVersion: { current, applied: names.size, expected: tenantMigrations.length, upToDate: tenantMigrations.every((m) => names.has(m.name)) },
    counts: {
      editions: counts?.editions ?? 0, offers: counts?.offers ?? 0, organisers: counts?.organisers ?? 0, families: counts?.families ?? 0,
      participants: counts?.participants ?? 0, applications: counts?.applications ?? 0, tokens: counts?.tokens ?? 0,
    },
    mail: { waiting: counts?.mail_waiting ?? 0, failed: counts?.mail_failed ?? 0, oldestWaitingSince: formatTimestamp(counts?.mail_oldest ?? null) ?? null },
    webhooks: { enabled: counts?.hooks_enabled ?? 0, disabled: counts?.hooks_disabled ?? 0, failing: counts?.hooks_failing ?? 0 },
    lastActivity: formatTimestamp(counts?.last_activity ?? null) ?? null,
  };
}

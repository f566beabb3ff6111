import { sql, tablesOf, unionAll, type Executor } from '../../platform/db/sql.js';
import type { Tenant } from '../../platform/tenancy/tenant.js';

// What of a tenant's webhooks is due (issue 14): the condition a delivery run claims by, when the next run is
// needed, and the safety net's check over every tenant. Raw SQL: row-value comparisons on (xid8, bigint) under
// the feed's visibility rule, a lateral look-up per subscription, a union over schemas.

/** A subscription `s` with work: a pending redelivery, or (when its backoff is over) a visible event after its cursor. */
export const hasWork = (t: ReturnType<typeof tablesOf>) => sql`(
  exists (select 1 from ${t('webhook_deliveries')} d where d.webhook_uuid = s.uuid and d.state = 'pending')
  or (s.next_attempt_at <= now() and exists (select 1 from ${t('event')} e
    where e.tx < pg_snapshot_xmin(pg_current_snapshot()) and (e.tx, e.id) > (s.cursor_tx, s.cursor_id)
      and (s.events is null or e.type = any(s.events)))))`;

/**
 * When the tenant's webhooks next have something due that no job may be on its way for: an enabled
 * subscription with an event after its cursor waits for its backoff or for a lease to run out (the earliest of
 * those), or an event is committed but not yet visible (a second from now). Null when nothing waits.
 */
export async function nextDue(db: Executor, schema: string): Promise<Date | null> {
  const t = tablesOf(schema);
  const res = await sql<{ due: Date | string | null }>`
    select min(case
        when e.tx >= pg_snapshot_xmin(pg_current_snapshot()) then now() + interval '1 second'
        else greatest(s.next_attempt_at, coalesce(s.lease_until, s.next_attempt_at)) end) as due
    from ${t('webhooks')} s
    cross join lateral (select e.tx from ${t('event')} e
      where (e.tx, e.id) > (s.cursor_tx, s.cursor_id) and (s.events is null or e.type = any(s.events))
      order by e.tx, e.id limit 1) e
    where s.enabled`.execute(db);
  const due = res.rows[0]?.due;
  return due ? new Date(due) : null;
}

/** The safety net's one query (every minute): which of these tenants have webhook work due now. */
export async function tenantsWithDueWebhooks(db: Executor, tenants: Pick<Tenant, 'slug' | 'schema'>[]): Promise<string[]> {
  const due = await unionAll<Pick<Tenant, 'slug' | 'schema'>, { slug: string }>(db, tenants, (t) =>
    sql`select ${t.slug}::text as slug
    where exists (select 1 from ${tablesOf(t.schema)('webhooks')} s
      where s.enabled and (s.lease_until is null or s.lease_until < now()) and ${hasWork(tablesOf(t.schema))})`,
  );
  return due.map((r) => r.slug);
}

import type { Selectable } from 'kysely';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { likePattern } from '../../platform/db/search.js';
import { inSchema, sql, tablesOf, type TenantDB, type TenantExecutor } from '../../platform/db/sql.js';
import { tenantDb } from '../../platform/db/tenant.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { listTotal, reportTotal } from '../../platform/http/paging.js';
import { newUuid } from '../../platform/http/ids.js';
import { assertPatchNotEmpty, wasSent } from '../../platform/http/patch.js';
import { conflict, invalid, notFound, violation } from '../../domain/errors.js';
import { readConfig } from '../../platform/config.js';
import { resolveTarget } from '../../platform/net/outgoing.js';
import { sealSecret } from '../../platform/secrets/box.js';
import { generateSecret } from '../../platform/webhooks/signature.js';
import { wakeWebhookDelivery } from '../../platform/webhooks/wake.js';
import {
  ALL_EVENTS, type CreateWebhookInput, type DeliveryOut, type ListDeliveriesInput, type ListWebhooksInput,
  type UpdateWebhookInput, type WebhookOut, type WebhookWithSecretOut,
} from './schema.js';

// Webhook subscriptions (issue 14): admin only, one municipality's. Reads are projections; writes are single
// statements. The signing secret is made here, returned by create and rotate-secret only, and never logged.
// Delivery is delivery.ts (the `webhook-deliver` job).

/** How long the previous secret still signs after a rotation. */
export const PREVIOUS_SECRET_HOURS = 24;

/** Hosts the operator allows over http and at any address (local receivers, tests): WEBHOOK_ALLOW_HOSTS. */
export function webhookAllowedHosts(): Set<string> {
  return readConfig().webhookAllowHosts;
}

type Row = Pick<Selectable<TenantDB['webhooks']>, 'uuid' | 'url' | 'events' | 'enabled' | 'description' | 'failing_since'
  | 'disabled_at' | 'created_at' | 'modified_at'> & { disabled_reason: 'failing' | null; previous_secret_until: string | null };

/** The previous secrets of rotations that still sign (issue 22: each until its own end), newest last. */
const validPrevious = (col: string) => sql`(select coalesce(jsonb_agg(p order by (p->>'until')::timestamptz), '[]'::jsonb)
  from jsonb_array_elements(${sql.ref(col)}) p where (p->>'until')::timestamptz > now())`;

/** A webhook as read and returned by writes (`previous_secret_until`: when the last previous secret stops signing). */
const COLUMNS = [
  'uuid', 'url', 'events', 'enabled', 'description', 'failing_since', 'disabled_at', 'disabled_reason',
  sql<string | null>`(select max((p->>'until')::timestamptz) from jsonb_array_elements(previous_secrets) p
    where (p->>'until')::timestamptz > now())`.as('previous_secret_until'), 'created_at', 'modified_at',
] as const;

/** At most this many previous secrets sign beside the current one (a burst of rotations drops the oldest). */
const MAX_PREVIOUS_SECRETS = 10;

function toOut(r: Row): WebhookOut {
  return {
    uuid: r.uuid,
    url: r.url,
    events: r.events ?? [ALL_EVENTS],
    enabled: r.enabled,
    description: r.description ?? undefined,
    failingSince: formatTimestamp(r.failing_since),
    disabledAt: formatTimestamp(r.disabled_at),
    disabledReason: r.disabled_reason ?? undefined,
    previousSecretValidUntil: formatTimestamp(r.previous_secret_until),
    createdAt: formatTimestamp(r.created_at)!,
    modifiedAt: formatTimestamp(r.modified_at)!,
  };
}

/** `events` as stored: null for every type (also types added later), else the distinct names. */
function storedEvents(events: string[] | null | undefined): string[] | null {
  if (!events || events.includes(ALL_EVENTS)) return null;
  return [...new Set(events)].sort();
}

/** A URL that may receive webhooks (outgoing.ts): 422 on `url` with the reason otherwise. */
async function assertDeliverableUrl(url: string): Promise<void> {
  const checked = await resolveTarget(url, webhookAllowedHosts());
  if (!checked.ok) throw invalid([violation('url', `This URL cannot receive webhooks: ${checked.reason}.`, 'url')]);
}


export async function listWebhooks(ctx: ServiceContext, input: ListWebhooksInput): Promise<WebhookOut[]> {
  const { limit, offset } = pageOf(input);
  const q = input.q ? likePattern(input.q) : null;
  const since = input.modifiedSince?.instant ?? null;
  const query = tenantDb(ctx).selectFrom('webhooks').select([...COLUMNS, listTotal])
    .$if(q !== null, (qb) => qb.where((eb) => eb.or([eb('url', 'ilike', q!), eb('description', 'ilike', q!)])))
    .$if(since !== null, (qb) => qb.where('modified_at', '>=', since!.toISOString()))
    .orderBy('created_at').orderBy('uuid')
    .$narrowType<Row>();
  const rows = await query.limit(limit).offset(offset).execute();
  await reportTotal(ctx, { limit, offset }, rows, () => query.limit(1).execute());
  return rows.map(toOut);
}

async function findOrThrow(db: TenantExecutor, uuid: string, opts: { forUpdate?: boolean } = {}): Promise<Row> {
  const row = await db.selectFrom('webhooks').select(COLUMNS).where('uuid', '=', uuid)
    .$if(!!opts.forUpdate, (qb) => qb.forUpdate())
    .$narrowType<Row>().executeTakeFirst();
  if (!row) throw notFound(`No webhook with the identifier ${uuid} exists.`);
  return row;
}

export async function getWebhook(ctx: ServiceContext, uuid: string): Promise<WebhookOut> {
  return toOut(await findOrThrow(tenantDb(ctx), uuid));
}

export async function createWebhook(ctx: ServiceContext, input: CreateWebhookInput): Promise<WebhookWithSecretOut> {
  await assertDeliverableUrl(input.url);
  const secret = generateSecret();
  // The cursor starts at the oldest transaction still running: every event committed from now on is delivered
  // (and perhaps a few committed just before), none that ended earlier.
  const row = await tenantDb(ctx).insertInto('webhooks').values({
    uuid: newUuid(), url: input.url, events: storedEvents(input.events), enabled: input.enabled ?? true,
    description: input.description ?? null, secret: sealSecret(secret), cursor_tx: sql`pg_snapshot_xmin(pg_current_snapshot())`, cursor_id: 0,
  }).returning(COLUMNS).$narrowType<Row>().executeTakeFirstOrThrow();
  return { ...toOut(row), secret };
}

export async function updateWebhook(ctx: ServiceContext, input: UpdateWebhookInput): Promise<WebhookOut> {
  assertPatchNotEmpty(input);
  return ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const tx = inSchema(db, ctx.tenant.schema);
    const row = await findOrThrow(tx, input.uuid, { forUpdate: true });
    const url = input.url ?? row.url;
    if (input.url != null && input.url !== row.url) await assertDeliverableUrl(input.url);
    const events = input.events != null ? storedEvents(input.events) : row.events;
    const enabled = input.enabled ?? row.enabled;
    const description = wasSent(input, 'description') ? (input.description ?? null) : row.description;
    // A new URL, or switching it on again, starts afresh: no failing streak, the next attempt now. The cursor
    // stays: what happened meanwhile is still delivered, in order.
    const fresh = url !== row.url || (enabled && !row.enabled);
    const updated = await tx.updateTable('webhooks').set({
      url, events, enabled, description, modified_at: sql`now()`,
      ...(fresh ? { attempts: 0, failing_since: null, next_attempt_at: sql`now()` } : {}),
      // Switched off by the admin: disabled now, for no reason of ours; on again: neither.
      ...(enabled ? { disabled_at: null } : row.enabled ? { disabled_at: sql`now()` } : {}),
      ...(enabled || row.enabled ? { disabled_reason: null } : {}),
    }).where('uuid', '=', input.uuid).returning(COLUMNS).$narrowType<Row>().executeTakeFirstOrThrow();
    if (fresh && enabled) await wakeWebhookDelivery(ctx, db);
    return toOut(updated);
  });
}

export async function deleteWebhook(ctx: ServiceContext, uuid: string): Promise<void> {
  const res = await tenantDb(ctx).deleteFrom('webhooks').where('uuid', '=', uuid).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound(`No webhook with the identifier ${uuid} exists.`);
}

/**
 * A new secret; the one it replaces keeps signing (beside it) for 24 hours, and so do the previous secrets of
 * earlier rotations until their own 24 hours are over (issue 22: a second rotation within the day dropped the
 * first one's previous secret while it was still announced as valid).
 */
export async function rotateSecret(ctx: ServiceContext, uuid: string): Promise<WebhookWithSecretOut> {
  const secret = generateSecret();
  const kept = sql<string>`(select coalesce(jsonb_agg(p order by (p->>'until')::timestamptz), '[]'::jsonb) from (
      select p from jsonb_array_elements(${validPrevious('previous_secrets')} || jsonb_build_array(jsonb_build_object(
        'secret', secret, 'until', now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS})))) p
      order by (p->>'until')::timestamptz desc limit ${MAX_PREVIOUS_SECRETS}) newest)`;
  const row = await tenantDb(ctx).updateTable('webhooks').set({
    previous_secrets: kept, secret: sealSecret(secret), modified_at: sql`now()`,
  }).where('uuid', '=', uuid).returning(COLUMNS).$narrowType<Row>().executeTakeFirst();
  if (!row) throw notFound(`No webhook with the identifier ${uuid} exists.`);
  return { ...toOut(row), secret };
}

// ---- deliveries --------------------------------------------------------------------------------------

type DeliveryRow = Pick<Selectable<TenantDB['webhook_deliveries']>, 'uuid' | 'event_uuid' | 'event_type' | 'attempt' | 'redelivery'
  | 'response_status' | 'latency_ms' | 'error' | 'created_at'> & { state: DeliveryOut['state'] };

const DELIVERY_COLUMNS = ['uuid', 'event_uuid', 'event_type', 'attempt', 'redelivery', 'state', 'response_status', 'latency_ms', 'error', 'created_at'] as const;

function deliveryOf(r: DeliveryRow): DeliveryOut {
  return {
    uuid: r.uuid, event: r.event_uuid, eventType: r.event_type, attempt: r.attempt, redelivery: r.redelivery, state: r.state,
    responseStatus: r.response_status ?? undefined, latencyMs: r.latency_ms ?? undefined, error: r.error ?? undefined,
    createdAt: formatTimestamp(r.created_at)!,
  };
}

/** The webhook's attempts, newest first. */
export async function listDeliveries(ctx: ServiceContext, input: ListDeliveriesInput): Promise<DeliveryOut[]> {
  const db = tenantDb(ctx);
  await findOrThrow(db, input.uuid);
  const { limit, offset } = pageOf(input);
  const query = db.selectFrom('webhook_deliveries').select([...DELIVERY_COLUMNS, listTotal]).where('webhook_uuid', '=', input.uuid)
    .orderBy('created_at', 'desc').orderBy('seq', 'desc')
    .$narrowType<DeliveryRow>();
  const rows = await query.limit(limit).offset(offset).execute();
  await reportTotal(ctx, { limit, offset }, rows, () => query.limit(1).execute());
  return rows.map(deliveryOf);
}

/**
 * Sends a delivered (or failed) event of this webhook again: a `pending` attempt the delivery job makes once,
 * beside the subscription's order. 409 while the webhook is disabled or when the event is no longer kept.
 */
export async function redeliver(ctx: ServiceContext, uuid: string, id: string): Promise<DeliveryOut> {
  return ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const tx = inSchema(db, ctx.tenant.schema);
    const hook = await findOrThrow(tx, uuid);
    const original = await tx.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).where('uuid', '=', id).where('webhook_uuid', '=', uuid)
      .$narrowType<DeliveryRow>().executeTakeFirst();
    if (!original) throw notFound(`The webhook ${uuid} has no delivery with the identifier ${id}.`);
    if (!hook.enabled) throw conflict(`The webhook ${uuid} is disabled; enable it (PATCH enabled: true) before asking for a redelivery.`);
    const kept = await tx.selectFrom('event').select(sql`1`.as('one')).where('uuid', '=', original.event_uuid).executeTakeFirst();
    if (!kept) throw conflict(`The event ${original.event_uuid} is no longer kept and cannot be delivered again.`);
    // Raw: `insert … select` numbers the attempt after the event's last one in the same statement.
    const deliveries = tablesOf(ctx.tenant.schema)('webhook_deliveries');
    const res = await sql<DeliveryRow>`insert into ${deliveries} (uuid, webhook_uuid, event_uuid, event_type, attempt, redelivery, state)
      select ${newUuid()}::uuid, ${uuid}::uuid, ${original.event_uuid}::uuid, ${original.event_type},
        coalesce(max(attempt), 0) + 1, true, 'pending'
      from ${deliveries} where webhook_uuid = ${uuid}::uuid and event_uuid = ${original.event_uuid}::uuid
      returning ${sql.join(DELIVERY_COLUMNS.map((c) => sql.ref(c)))}`.execute(db);
    await wakeWebhookDelivery(ctx, db);
    return deliveryOf(res.rows[0]!);
  });
}

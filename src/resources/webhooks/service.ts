import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { likePattern } from '../../platform/db/search.js';
import { EVENT_RETENTION_DAYS } from '../../platform/events/events.js';
import { qualified, sql, type Executor } from '../../platform/db/sql.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { newUuid } from '../../platform/http/ids.js';
import { assertPatchNotEmpty, wasSent } from '../../platform/http/patch.js';
import { conflict, invalid, notFound, violation } from '../../domain/errors.js';
import { allowedHostsOf, resolveTarget } from '../../platform/net/outgoing.js';
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
  return allowedHostsOf(process.env.WEBHOOK_ALLOW_HOSTS);
}

type Row = {
  uuid: string; url: string; events: string[] | null; enabled: boolean; description: string | null;
  failing_since: Date | string | null; disabled_at: Date | string | null; disabled_reason: 'failing' | null;
  previous_secret_until: Date | string | null; created_at: Date | string; modified_at: Date | string;
};

const COLUMNS = sql`uuid, url, events, enabled, description, failing_since, disabled_at, disabled_reason,
  case when previous_secret_until > now() then previous_secret_until end as previous_secret_until, created_at, modified_at`;

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

const table = (ctx: ServiceContext) => qualified(ctx.tenant.schema, 'webhooks');

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
  const res = await sql<Row>`select ${COLUMNS} from ${table(ctx)}
    where (${q}::text is null or url ilike ${q} or description ilike ${q})
      and (${since}::timestamptz is null or modified_at >= ${since})
    order by created_at, uuid limit ${limit} offset ${offset}`.execute(dbOf(ctx.em));
  return res.rows.map(toOut);
}

async function findOrThrow(db: Executor, ctx: ServiceContext, uuid: string): Promise<Row> {
  const res = await sql<Row>`select ${COLUMNS} from ${table(ctx)} where uuid = ${uuid}::uuid`.execute(db);
  if (!res.rows[0]) throw notFound(`No webhook with the identifier ${uuid} exists.`);
  return res.rows[0];
}

export async function getWebhook(ctx: ServiceContext, uuid: string): Promise<WebhookOut> {
  return toOut(await findOrThrow(dbOf(ctx.em), ctx, uuid));
}

export async function createWebhook(ctx: ServiceContext, input: CreateWebhookInput): Promise<WebhookWithSecretOut> {
  await assertDeliverableUrl(input.url);
  const secret = generateSecret();
  // The cursor starts at the oldest transaction still running: every event committed from now on is delivered
  // (and perhaps a few committed just before), none that ended earlier.
  const res = await sql<Row>`insert into ${table(ctx)} (uuid, url, events, enabled, description, secret, cursor_tx, cursor_id)
    values (${newUuid()}::uuid, ${input.url}, ${storedEvents(input.events)}::text[], ${input.enabled ?? true},
      ${input.description ?? null}, ${secret}, pg_snapshot_xmin(pg_current_snapshot()), 0)
    returning ${COLUMNS}`.execute(dbOf(ctx.em));
  return { ...toOut(res.rows[0]!), secret };
}

export async function updateWebhook(ctx: ServiceContext, input: UpdateWebhookInput): Promise<WebhookOut> {
  assertPatchNotEmpty(input);
  return ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const current = await sql<Row>`select ${COLUMNS} from ${table(ctx)} where uuid = ${input.uuid}::uuid for update`.execute(db);
    const row = current.rows[0];
    if (!row) throw notFound(`No webhook with the identifier ${input.uuid} exists.`);
    const url = input.url ?? row.url;
    if (input.url != null && input.url !== row.url) await assertDeliverableUrl(input.url);
    const events = input.events != null ? storedEvents(input.events) : row.events;
    const enabled = input.enabled ?? row.enabled;
    const description = wasSent(input, 'description') ? (input.description ?? null) : row.description;
    // A new URL, or switching it on again, starts afresh: no failing streak, the next attempt now. The cursor
    // stays: what happened meanwhile is still delivered, in order.
    const fresh = url !== row.url || (enabled && !row.enabled);
    const res = await sql<Row>`update ${table(ctx)} set url = ${url}, events = ${events}::text[], enabled = ${enabled},
        description = ${description}, modified_at = now(),
        attempts = case when ${fresh} then 0 else attempts end,
        failing_since = case when ${fresh} then null else failing_since end,
        next_attempt_at = case when ${fresh} then now() else next_attempt_at end,
        disabled_at = case when ${enabled} then null when ${row.enabled} then now() else disabled_at end,
        disabled_reason = case when ${enabled} or ${row.enabled} then null else disabled_reason end
      where uuid = ${input.uuid}::uuid returning ${COLUMNS}`.execute(db);
    if (fresh && enabled) await wakeWebhookDelivery(ctx, db);
    return toOut(res.rows[0]!);
  });
}

export async function deleteWebhook(ctx: ServiceContext, uuid: string): Promise<void> {
  const res = await sql`delete from ${table(ctx)} where uuid = ${uuid}::uuid`.execute(dbOf(ctx.em));
  if (Number(res.numAffectedRows ?? 0) === 0) throw notFound(`No webhook with the identifier ${uuid} exists.`);
}

/** A new secret; the previous one keeps signing (beside it) for 24 hours. */
export async function rotateSecret(ctx: ServiceContext, uuid: string): Promise<WebhookWithSecretOut> {
  const secret = generateSecret();
  const res = await sql<Row>`update ${table(ctx)} set previous_secret = secret,
      previous_secret_until = now() + make_interval(hours => ${PREVIOUS_SECRET_HOURS}), secret = ${secret}, modified_at = now()
    where uuid = ${uuid}::uuid returning ${COLUMNS}`.execute(dbOf(ctx.em));
  if (!res.rows[0]) throw notFound(`No webhook with the identifier ${uuid} exists.`);
  return { ...toOut(res.rows[0]), secret };
}

// ---- deliveries --------------------------------------------------------------------------------------

type DeliveryRow = {
  uuid: string; event_uuid: string; event_type: string; attempt: number; redelivery: boolean; state: DeliveryOut['state'];
  response_status: number | null; latency_ms: number | null; error: string | null; created_at: Date | string;
};

const DELIVERY_COLUMNS = sql`uuid, event_uuid, event_type, attempt, redelivery, state, response_status, latency_ms, error, created_at`;

function deliveryOf(r: DeliveryRow): DeliveryOut {
  return {
    uuid: r.uuid, event: r.event_uuid, eventType: r.event_type, attempt: r.attempt, redelivery: r.redelivery, state: r.state,
    responseStatus: r.response_status ?? undefined, latencyMs: r.latency_ms ?? undefined, error: r.error ?? undefined,
    createdAt: formatTimestamp(r.created_at)!,
  };
}

/** The webhook's attempts, newest first. */
export async function listDeliveries(ctx: ServiceContext, input: ListDeliveriesInput): Promise<DeliveryOut[]> {
  const db = dbOf(ctx.em);
  await findOrThrow(db, ctx, input.uuid);
  const { limit, offset } = pageOf(input);
  const res = await sql<DeliveryRow>`select ${DELIVERY_COLUMNS} from ${qualified(ctx.tenant.schema, 'webhook_deliveries')}
    where webhook_uuid = ${input.uuid}::uuid order by created_at desc, seq desc limit ${limit} offset ${offset}`.execute(db);
  return res.rows.map(deliveryOf);
}

/**
 * Sends a delivered (or failed) event of this webhook again: a `pending` attempt the delivery job makes once,
 * beside the subscription's order. 409 while the webhook is disabled or when the event is no longer kept.
 */
export async function redeliver(ctx: ServiceContext, uuid: string, id: string): Promise<DeliveryOut> {
  return ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const hook = await findOrThrow(db, ctx, uuid);
    const deliveries = qualified(ctx.tenant.schema, 'webhook_deliveries');
    const found = await sql<DeliveryRow>`select ${DELIVERY_COLUMNS} from ${deliveries}
      where uuid = ${id}::uuid and webhook_uuid = ${uuid}::uuid`.execute(db);
    const original = found.rows[0];
    if (!original) throw notFound(`The webhook ${uuid} has no delivery with the identifier ${id}.`);
    if (!hook.enabled) throw conflict(`The webhook ${uuid} is disabled; enable it (PATCH enabled: true) before asking for a redelivery.`);
    const kept = await sql`select 1 from ${qualified(ctx.tenant.schema, 'event')} where uuid = ${original.event_uuid}::uuid`.execute(db);
    if (kept.rows.length === 0) throw conflict(`The event ${original.event_uuid} is no longer kept and cannot be delivered again.`);
    const res = await sql<DeliveryRow>`insert into ${deliveries} (uuid, webhook_uuid, event_uuid, event_type, attempt, redelivery, state)
      select ${newUuid()}::uuid, ${uuid}::uuid, ${original.event_uuid}::uuid, ${original.event_type},
        coalesce(max(attempt), 0) + 1, true, 'pending'
      from ${deliveries} where webhook_uuid = ${uuid}::uuid and event_uuid = ${original.event_uuid}::uuid
      returning ${DELIVERY_COLUMNS}`.execute(db);
    await wakeWebhookDelivery(ctx, db);
    return deliveryOf(res.rows[0]!);
  });
}

/** Delivery attempts are kept as long as the events they delivered (EVENT_RETENTION_DAYS); the daily retention job. */
export async function purgeDeliveries(db: Executor, schema: string, days = EVENT_RETENTION_DAYS): Promise<number> {
  const res = await sql`delete from ${qualified(schema, 'webhook_deliveries')}
    where created_at < now() - make_interval(days => ${days}) and state <> 'pending'`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

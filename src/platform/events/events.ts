import bs58 from 'bs58';
import { inSchema, sql, tablesOf, type Executor } from '../db/sql.js';
import { formatTimestamp } from '../http/dates.js';
import { newUuid } from '../http/ids.js';
import { badRequest } from '../http/problem.js';
import type { JobSender } from '../jobs/queue.js';
import type { Tenant } from '../tenancy/tenant.js';
import { EVENT_PAYLOADS, type EventPayloads } from './payloads.js';
import { wakeWebhookDelivery } from '../webhooks/wake.js';

export type { EventPayloads };

// Issue 14: the municipality's events (table `event` in its schema; docs/decisions.md "Events"). An event is
// written in the transaction of the change it reports (a rolled-back change leaves none, a committed one
// always has its event) and carries references and states only (payloads.ts). The feed (GET /events) and the
// webhooks read them in order.
//
// Visibility rule. Identity values are handed out in one order and committed in another: transaction A takes
// id 10, B takes id 11 and commits first. A reader paging by id alone would read 11, move its cursor past 10
// and never see A's event. So a reader sees only events of transactions that have certainly ended, those
// older than the oldest transaction still running (`tx < pg_snapshot_xmin(pg_current_snapshot())`), in
// `(tx, id)` order, and continues after its cursor `(tx, id)`. A transaction that starts later gets a larger
// `tx`, so nothing can appear behind a cursor. The price: one long transaction anywhere in the database holds
// the feed back until it ends (events are delayed, never lost). Only transactions that write count (a
// transaction id is assigned at the first write), so long read-only ones (a backup) do not.

export const EVENT_TYPES = [
  'attendance.created',
  'attendance.status_changed',
  'attendance.transferred',
  'attendance.deleted',
  'offer.published',
  'offer.changed',
  'offer.cancelled',
  'offer.relaunched',
  'edition.allocated',
  'edition.committed',
  'receipt.created',
  'receipt.reversed',
  'participant.pseudonymised',
] as const satisfies readonly (keyof typeof EVENT_PAYLOADS)[];
export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/** Who records an event: the tenant and, where there is one, the job queue (same shape as MailContext). */
export type EventContext = { tenant: Pick<Tenant, 'slug' | 'schema'>; jobs?: JobSender };

export type NewEvent<T extends EventType = EventType> = T extends EventType ? { type: T; data: EventPayloads[T] } : never;

/** Events are kept this long (purged by the daily retention run). */
export const EVENT_RETENTION_DAYS = 30;

/** Records one event in the caller's transaction (`db`); returns its uuid. */
export async function recordEvent<T extends EventType>(ctx: EventContext, db: Executor, type: T, data: EventPayloads[T]): Promise<string> {
  return (await recordEvents(ctx, db, [{ type, data } as NewEvent]))[0]!;
}

/** Records many events in one statement (a commit's thousands of released decisions); returns their uuids. */
export async function recordEvents(ctx: EventContext, db: Executor, events: readonly NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newUuid());
  // The same statement tells whether the tenant has an enabled webhook (no extra round trip on the hot path);
  // only then is its delivery job written, in the same transaction (issue 14, src/resources/webhooks). Raw: a
  // data-modifying CTE over `unnest(arrays)`, one statement of one size for one event or thousands.
  const t = tablesOf(ctx.tenant.schema);
  const res = await sql<{ subscribed: boolean }>`with written as (
      insert into ${t('event')} (uuid, type, data)
      select * from unnest(${ids}::uuid[], ${events.map((e) => e.type)}::text[], ${events.map((e) => dataJson(e.data))}::jsonb[])
      returning 1)
    select exists (select 1 from ${t('webhooks')} where enabled) as subscribed`.execute(db);
  if (res.rows[0]?.subscribed) await wakeWebhookDelivery(ctx, db);
  return ids;
}

/**
 * The payload as stored: no null or undefined keys (spec 1.6), so feed and webhooks show the same body. Payloads
 * are flat (references, states, lists of references), so only the top level is looked at; no replacer function
 * (several times slower over a commit's thousands of events).
 */
export function dataJson(data: object): string {
  let clean: Record<string, unknown> | null = null;
  for (const [k, v] of Object.entries(data)) {
    if (v !== null) continue;
    clean ??= { ...data };
    delete clean[k];
  }
  return JSON.stringify(clean ?? data);
}

export type StoredEvent = { id: string; uuid: string; type: EventType; occurredAt: Date; data: Record<string, unknown> };

/** The envelope the feed lists and webhooks send (Standard Webhooks style). */
export type EventEnvelope = { id: string; type: EventType; timestamp: string; data: Record<string, unknown> };

export function toEnvelope(e: Pick<StoredEvent, 'uuid' | 'type' | 'occurredAt' | 'data'>): EventEnvelope {
  return { id: e.uuid, type: e.type, timestamp: formatTimestamp(e.occurredAt)!, data: e.data };
}

type Position = { tx: string; id: string };

/** An opaque cursor: base58 of `<tx>.<id>`. */
export function encodeCursor(p: Position): string {
  return bs58.encode(Buffer.from(`${p.tx}.${p.id}`, 'utf8'));
}

/** The position a cursor names, or null when it is not one of ours. */
export function decodeCursor(cursor: string): Position | null {
  if (cursor.length === 0 || cursor.length > 64) return null;
  let text: string;
  try {
    text = Buffer.from(bs58.decode(cursor)).toString('utf8');
  } catch {
    return null;
  }
  const m = /^(0|[1-9]\d{0,19})\.([1-9]\d{0,18})$/.exec(text);
  if (!m) return null;
  // xid8 and bigint are 64-bit: larger numbers would be a 500 in the query, not a bad cursor.
  if (BigInt(m[1]!) > 0xffffffffffffffffn || BigInt(m[2]!) > 0x7fffffffffffffffn) return null;
  return { tx: m[1]!, id: m[2]! };
}

export type ReadEventsOptions = { after: string | null; types?: readonly EventType[]; limit: number };

/**
 * The tenant's events after the cursor `after` (null: from the oldest kept), at most `limit`, in order, and
 * the cursor to continue with (the last event's; `after` itself when there is nothing new). A cursor that is
 * not one of ours is a 400 problem.
 */
export async function readEvents(db: Executor, schema: string, opts: ReadEventsOptions): Promise<{ events: StoredEvent[]; next: string | null }> {
  const from = opts.after === null ? null : decodeCursor(opts.after);
  if (opts.after !== null && !from) throw badRequest('after: not a cursor of this feed; use the `next` of an earlier answer, or leave it out to start at the oldest event.');
  const types = opts.types && opts.types.length > 0 ? opts.types : null;
  // Qualified names: a bare `id` in ORDER BY would be the text column of the output. Raw: keyset paging on a
  // row value of (xid8, bigint) below the snapshot's horizon reads plainer as SQL than as builder calls.
  const res = await sql<{ id: string; uuid: string; type: EventType; occurredAt: string; data: Record<string, unknown>; tx: string }>`
    select e.id::text as id, e.uuid, e.type, e.occurred_at as "occurredAt", e.data, e.tx::text as tx
    from ${tablesOf(schema)('event')} e
    where e.tx < pg_snapshot_xmin(pg_current_snapshot())
      ${from ? sql`and (e.tx, e.id) > (${from.tx}::xid8, ${from.id}::bigint)` : sql``}
      ${types ? sql`and e.type = any(${types}::text[])` : sql``}
    order by e.tx, e.id
    limit ${opts.limit}`.execute(db);
  const last = res.rows.at(-1);
  return {
    // The pool hands timestamps back as text.
    events: res.rows.map(({ tx: _tx, ...e }) => ({ ...e, occurredAt: new Date(e.occurredAt) })),
    next: last ? encodeCursor({ tx: last.tx, id: last.id }) : opts.after,
  };
}

/** One event by its uuid (committed, so visible; the feed's ordering rule does not matter here), or null. */
export async function readEvent(db: Executor, schema: string, uuid: string): Promise<StoredEvent | null> {
  const e = await inSchema(db, schema).selectFrom('event as e')
    .select([sql<string>`e.id::text`.as('id'), 'e.uuid', 'e.type', 'e.occurred_at as occurredAt', sql<Record<string, unknown>>`e.data`.as('data')])
    .where('e.uuid', '=', uuid)
    .$narrowType<{ type: EventType }>()
    .executeTakeFirst();
  return e ? { ...e, occurredAt: new Date(e.occurredAt) } : null;
}

/** Deletes the events older than `days` (default 30); returns how many. The daily retention run calls it. */
export async function purgeEvents(db: Executor, schema: string, days = EVENT_RETENTION_DAYS): Promise<number> {
  const res = await inSchema(db, schema).deleteFrom('event')
    .where('occurred_at', '<', sql<string>`now() - make_interval(days => ${days})`).executeTakeFirst();
  return Number(res.numDeletedRows);
}

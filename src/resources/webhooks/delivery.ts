import { randomUUID } from 'node:crypto';
import { afterFailedDelivery, DEFAULT_WEBHOOK_RETRY, type WebhookRetryPolicy } from '../../domain/webhook-retry.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { toEnvelope, type EventType } from '../../platform/events/events.js';
import { QUEUES } from '../../platform/jobs/queue.js';
import { readConfig } from '../../platform/config.js';
import { openSecret, SecretUnreadable } from '../../platform/secrets/box.js';
import { resolveTarget, type Target } from '../../platform/net/outgoing.js';
import { postSigned, type AttemptOutcome } from '../../platform/webhooks/sender.js';
import { webhookHeaders } from '../../platform/webhooks/signature.js';
import { tellAdmin } from './admin-mail.js';
import { hasWork, nextDue } from './due.js';
import { webhookAllowedHosts } from './service.js';

// Delivery of one municipality's events to its webhooks (issue 14), the `webhook-deliver` job:
// - at least once and in order per subscription: a subscription's cursor (the (tx, id) of the last event its
//   receiver answered 2xx, in the event feed's order and under the feed's visibility rule) advances only on a
//   2xx, and its next event waits while the head event is retried (src/domain/webhook-retry.ts, up to 24 h,
//   then the subscription is disabled and the admin e-mailed);
// - one worker at a time per subscription: a lease on the row (`lease_owner`, `lease_until`, renewed whenever
//   accepted events are recorded); every write of the delivery state names the lease, so a worker that lost it
//   (it stalled past the lease, another took over) changes nothing. Accepted events are recorded in batches (at
//   most 20, at most 200 ms old, and always before a failure or the end of a run). A worker killed mid-delivery
//   leaves its lease to run out; the event it was sending, and those accepted but not yet recorded, are sent
//   again with the same `webhook-id` (at least once); nothing is skipped or reordered;
// - several subscriptions at once (`lanes`), each lane one subscription, one request in flight per subscription;
// - no transaction is open during a request: claim, read and settle are short statements.

export type DeliverOptions = {
  /** Subscriptions delivered at once by one job. */
  lanes?: number;
  /** Events read per round trip for one subscription. */
  batch?: number;
  /** How long a claimed subscription belongs to this worker (renewed after every delivered event). */
  leaseSeconds?: number;
  /**
   * Stop after this long; the job is sent again for the rest, behind the jobs of other municipalities waiting
   * for a worker (a municipality whose events keep coming would otherwise hold a worker slot for ever).
   */
  budgetMs?: number;
  retry?: WebhookRetryPolicy;
  /** Hosts allowed over http and at any address (default WEBHOOK_ALLOW_HOSTS). */
  allow?: Set<string>;
  timeoutMs?: number;
};

export type DeliverResult = {
  delivered: number;
  failed: number;
  disabled: number;
  redelivered: number;
  /** When something waits (a retry, a lease of a dead worker, an event not yet visible), if anything does. */
  nextDueAt: Date | null;
};

type Claimed = {
  uuid: string; url: string; events: string[] | null; secret: string; previous_secrets: string[];
  cursor_tx: string; cursor_id: string; attempts: number; failing_since: Date | string | null;
};

type EventRow = { id: string; tx: string; uuid: string; type: EventType; occurredAt: string; data: Record<string, unknown> };

/** Events of the subscription after its cursor, visible under the feed's rule (events.ts), in order. */
function nextEvents(db: Executor, schema: string, sub: Pick<Claimed, 'cursor_tx' | 'cursor_id' | 'events'>, limit: number) {
  // Qualified names: a bare `id` in ORDER BY would be the text column of the output (and sort "10" before "9").
  // Raw, as the feed's page (events.ts): keyset paging on a row value of (xid8, bigint).
  return sql<EventRow>`select e.id::text as id, e.tx::text as tx, e.uuid, e.type, e.occurred_at as "occurredAt", e.data
    from ${tablesOf(schema)('event')} e
    where e.tx < pg_snapshot_xmin(pg_current_snapshot()) and (e.tx, e.id) > (${sub.cursor_tx}::xid8, ${sub.cursor_id}::bigint)
      and (${sub.events}::text[] is null or e.type = any(${sub.events}::text[]))
    order by e.tx, e.id limit ${limit}`.execute(db);
}

/** Leases up to `limit` subscriptions with work to this worker (the longest waiting first). */
async function claim(db: Executor, schema: string, owner: string, leaseSeconds: number, limit: number): Promise<Claimed[]> {
  // Raw: the work condition is shared with the safety net's union over schemas (`tenantsWithDueWebhooks`).
  const t = tablesOf(schema);
  const hooks = t('webhooks');
  const res = await sql<Claimed>`
    update ${hooks} w set lease_owner = ${owner}::uuid, lease_until = now() + make_interval(secs => ${leaseSeconds})
    where w.uuid in (
      select s.uuid from ${hooks} s
      where s.enabled and (s.lease_until is null or s.lease_until < now()) and ${hasWork(t)}
      order by s.next_attempt_at limit ${limit} for update skip locked)
    returning w.uuid, w.url, w.events, w.secret,
      array(select p->>'secret' from jsonb_array_elements(w.previous_secrets) p
        where (p->>'until')::timestamptz > now() order by (p->>'until')::timestamptz desc) as previous_secrets,
      w.cursor_tx::text as cursor_tx, w.cursor_id::text as cursor_id, w.attempts, w.failing_since`.execute(db);
  return res.rows;
}

async function release(db: Executor, schema: string, sub: Claimed, owner: string): Promise<void> {
  await inSchema(db, schema).updateTable('webhooks').set({ lease_owner: null, lease_until: null })
    .where('uuid', '=', sub.uuid).where('lease_owner', '=', owner).execute();
}

/** The body sent for an event: the envelope of the event feed, the same bytes on every attempt. */
function bodyOf(e: EventRow): string {
  return JSON.stringify(toEnvelope({ uuid: e.uuid, type: e.type, occurredAt: new Date(e.occurredAt), data: e.data }));
}

/** One signed attempt: the target checked again (DNS at delivery), signed with every valid secret. */
async function attempt(sub: Claimed, e: EventRow, target: Target | string, opts: DeliverOptions): Promise<AttemptOutcome> {
  if (typeof target === 'string') return { ok: false, status: null, latencyMs: 0, error: `refused: ${target}` };
  const body = bodyOf(e);
  let secrets: string[];
  try {
    // Stored sealed with SECRETS_KEY (platform/secrets/box.ts); opened only for signing, never logged.
    secrets = [sub.secret, ...sub.previous_secrets].map((s) => openSecret(s));
  } catch (err) {
    if (!(err instanceof SecretUnreadable)) throw err;
    return { ok: false, status: null, latencyMs: 0, error: `not sent: ${err.message}` };
  }
  const headers = webhookHeaders(secrets, e.uuid, Math.floor(Date.now() / 1000), body);
  return postSigned(target, body, headers, { timeoutMs: opts.timeoutMs });
}

async function checkTarget(url: string, allow: Set<string>): Promise<Target | string> {
  const checked = await resolveTarget(url, allow);
  return checked.ok ? checked.target : checked.reason;
}

type Lane = { ctx: ServiceContext; db: Executor; owner: string; opts: Required<Pick<DeliverOptions, 'batch' | 'leaseSeconds' | 'retry'>> & DeliverOptions; deadline: number; result: DeliverResult };

/** Attempts answered 2xx and not yet recorded (the cursor moves past them when they are). */
type Accepted = { e: EventRow; out: AttemptOutcome; attempt: number }[];

/** Record accepted attempts in one statement once this many wait, or the oldest waited this long. */
const SETTLE_EVERY = 20;
const SETTLE_AFTER_MS = 200;

/**
 * Records the accepted attempts and moves the cursor past the last of them, in one statement, only while this
 * worker holds the lease (renewed). A worker that dies first sends them again: at least once.
 */
async function settleAccepted(lane: Lane, sub: Claimed, accepted: Accepted): Promise<boolean> {
  if (accepted.length === 0) return true;
  const schema = lane.ctx.tenant.schema;
  const last = accepted.at(-1)!.e;
  const t = tablesOf(schema);
  // Raw: one statement (a data-modifying CTE over `unnest(arrays)`) moves the cursor and records the batch.
  const res = await sql<{ uuid: string }>`
    with hook as (
      update ${t('webhooks')} set cursor_tx = ${last.tx}::xid8, cursor_id = ${last.id}::bigint, attempts = 0,
        failing_since = null, next_attempt_at = now(), lease_until = now() + make_interval(secs => ${lane.opts.leaseSeconds})
      where uuid = ${sub.uuid}::uuid and lease_owner = ${lane.owner}::uuid
      returning uuid)
    insert into ${t('webhook_deliveries')} (uuid, webhook_uuid, event_uuid, event_type, attempt, state, response_status, latency_ms)
    select d.uuid, hook.uuid, d.event_uuid, d.event_type, d.attempt, 'succeeded', d.status, d.latency
    from hook, unnest(${accepted.map(() => randomUUID())}::uuid[], ${accepted.map((a) => a.e.uuid)}::uuid[],
      ${accepted.map((a) => a.e.type)}::text[], ${accepted.map((a) => a.attempt)}::int[], ${accepted.map((a) => a.out.status)}::int[],
      ${accepted.map((a) => a.out.latencyMs)}::int[]) as d(uuid, event_uuid, event_type, attempt, status, latency)
    returning uuid`.execute(lane.db);
  accepted.length = 0;
  return res.rows.length > 0;
}

/** Records a failed attempt and schedules the next one, or disables the subscription and tells the admin. */
async function settleFailure(lane: Lane, sub: Claimed, e: EventRow, out: AttemptOutcome): Promise<void> {
  const { ctx, db, owner } = lane;
  const schema = ctx.tenant.schema;
  const attempts = sub.attempts + 1;
  const failingSince = sub.failing_since ? new Date(sub.failing_since).getTime() : Date.now();
  const next = afterFailedDelivery({ attempts, failingSinceMs: failingSince, nowMs: Date.now() }, lane.opts.retry);
  const t = tablesOf(schema);
  await db.transaction().execute(async (trx) => {
    // Raw: the subscription's state and the failed attempt in one statement, only while the lease is ours.
    const res = await sql<{ uuid: string }>`
      with hook as (
        update ${t('webhooks')} set attempts = ${attempts}, failing_since = coalesce(failing_since, now()),
          next_attempt_at = now() + make_interval(secs => ${next.disable ? 0 : next.delayMs / 1000}),
          lease_owner = null, lease_until = null,
          enabled = ${!next.disable}, disabled_at = ${next.disable ? sql`now()` : sql`null`},
          disabled_reason = ${next.disable ? 'failing' : null}, modified_at = ${next.disable ? sql`now()` : sql`modified_at`}
        where uuid = ${sub.uuid}::uuid and lease_owner = ${owner}::uuid
        returning uuid)
      insert into ${t('webhook_deliveries')} (uuid, webhook_uuid, event_uuid, event_type, attempt, state, response_status, latency_ms, error)
      select ${randomUUID()}::uuid, uuid, ${e.uuid}::uuid, ${e.type}, ${attempts}, 'failed', ${out.status}, ${out.status === null ? null : out.latencyMs}, ${out.error} from hook
      returning uuid`.execute(trx);
    if (res.rows.length === 0 || !next.disable) return;
    lane.result.disabled++;
    await tellAdmin({ tenant: ctx.tenant, jobs: ctx.jobs }, trx, sub, failingSince);
    ctx.log.warn({ webhook: sub.uuid, attempts }, 'webhook disabled after 24 hours of failed deliveries');
  });
  lane.result.failed++;
}

/** Pending redeliveries of the subscription: each tried once, beside the order. */
async function redeliveries(lane: Lane, sub: Claimed, target: () => Promise<Target | string>): Promise<void> {
  const db = inSchema(lane.db, lane.ctx.tenant.schema);
  const pending = await db.selectFrom('webhook_deliveries as d').innerJoin('event as e', 'e.uuid', 'd.event_uuid')
    .select([
      'd.uuid as delivery', sql<string>`e.id::text`.as('id'), sql<string>`e.tx::text`.as('tx'), 'e.uuid', 'e.type',
      'e.occurred_at as occurredAt', sql<Record<string, unknown>>`e.data`.as('data'),
    ])
    .where('d.webhook_uuid', '=', sub.uuid).where('d.state', '=', 'pending').orderBy('d.created_at').limit(20)
    .$narrowType<{ type: EventType }>().execute();
  for (const e of pending) {
    const out = await attempt(sub, e, await target(), lane.opts);
    await db.updateTable('webhook_deliveries').set({
      state: out.ok ? 'succeeded' : 'failed', response_status: out.status,
      latency_ms: out.status === null ? null : out.latencyMs, error: out.error, created_at: sql`now()`,
    }).where('uuid', '=', e.delivery).where('state', '=', 'pending').execute();
    lane.result.redelivered++;
  }
  // A redelivery of an event no longer kept cannot be made.
  await db.updateTable('webhook_deliveries as d').set({ state: 'failed', error: 'the event is no longer kept' })
    .where('d.webhook_uuid', '=', sub.uuid).where('d.state', '=', 'pending')
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('event as e').select(sql`1`.as('one')).whereRef('e.uuid', '=', 'd.event_uuid'))))
    .execute();
}

/** Delivers one claimed subscription until it has nothing due, fails, loses its lease, or the budget is spent. */
async function deliverSubscription(lane: Lane, sub: Claimed): Promise<void> {
  const schema = lane.ctx.tenant.schema;
  const allow = lane.opts.allow ?? webhookAllowedHosts();
  let checked: { at: number; target: Target | string } | null = null;
  // The host is resolved and checked again at delivery (not only at subscription), at most every 30 s.
  const target = async () => {
    if (!checked || Date.now() - checked.at > 30_000) checked = { at: Date.now(), target: await checkTarget(sub.url, allow) };
    return checked.target;
  };
  try {
    await redeliveries(lane, sub, target);
    // A subscription still waiting for its backoff only had redeliveries to make.
    const due = sub.failing_since === null || (await inSchema(lane.db, schema).selectFrom('webhooks')
      .select(sql<boolean>`next_attempt_at <= now()`.as('due')).where('uuid', '=', sub.uuid).executeTakeFirst())?.due;
    if (!due) return;
    // Accepted attempts are recorded in batches (SETTLE_EVERY, SETTLE_AFTER_MS): one statement for many events.
    const accepted: Accepted = [];
    let oldest = 0;
    while (Date.now() < lane.deadline) {
      const events = (await nextEvents(lane.db, schema, sub, lane.opts.batch)).rows;
      if (events.length === 0) break;
      for (const e of events) {
        const out = await attempt(sub, e, await target(), lane.opts);
        if (!out.ok) {
          if (!(await settleAccepted(lane, sub, accepted))) return;
          await settleFailure(lane, sub, e, out);
          return;
        }
        if (accepted.length === 0) oldest = Date.now();
        accepted.push({ e, out, attempt: sub.attempts + 1 });
        lane.result.delivered++;
        sub.cursor_tx = e.tx;
        sub.cursor_id = e.id;
        sub.attempts = 0;
        sub.failing_since = null;
        if (accepted.length >= SETTLE_EVERY || Date.now() - oldest >= SETTLE_AFTER_MS) {
          if (!(await settleAccepted(lane, sub, accepted))) return; // the lease was lost: the new owner carries on
        }
        if (Date.now() >= lane.deadline) break;
      }
    }
    await settleAccepted(lane, sub, accepted);
  } finally {
    await release(lane.db, schema, sub, lane.owner);
  }
}

/**
 * Delivers the tenant's due events: `lanes` subscriptions at once, each in order. Returns the counts and when
 * the job should run again (a retry's time, a dead worker's lease, an event held back by an older transaction).
 */
export async function deliverWebhooks(ctx: ServiceContext, opts: DeliverOptions = {}): Promise<DeliverResult> {
  const db = dbOf(ctx.em);
  const lanes = opts.lanes ?? 8;
  const lane: Lane = {
    ctx, db, owner: randomUUID(), deadline: Date.now() + (opts.budgetMs ?? 5_000),
    opts: { ...opts, batch: opts.batch ?? 50, leaseSeconds: opts.leaseSeconds ?? 30, retry: opts.retry ?? DEFAULT_WEBHOOK_RETRY },
    result: { delivered: 0, failed: 0, disabled: 0, redelivered: 0, nextDueAt: null },
  };
  // Free lanes claim subscriptions with work (again every 100 ms while any lane still delivers: a subscription
  // finished a moment ago may have new events); the run ends when no lane delivers and nothing is due.
  const running = new Set<Promise<void>>();
  while (Date.now() < lane.deadline) {
    const free = lanes - running.size;
    const claimed = free > 0 ? await claim(db, ctx.tenant.schema, lane.owner, lane.opts.leaseSeconds, free) : [];
    for (const sub of claimed) {
      const run: Promise<void> = deliverSubscription(lane, sub).finally(() => running.delete(run));
      running.add(run);
    }
    if (running.size === 0) break;
    await Promise.race([...running, new Promise((r) => setTimeout(r, 100))]);
  }
  await Promise.all(running);
  lane.result.nextDueAt = await nextDue(db, ctx.tenant.schema);
  return lane.result;
}

/** The `webhook-deliver` job: delivers, then asks to run again when the first waiting thing is due. */
export function webhookDeliverHandler(opts: DeliverOptions = {}) {
  const { webhookLeaseSeconds: leaseSeconds, webhookRetryBaseSeconds: baseSeconds } = readConfig();
  return async (ctx: ServiceContext): Promise<void> => {
    const retry = baseSeconds ? { ...DEFAULT_WEBHOOK_RETRY, baseMs: baseSeconds * 1000 } : undefined;
    const result = await deliverWebhooks(ctx, { leaseSeconds, retry, ...opts });
    if (result.delivered || result.failed || result.disabled || result.redelivered) {
      ctx.log.info({ delivered: result.delivered, failed: result.failed, disabled: result.disabled, redelivered: result.redelivered }, 'webhooks delivered');
    }
    if (result.nextDueAt && ctx.jobs) {
      // A singleton key per second of the due time: a retry waiting for an hour never swallows the job of a fresh
      // event, nor an earlier retry of another subscription; the same time asked for again is one job.
      const second = Math.ceil(result.nextDueAt.getTime() / 1000);
      const later = result.nextDueAt.getTime() > Date.now();
      await ctx.jobs.send(QUEUES.webhookDeliver, { tenant: ctx.tenant.slug }, { singletonKey: `${ctx.tenant.slug}:at:${second}`, ...(later ? { startAfter: result.nextDueAt } : {}) });
    }
  };
}

import pLimit from 'p-limit';
import { afterFailure, DEFAULT_RETRY, type RetryPolicy } from '../../domain/mail-retry.js';
import { inSchema, sql, tablesOf, unionAll, type Executor } from '../db/sql.js';
import { newUuid } from '../http/ids.js';
import { scrubText } from '../logging/logger.js';
import { QUEUES, type JobSender } from '../jobs/queue.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { Mailer } from './mailer.js';

// D9 transactional outbox. A mail is a row written in the same transaction as the change that causes it (a
// rolled-back change sends nothing), together with a per-tenant send job (deduplicated while one is queued),
// so a worker sends it within seconds. Sending never holds a transaction open across SMTP:
//   claim  — a short statement leases due rows (`lease_until`) and counts the attempt;
//   send   — over SMTP, several in flight, each with the row's stable Message-ID;
//   settle — each row sent, or its next attempt after a backoff (src/domain/mail-retry.ts), or given up
//            (`failed_at`, logged at error level, listed by `cli mail list --failed`).
// Issue 25: a claimed batch is settled together, in the statement that claims the next batch (one statement per
// batch, not one per mail). A worker killed between the SMTP server's acceptance and `settle` leaves the rows
// leased; when the lease runs out they are sent again with the same Message-ID, the only duplicates a crash can
// cause (bounded by the batch claimed).

/** `payload.secret: true`: the body holds a secret (a single-use link) and is replaced once the mail was sent. */
export type QueuedMail = { kind: string; recipient: string; subject: string; body: string; payload?: Record<string, unknown> };

/** Who queues a mail: the tenant and, where there is one, the job queue that wakes the sender. */
export type MailContext = { tenant: Pick<Tenant, 'slug' | 'schema'>; jobs?: JobSender };

/**
 * Queues a mail in the caller's transaction (`db`) and enqueues the tenant's send job in the same
 * transaction. Without a job queue (the CLI, tools) the periodic sweep of the workers finds the row.
 */
export async function queueMail(ctx: MailContext, db: Executor, mail: QueuedMail): Promise<string> {
  return (await queueMails(ctx, db, [mail]))[0]!;
}

/** Queues many mails in one statement and one send job (a commit's thousands of decision mails). */
export async function queueMails(ctx: MailContext, db: Executor, mails: QueuedMail[]): Promise<string[]> {
  if (mails.length === 0) return [];
  const ids = mails.map(() => newUuid());
  // Raw: one `insert … select from unnest(arrays)` keeps the statement the same size for one mail or thousands.
  await sql`insert into ${tablesOf(ctx.tenant.schema)('outbox')} (uuid, kind, recipient, subject, body, payload)
    select * from unnest(${ids}::uuid[], ${mails.map((m) => m.kind)}::text[], ${mails.map((m) => m.recipient)}::text[],
      ${mails.map((m) => m.subject)}::text[], ${mails.map((m) => m.body)}::text[], ${mails.map((m) => JSON.stringify(m.payload ?? {}))}::jsonb[])`.execute(db);
  await wakeMailSender(ctx, db);
  return ids;
}

/**
 * Enqueues the tenant's send job in the caller's transaction, for outbox rows it wrote itself.
 */
export async function wakeMailSender(ctx: MailContext, db: Executor): Promise<void> {
  await ctx.jobs?.send(QUEUES.mailSend, { tenant: ctx.tenant.slug }, { db, singletonKey: ctx.tenant.slug });
}

/** How much later a wake-up for committed work may come (issue 25; SendJobOptions.coalesceMs). */
export const WAKE_COALESCE_MS = 300;

/**
 * Wakes the tenant's mail sender for outbox rows already committed (the create statement of an application
 * writes its row together with the application): one job per tenant and `WAKE_COALESCE_MS` however many
 * applications (issue 25), written by the job queue's own connection.
 */
export async function wakeMailSenderAfterCommit(ctx: MailContext): Promise<void> {
  await ctx.jobs?.send(QUEUES.mailSend, { tenant: ctx.tenant.slug }, { singletonKey: ctx.tenant.slug, coalesceMs: WAKE_COALESCE_MS });
}

export type DispatchOptions = {
  /** Mails in flight at once (SMTP connections are pooled by the mailer). */
  concurrency?: number;
  /** Rows claimed per round trip. */
  batch?: number;
  /** How long a claimed row belongs to this worker. */
  leaseSeconds?: number;
  retry?: RetryPolicy;
  /** Stop claiming after this long; the job is sent again for the rest (keeps one job short). */
  budgetMs?: number;
  log?: { error: (obj: object, msg: string) => void };
};

export type DispatchResult = {
  sent: number;
  /** Attempts that failed and will be tried again. */
  failed: number;
  /** Mails given up after their last attempt. */
  gaveUp: number;
  /** When the earliest mail left waiting is due (a retry, or more than the budget allowed), if any. */
  nextDueAt: Date | null;
};

type Claimed = { uuid: string; recipient: string; subject: string; body: string; attempts: number };

/** A claimed batch's outcomes, written by the statement that claims the next batch. */
type Settlement = { sent: string[]; failed: { uuid: string; error: string; giveUp: boolean; delaySeconds: number }[] };

/** The body a sent mail keeps when its payload says `secret: true` (issue 21: a single-use link, stored only as a hash). */
export const SCRUBBED_BODY = '(Nach dem Versand entfernt: die Nachricht enthielt einen Einmal-Link.)';

/**
 * One statement: settles the last batch (sent; or its next attempt, or given up) and leases up to `limit` due rows
 * to this worker, counting the attempt; rows in `tried` (every row this dispatch claimed, so also the ones settled
 * here) are left for later. Raw: two data-modifying CTEs and the claim in one round trip.
 */
async function settleAndClaim(db: Executor, schema: string, settle: Settlement, limit: number, leaseSeconds: number, tried: string[]): Promise<Claimed[]> {
  const outbox = tablesOf(schema)('outbox');
  const f = settle.failed;
  const res = await sql<Claimed>`
    with sent as (
      update ${outbox} set sent_at = now(), lease_until = null, last_error = null,
        body = case when payload->>'secret' = 'true' then ${SCRUBBED_BODY} else body end
      where uuid = any(${settle.sent}::uuid[])
    ), failed as (
      update ${outbox} o set lease_until = null, last_error = f.error,
        failed_at = case when f.give_up then now() else o.failed_at end,
        next_attempt_at = case when f.give_up then o.next_attempt_at else now() + make_interval(secs => f.delay) end
      from unnest(${f.map((x) => x.uuid)}::uuid[], ${f.map((x) => x.error)}::text[], ${f.map((x) => x.giveUp)}::boolean[],
        ${f.map((x) => x.delaySeconds)}::float8[]) as f(uuid, error, give_up, delay)
      where o.uuid = f.uuid
    )
    update ${outbox} o set lease_until = now() + make_interval(secs => ${leaseSeconds}), attempts = o.attempts + 1
    where o.uuid in (select uuid from ${outbox}
      where sent_at is null and failed_at is null and next_attempt_at <= now() and (lease_until is null or lease_until < now())
        and uuid <> all(${tried}::uuid[])
      order by next_attempt_at, created_at limit ${limit}
      for update skip locked)
    returning o.uuid, o.recipient, o.subject, o.body, o.attempts`.execute(db);
  return res.rows;
}

/** The error text kept on the row and logged: the SMTP reply or the network error, addresses scrubbed. */
function errorText(err: unknown): string {
  const e = err as { code?: string; responseCode?: number; message?: string };
  return scrubText([e.responseCode, e.code, e.message].filter((x) => x !== undefined && x !== '').join(' ')).slice(0, 500) || 'unknown error';
}

function senderOf(tenant: Tenant): string {
  return tenant.settings.mailFrom ?? `${tenant.name} <noreply@${tenant.hosts[0]?.host ?? 'localhost'}>`;
}

/**
 * Sends the tenant's due mails: claims them in batches and sends `concurrency` at a time; a batch is settled by the
 * statement that claims the next one. Returns the counts and when the next waiting mail is due.
 */
export async function dispatchOutbox(db: Executor, tenant: Tenant, mailer: Mailer, opts: DispatchOptions = {}): Promise<DispatchResult> {
  const concurrency = opts.concurrency ?? 8;
  // Small claims: a worker that dies strands few mails until their lease runs out.
  const batch = opts.batch ?? concurrency * 2;
  const leaseSeconds = opts.leaseSeconds ?? 60;
  const policy = opts.retry ?? DEFAULT_RETRY;
  const deadline = Date.now() + (opts.budgetMs ?? 60_000);
  const from = senderOf(tenant);
  const result: DispatchResult = { sent: 0, failed: 0, gaveUp: 0, nextDueAt: null };
  const limit = pLimit(Math.max(1, concurrency));

  // One dispatch tries a mail at most once: a failure waits for its backoff, never a tight loop.
  const tried: string[] = [];
  let settle: Settlement = { sent: [], failed: [] };
  for (;;) {
    const claiming = Date.now() < deadline;
    if (!claiming && settle.sent.length === 0 && settle.failed.length === 0) break;
    const rows = await settleAndClaim(db, tenant.schema, settle, claiming ? batch : 0, leaseSeconds, tried);
    settle = { sent: [], failed: [] };
    if (rows.length === 0) break;
    tried.push(...rows.map((r) => r.uuid));
    const outcome = settle;
    await Promise.all(rows.map((row) => limit(async () => {
      try {
        await mailer.send({ id: row.uuid, tenant: tenant.slug, from, to: row.recipient, subject: row.subject, text: row.body });
      } catch (err) {
        const after = afterFailure(row.attempts, policy);
        outcome.failed.push({ uuid: row.uuid, error: errorText(err), giveUp: after.giveUp, delaySeconds: after.giveUp ? 0 : after.delayMs / 1000 });
        if (after.giveUp) {
          result.gaveUp++;
          opts.log?.error({ tenant: tenant.slug, mail: row.uuid, attempts: row.attempts, error: errorText(err) }, 'mail given up after its last attempt');
        } else result.failed++;
        return;
      }
      outcome.sent.push(row.uuid);
      result.sent++;
    })));
  }
  result.nextDueAt = await nextDue(db, tenant.schema);
  return result;
}

/** When the tenant's next unsent mail may be tried (its backoff or its lease), or null when none waits. */
export async function nextDue(db: Executor, schema: string): Promise<Date | null> {
  const row = await inSchema(db, schema).selectFrom('outbox')
    .select(sql<string | null>`min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at)))`.as('due'))
    .where('sent_at', 'is', null).where('failed_at', 'is', null)
    .executeTakeFirst();
  const due = row?.due;
  return due ? new Date(due) : null;
}

/**
 * The safety net's one query: which of these tenants have a mail due now (never one job per tenant). Tenants
 * are passed in from the registry; their schema names are validated there.
 */
export async function tenantsWithDueMail(db: Executor, tenants: Pick<Tenant, 'slug' | 'schema'>[]): Promise<string[]> {
  const due = await unionAll<Pick<Tenant, 'slug' | 'schema'>, { slug: string }>(db, tenants, (t) => sql`select ${t.slug}::text as slug
    where exists (select 1 from ${tablesOf(t.schema)('outbox')}
      where sent_at is null and failed_at is null and next_attempt_at <= now() and (lease_until is null or lease_until < now()))`);
  return due.map((r) => r.slug);
}

// ---- the operator's view (`cli mail list|retry`) -----------------------------------------------------

export type OutboxEntry = {
  uuid: string; kind: string; createdAt: string; attempts: number; state: 'sent' | 'waiting' | 'failed';
  sentAt: string | null; nextAttemptAt: string | null; lastError: string | null;
};

/** The tenant's mails, newest first (no recipients or contents: the operator sees state, not personal data). */
export async function listOutbox(db: Executor, schema: string, opts: { failedOnly?: boolean; limit?: number } = {}): Promise<OutboxEntry[]> {
  return inSchema(db, schema).selectFrom('outbox')
    .select([
      'uuid', 'kind', 'created_at as createdAt', 'attempts',
      sql<OutboxEntry['state']>`case when sent_at is not null then 'sent' when failed_at is not null then 'failed' else 'waiting' end`.as('state'),
      'sent_at as sentAt', sql<string | null>`case when sent_at is null and failed_at is null then next_attempt_at end`.as('nextAttemptAt'),
      'last_error as lastError',
    ])
    .$if(!!opts.failedOnly, (q) => q.where('failed_at', 'is not', null).where('sent_at', 'is', null))
    .orderBy('created_at', 'desc').limit(opts.limit ?? 100)
    .execute();
}

/** Makes given-up mails due again with a fresh set of attempts; returns how many. */
export async function retryFailed(db: Executor, schema: string, which: { uuid: string } | { allFailed: true }): Promise<number> {
  const uuid = 'uuid' in which ? which.uuid : null;
  const res = await inSchema(db, schema).updateTable('outbox')
    .set({ failed_at: null, attempts: 0, next_attempt_at: sql`now()`, lease_until: null })
    .where('failed_at', 'is not', null).where('sent_at', 'is', null)
    .$if(uuid !== null, (q) => q.where('uuid', '=', uuid!))
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

/**
 * Mails hold families' addresses and children's first names: a sent mail is kept `sentDays` (for questions
 * about it), a given-up one `failedDays` (for the operator), then deleted. Part of the daily retention job.
 */
export async function purgeOutbox(db: Executor, schema: string, keep: { sentDays: number; failedDays: number } = { sentDays: 30, failedDays: 90 }): Promise<number> {
  const res = await inSchema(db, schema).deleteFrom('outbox')
    .where((eb) => eb.or([
      eb.and([eb('sent_at', 'is not', null), eb('sent_at', '<', sql<string>`now() - make_interval(days => ${keep.sentDays})`)]),
      eb.and([eb('sent_at', 'is', null), eb('failed_at', 'is not', null), eb('failed_at', '<', sql<string>`now() - make_interval(days => ${keep.failedDays})`)]),
    ]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The outbox backlog of every tenant for `/metrics` (`hp_outbox_backlog`, failed, oldest): one statement per 200
 * schemas, read at most every `ttlMs` however often Prometheus scrapes.
 */
export function outboxMetricsSource(db: Executor, tenants: () => Promise<Pick<Tenant, 'schema'>[]>, ttlMs = 15_000): () => Promise<{ backlog: number; failed: number; oldestSeconds: number }> {
  let cached: { at: number; value: { backlog: number; failed: number; oldestSeconds: number } } | null = null;
  return async () => {
    if (cached && Date.now() - cached.at < ttlMs) return cached.value;
    const rows = await unionAll<Pick<Tenant, 'schema'>, { waiting: number; failed: number; oldest: number | null }>(db, await tenants(), (t) => sql`
      select count(*) filter (where failed_at is null)::int as waiting, count(*) filter (where failed_at is not null)::int as failed,
        extract(epoch from now() - min(created_at) filter (where failed_at is null))::float8 as oldest
      from ${tablesOf(t.schema)('outbox')} where sent_at is null`);
    const value = {
      backlog: rows.reduce((n, r) => n + r.waiting, 0),
      failed: rows.reduce((n, r) => n + r.failed, 0),
      oldestSeconds: Math.max(0, ...rows.map((r) => r.oldest ?? 0)),
    };
    cached = { at: Date.now(), value };
    return value;
  };
}

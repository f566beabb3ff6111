import { NOT_COUNTED_FOR_LIMIT } from '../../domain/edition-phases.js';
import { LIST_GROUPS, type CreateStatus } from '../../domain/participant-list.js';
import type { ServiceContext } from '../../platform/context.js';
import { assertSchemaName, sql, type Executor } from '../../platform/db/sql.js';
import { noteWrite, withOfferShare } from '../../platform/db/attempts.js';
import { poolGuardOf } from '../../platform/db/orm.js';
import { newUuid } from '../../platform/http/ids.js';
import type { QueuedMail } from '../../platform/mail/outbox.js';

// ---- a new application in one statement (the opening rush, issue 10.1) -------------------------------

/** What a new application becomes in one of the two cases (a place free, or none), decided before the lock. */
export type AppendOutcome = {
  status: CreateStatus;
  decisionReason: string | null;
  /** The charge to post (D8 `chargeTarget`/`chargePostings` for an application without bookings); 0 for none. */
  charge: number;
  /** The family's e-mail, when asked for and there is an address. */
  mail: QueuedMail | null;
};

export type AppendInput = {
  uuid: string;
  participant: string;
  /** The offer as read before the lock; the function writes nothing when it changed meanwhile. */
  offer: { uuid: string; editionUuid: string; fee: number; cancelled: boolean; name: string };
  /** The participant's account (D8: the debtor; else the participant). */
  account: string | null;
  heldBack: boolean;
  allAlternateDates: boolean;
  /** Booking text of the charge. */
  chargeText: string;
  /** The running application phase's maxApplications (D4), null for none. */
  limit: number | null;
  placeFree: AppendOutcome;
  full: AppendOutcome;
};

export type AppendResult =
  | {
    done: true; status: CreateStatus; sorting: number; mailed: boolean;
    /** The tenant has an enabled webhook: the caller wakes the delivery of the `attendance.created` event. */
    subscribed: boolean;
    /** Which outcome it took: a place was free (or places are unlimited), or none. */
    placeFree: boolean;
    /** Its createdAt, as the projection reads it. */
    at: string;
  }
  | { done: false; counted: number }
  | null;

/**
 * Writes a new application (spec 4.3 "Create") in ONE autocommit statement, the tenant's `append_application`
 * (migrations/tenant/Migration20261125000200AppendApplication.ts): participant's key-share lock, the child's
 * maxApplications lock and count when a limit runs, the offer's row lock, a count on a snapshot taken after
 * it, the outcome for a free place or for none, the application at the end of its group (`appendPosition`),
 * its charge and the family's outbox row. The offer's lock ends with the statement, so no round trip to this
 * process happens while it is held. Everything else was read, checked and computed before (the caller).
 * Returns `{done: false, counted}` when the child has as many applications as the limit allows (nothing
 * written), and null, nothing written, when the general way must decide (see the migration).
 * Call outside a transaction: inside one, the locks would last until its commit.
 */
export async function appendApplication(ctx: ServiceContext, db: Executor, input: AppendInput): Promise<AppendResult> {
  const p = {
    uuid: input.uuid, offer: input.offer.uuid, participant: input.participant, edition: input.offer.editionUuid,
    fee: input.offer.fee, cancelled: input.offer.cancelled, name: input.offer.name, account: input.account,
    heldBack: input.heldBack, allAlternateDates: input.allAlternateDates, chargeText: input.chargeText,
    groups: LIST_GROUPS, placeFree: input.placeFree, full: input.full,
    limit: input.limit, limitLock: participantLockKey(ctx, input.participant), notCounted: NOT_COUNTED_FOR_LIMIT,
    debtorUuid: newUuid(), ledgerUuid: newUuid(), bookingUuid: newUuid(), mailUuid: newUuid(), eventUuid: newUuid(),
  };
  // Issue 23: on a place of the offer's share of the pool, waited for here without a connection. The statement
  // sets its own lock timeout first (the materialized CTE runs before the function; local to the statement's own
  // transaction), so it also ends by it behind a pooler that drops the connections' startup parameters.
  const lockMs = String(poolGuardOf(ctx.em)?.lockTimeoutMs() ?? 0);
  const res = await withOfferShare(ctx.tenant.schema, input.offer.uuid, () => sql<{ r: { status?: CreateStatus; placeFree?: boolean; sorting?: number; mailed?: boolean; subscribed?: boolean; at?: string; counted?: number } | null }>`
    with timeout as materialized (select set_config('lock_timeout', ${lockMs}, true) as lock_timeout)
    select ${sql.id(assertSchemaName(ctx.tenant.schema), 'append_application')}(${JSON.stringify(p)}::jsonb) as r from timeout`.execute(db));
  const r = res.rows[0]?.r ?? null;
  if (!r) return null;
  if (r.counted !== undefined) return { done: false, counted: r.counted };
  // Written (a select that writes: the use case may not simply run again, platform/db/attempts.ts).
  noteWrite();
  return { done: true, status: r.status!, placeFree: !!r.placeFree, sorting: r.sorting!, mailed: !!r.mailed, subscribed: !!r.subscribed, at: r.at! };
}

/** The key of the child's advisory lock its creations take turns on (D4 maxApplications). */
export function participantLockKey(ctx: ServiceContext, participantUuid: string): string {
  return `max-applications:${ctx.tenant.schema}:${participantUuid}`;
}


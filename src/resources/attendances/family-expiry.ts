import type { AttendanceState } from '../../domain/attendance-states.js';
import { purgeUnusedUploads, unusedUploadsDueSql } from '../../engines/answer-files/index.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { lockOffers, reorderList, statusChanged } from '../../engines/participant-list/index.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, tablesOf, unionAll, type Executor } from '../../platform/db/sql.js';
import { recordEvents, type NewEvent } from '../../platform/events/events.js';
import type { Tenant } from '../../platform/tenancy/tenant.js';
import { submissionApplications } from './family-store.js';

// D11, issue 21 item 4: links expire after 72 hours. The tenant's `family-expiry` job (sent by the minute's
// sweep when something is due) withdraws the applications still waiting for an expired confirmation or consent
// (`attendance.status_changed`, cause `expiry`) and then deletes what that submission made and never got
// confirmed: those applications (`attendance.deleted`; they never held a place), and, for an address never
// confirmed, the children it made and its account when they have nothing else. The family can apply again.
// The same job deletes answer files no application used within 24 hours.

export const EXPIRED_REASON = 'Verfallen: nicht innerhalb von 72 Stunden bestätigt';

/** One tenant's run: every expired link, one transaction each; then unused uploads. */
export async function runFamilyExpiryJob(ctx: ServiceContext): Promise<void> {
  const db = dbOf(ctx.em);
  const tx = inSchema(db, ctx.tenant.schema);
  let expired = 0;
  for (;;) {
    const due = await tx.selectFrom('family_confirmations').select(['token_hash', 'kind', 'submission_uuid as submission', 'participant_uuid as participant'])
      .where('used_at', 'is', null).where('expires_at', '<=', sql<string>`now()`).orderBy('expires_at').limit(100).execute();
    if (due.length === 0) break;
    for (const link of due) {
      await ctx.em.transactional(async (em) => expire(ctx, dbOf(em), link));
      expired++;
    }
  }
  const files = await purgeUnusedUploads(db, ctx.tenant.schema);
  if (expired || files) ctx.log.info({ expired, files }, 'family applications expired, unused uploads deleted');
}

type Link = { token_hash: Buffer; kind: string; submission: string; participant: string | null };

async function expire(ctx: ServiceContext, db: Executor, link: Link): Promise<void> {
  const schema = ctx.tenant.schema;
  const tx = inSchema(db, schema);
  // Taken once: a second worker (or a confirmation that just won) finds nothing.
  const taken = await tx.deleteFrom('family_confirmations').where('token_hash', '=', link.token_hash).where('used_at', 'is', null)
    .where('expires_at', '<=', sql<string>`now()`).executeTakeFirst();
  if (Number(taken.numDeletedRows) === 0) return;
  const waitingFor: AttendanceState = link.kind === 'email' ? 'email_unconfirmed' : 'consents_outstanding';
  const before = await submissionApplications(db, schema, link.submission, link.participant);
  const offers = await lockOffers(ctx, db, before.map((a) => a.offer));
  const expiring = (await submissionApplications(db, schema, link.submission, link.participant))
    .filter((a) => a.status === waitingFor || (link.kind === 'consent' && a.status === 'email_unconfirmed' && a.consentOutstanding));
  if (expiring.length > 0) {
    const ids = expiring.map((a) => a.uuid);
    await tx.updateTable('attendances').set({
      status: 'withdrawn', consent_outstanding: false, decision_reason: EXPIRED_REASON, status_changed_at: sql`now()`, modified_at: sql`now()`,
    }).where('uuid', '=', anyOf(ids)).execute();
    const events: NewEvent[] = [];
    for (const a of expiring) {
      const offer = offers.get(a.offer)!;
      const refs = { attendance: a.uuid, offer: a.offer, edition: offer.editionUuid, participant: a.participant, account: a.account };
      events.push(statusChanged(refs, { from: a.status, to: 'withdrawn', heldBack: false, decisionReason: EXPIRED_REASON, cause: 'expiry' }));
      events.push({ type: 'attendance.deleted', data: { ...refs, account: a.account ?? undefined, status: 'withdrawn' } });
    }
    // What the unconfirmed submission made goes: the applications (they never held a place; their files with them).
    await tx.deleteFrom('attendances').where('uuid', '=', anyOf(ids)).execute();
    await syncCharges(db, schema, ids);
    await recordEvents(ctx, db, events);
  }
  if (link.kind === 'email') await deleteWhatItMade(db, schema, link.submission);
  for (const offer of offers.keys()) await reorderList(ctx, db, offer);
}

/** The children and the account an unconfirmed submission made, when nothing else refers to them. */
async function deleteWhatItMade(db: Executor, schema: string, submission: string): Promise<void> {
  const t = tablesOf(schema);
  // Raw: the submission's lists of what it made, with "nothing else" as not-exists conditions.
  await sql`delete from ${t('participants')} p using ${t('family_submissions')} s
    where s.uuid = ${submission}::uuid and p.uuid = any(s.created_participants)
      and not exists (select 1 from ${t('attendances')} a where a.participant_uuid = p.uuid)
      and not exists (select 1 from ${t('debtors')} d where d.participant_uuid = p.uuid)`.execute(db);
  await sql`delete from ${t('accounts')} acc using ${t('family_submissions')} s
    where s.uuid = ${submission}::uuid and s.created_account and acc.uuid = s.account_uuid
      and not exists (select 1 from ${t('participants')} p where p.account_uuid = acc.uuid)
      and not exists (select 1 from ${t('debtors')} d where d.account_uuid = acc.uuid)
      and not exists (select 1 from ${t('family_submissions')} o where o.account_uuid = acc.uuid and o.uuid <> s.uuid)`.execute(db);
}

/** The sweep's one query (every minute): tenants with an expired link or an old unused upload. */
export async function tenantsWithFamilyWork(db: Executor, tenants: Pick<Tenant, 'slug' | 'schema'>[]): Promise<string[]> {
  const due = await unionAll<Pick<Tenant, 'slug' | 'schema'>, { slug: string }>(db, tenants, (tenant) =>
    sql`select ${tenant.slug}::text as slug
    where exists (select 1 from ${tablesOf(tenant.schema)('family_confirmations')} c where c.used_at is null and c.expires_at <= now())
      or ${unusedUploadsDueSql(tenant.schema)}`,
  );
  return due.map((r) => r.slug);
}

import type { AttendanceState } from '../../domain/attendance-states.js';
import { awaitsLink, EXPIRED_REASON, expiryPlan, type ExpiredLink, type ExpiryAccount, type ExpiryApplication, type ExpiryChild } from '../../domain/family-expiry.js';
import { purgeUnusedUploads, unusedUploadsDueSql } from '../../engines/answer-files/index.js';
import { lockAccounts, lockFamily, lockParticipants, touchAccounts } from '../../engines/families/index.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { lockOffers, reorderList, statusChanged } from '../../engines/participant-list/index.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, tablesOf, unionAll, type Executor } from '../../platform/db/sql.js';
import { recordEvents, type NewEvent } from '../../platform/events/events.js';
import type { Tenant } from '../../platform/tenancy/tenant.js';

// D11, issue 21 item 4: links expire after 72 hours. The tenant's `family-expiry` job (sent by the minute's
// sweep when something is due) takes each expired link in a transaction of its own and applies the rule of
// src/domain/family-expiry.ts: the applications still waiting for it are withdrawn (`attendance.status_changed`,
// cause `expiry`, reason EXPIRED_REASON) and kept; for an e-mail link, the children the unconfirmed submission
// made and its account, when they have nothing else, are deleted with their applications (`attendance.deleted`)
// and those applications' answer files. The family can apply again (family-submit.ts reuses an application
// withdrawn this way). Locks: the family's turn, then the account, the children to delete, the offers
// (engines/families/lock.ts), so an expiry waits for, and never deadlocks with, a submission, a confirmation or
// the team's deletions. The same job deletes answer files no application used within 24 hours.

export { EXPIRED_REASON };

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

async function expire(ctx: ServiceContext, db: Executor, row: Link): Promise<void> {
  const schema = ctx.tenant.schema;
  const tx = inSchema(db, schema);
  // Taken once: a second worker (or a confirmation that just won) finds nothing.
  const taken = await tx.deleteFrom('family_confirmations').where('token_hash', '=', row.token_hash).where('used_at', 'is', null)
    .where('expires_at', '<=', sql<string>`now()`).executeTakeFirst();
  if (Number(taken.numDeletedRows) === 0) return;
  const link: ExpiredLink = { kind: row.kind === 'email' ? 'email' : 'consent', submission: row.submission, participant: row.participant };

  // The family's turn, as its submissions take it; then the rows in the lock order: the account (deleted, or
  // changed when children go), the children to delete, the offers of every application that changes or goes.
  const family = await tx.selectFrom('family_submissions as s').leftJoin('accounts as acc', 'acc.uuid', 's.account_uuid')
    .select(['s.account_uuid as account', 'acc.email']).where('s.uuid', '=', link.submission).executeTakeFirst();
  if (family?.email) await lockFamily(ctx, db, family.email);
  const account = family?.account ?? null;
  const first = await readFamily(db, schema, link, account);
  const seen = expiryPlan(first);
  const accountLock = seen.deleteAccount ? 'update' : 'no key update';
  const lockedAccount = seen.deleteChildren.length > 0 || seen.deleteAccount ? await lockAccounts(ctx, db, [account], accountLock) : [];
  const lockedChildren = new Set(await lockParticipants(ctx, db, seen.deleteChildren, 'update'));
  const offers = await lockOffers(ctx, db, offersOf(first.applications, seen));

  // Read again under the locks. What was not locked for deletion is kept this time (it changed meanwhile).
  const now = await readFamily(db, schema, link, account);
  const plan = expiryPlan({
    ...now,
    children: now.children.map((c) => (lockedChildren.has(c.uuid) ? c : { ...c, referencedElsewhere: true })),
    account: now.account && (accountLock === 'update' && lockedAccount.includes(now.account.uuid) ? now.account : { ...now.account, referencedElsewhere: true }),
  });
  // An application that moved to an offer not locked yet (a transfer committed meanwhile): locked now, late.
  const late = offersOf(now.applications, plan).filter((o) => !offers.has(o));
  if (late.length > 0) for (const [uuid, o] of await lockOffers(ctx, db, late)) offers.set(uuid, o);

  const byUuid = new Map(now.applications.map((a) => [a.uuid, a]));
  const refs = (a: FamilyApplication) => ({ attendance: a.uuid, offer: a.offer, edition: offers.get(a.offer)!.editionUuid, participant: a.participant, account: a.account });
  const events: NewEvent[] = [];
  const withdrawn = (a: FamilyApplication) => statusChanged(refs(a), { from: a.status, to: 'withdrawn', heldBack: false, decisionReason: EXPIRED_REASON, cause: 'expiry' });
  if (plan.withdraw.length > 0) {
    // Spec 3.2 `withdraw`; `sorting` null: the renumbering below puts each at the end of its new group (D10).
    await tx.updateTable('attendances').set({
      status: 'withdrawn', consent_outstanding: false, held_back: false, decision_reason: EXPIRED_REASON, sorting: null,
      status_changed_at: sql`now()`, modified_at: sql`now()`,
    }).where('uuid', '=', anyOf(plan.withdraw)).execute();
    for (const uuid of plan.withdraw) events.push(withdrawn(byUuid.get(uuid)!));
  }
  if (plan.deleteChildren.length > 0) {
    // The children go with every application of theirs (cascade: answer files and consent links too); an
    // application still waiting for this link reports its withdrawal first, so its events end as any other's.
    for (const uuid of plan.deleteApplications) {
      const a = byUuid.get(uuid)!;
      if (awaitsLink(a, link)) events.push(withdrawn(a));
      events.push({ type: 'attendance.deleted', data: { ...refs(a), account: a.account ?? undefined, status: 'withdrawn' } });
    }
    await tx.deleteFrom('participants').where('uuid', '=', anyOf(plan.deleteChildren)).execute();
  }
  if (plan.deleteAccount) await tx.deleteFrom('accounts').where('uuid', '=', plan.deleteAccount).execute();
  else if (plan.deleteChildren.length > 0) await touchAccounts(ctx, db, [account]);
  await syncCharges(db, schema, [...plan.withdraw, ...plan.deleteApplications]);
  await recordEvents(ctx, db, events);
  for (const offer of offers.keys()) await reorderList(ctx, db, offer);
}

type FamilyApplication = ExpiryApplication & { offer: string; account: string | null };
type FamilyState = { link: ExpiredLink; children: ExpiryChild[]; applications: FamilyApplication[]; account: ExpiryAccount | null };

/** The offers of the applications a plan changes or deletes. */
function offersOf(applications: readonly FamilyApplication[], plan: { withdraw: string[]; deleteApplications: string[] }): string[] {
  const touched = new Set([...plan.withdraw, ...plan.deleteApplications]);
  return [...new Set(applications.filter((a) => touched.has(a.uuid)).map((a) => a.offer))];
}

/**
 * What the rule of an expired link reads (domain/family-expiry.ts): the family's children (the account's, those
 * the submission made or applied for), every application of theirs, and the account.
 */
async function readFamily(db: Executor, schema: string, link: ExpiredLink, account: string | null): Promise<FamilyState> {
  const t = tablesOf(schema);
  // Raw: "made by", "confirmed" and "named elsewhere" as exists-conditions over the family's submissions and debtors.
  const children = await sql<ExpiryChild>`
    select p.uuid,
      exists (select 1 from ${t('family_submissions')} s where s.uuid = ${link.submission}::uuid and p.uuid = any(s.created_participants)) as "madeByThisSubmission",
      exists (select 1 from ${t('family_submissions')} s where s.account_uuid = p.account_uuid and p.uuid = any(s.created_participants)
        and s.email_confirmed_at is null) as "madeByUnconfirmedSubmission",
      exists (select 1 from ${t('debtors')} d where d.participant_uuid = p.uuid) as "referencedElsewhere"
    from ${t('participants')} p
    where p.account_uuid = ${account}::uuid
      or p.uuid = any(select unnest(s.created_participants) from ${t('family_submissions')} s where s.uuid = ${link.submission}::uuid)
      or p.uuid in (select a.participant_uuid from ${t('attendances')} a where a.submission_uuid = ${link.submission}::uuid)
    order by p.uuid`.execute(db);
  const ids = children.rows.map((c) => c.uuid);
  const applications = ids.length === 0 ? [] : await inSchema(db, schema).selectFrom('attendances as a')
    .innerJoin('participants as p', 'p.uuid', 'a.participant_uuid').leftJoin('family_submissions as s', 's.uuid', 'a.submission_uuid')
    .select(['a.uuid', 'a.offer_uuid as offer', 'a.participant_uuid as participant', 'p.account_uuid as account', 'a.submission_uuid as submission',
      sql<boolean>`s.email_confirmed_at is not null`.as('submissionConfirmed'), 'a.status', 'a.consent_outstanding as consentOutstanding',
      'a.decision_reason as decisionReason', 'a.paid'])
    .where('a.participant_uuid', '=', anyOf(ids)).orderBy('a.seq')
    .$narrowType<{ status: AttendanceState }>().execute();
  const acc = account === null ? null : (await sql<ExpiryAccount>`
    select acc.uuid,
      exists (select 1 from ${t('family_submissions')} s where s.account_uuid = acc.uuid and s.created_account and s.email_confirmed_at is null) as "madeByUnconfirmedSubmission",
      exists (select 1 from ${t('family_submissions')} s where s.account_uuid = acc.uuid and s.email_confirmed_at is not null) as "addressConfirmed",
      exists (select 1 from ${t('debtors')} d where d.account_uuid = acc.uuid) as "referencedElsewhere"
    from ${t('accounts')} acc where acc.uuid = ${account}::uuid`.execute(db)).rows[0] ?? null;
  return { link, children: children.rows, applications, account: acc };
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

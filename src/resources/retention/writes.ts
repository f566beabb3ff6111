import { ageAtOffer, pseudonymFor } from '../../domain/retention.js';
import { deleteFilesOf } from '../../engines/answer-files/index.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { anyOf, inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { recordEvents } from '../../platform/events/events.js';
import { accountHoldsData, decide, dueAccounts, NIL_UUID, type OfferFacts } from './reads.js';
import { lockAccounts } from '../../engines/families/index.js';

// Retention's writes (service.ts): one batch of participants in one transaction, and the accounts left without
// a living child.

/**
 * Removes the accounts' personal data. Where the account is a debtor with a receipt, the name the receipts
 * showed (full name, else the e-mail address that stood for it) is kept on the debtor first: receipts are
 * accounting records with a statutory retention period of their own.
 */
async function pseudonymiseAccounts(ctx: ServiceContext, db: Executor, ids: string[]): Promise<{ accounts: string[]; retained: number }> {
  if (ids.length === 0) return { accounts: [], retained: 0 };
  const tx = inSchema(db, ctx.tenant.schema);
  const retained = await tx.updateTable('debtors as d').from('accounts as acc')
    .set({ retained_name: sql`coalesce(d.retained_name, nullif(concat_ws(' ', acc.firstname, acc.lastname), ''), acc.email)` })
    .whereRef('d.account_uuid', '=', 'acc.uuid').where('acc.uuid', '=', anyOf(ids))
    .where(({ exists, selectFrom }) => exists(selectFrom('receipts as r').select(sql`1`.as('one')).whereRef('r.debtor_uuid', '=', 'd.uuid')))
    .executeTakeFirst();
  const done = await tx.updateTable('accounts')
    .set({
      email: null, firstname: null, lastname: null, phone: null, street: null, zip: null, city: null,
      pseudonymised_at: sql`now()`, modified_at: sql`now()`,
    })
    .where('uuid', '=', anyOf(ids))
    .returning('uuid').execute();
  return { accounts: done.map((r) => r.uuid).sort(), retained: Number(retained.numUpdatedRows) };
}

type BatchResult = { participants: string[]; accounts: string[]; applications: number; retained: number };

/** One batch in one transaction: lock, decide again on what is committed, keep ages, remove, then the accounts. */
export async function pseudonymiseBatch(ctx: ServiceContext, uuids: string[], offers: Map<string, OfferFacts>, cutoff: Date): Promise<BatchResult> {
  const t = tablesOf(ctx.tenant.schema);
  return ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const tx = inSchema(db, ctx.tenant.schema);
    // The lock order of families (engines/families/lock.ts): the children's accounts first (changed below), then
    // the children. An account a child moved to after this read is locked later, out of that order (a deadlock
    // then is retried, platform/db/attempts.ts).
    const families = await tx.selectFrom('participants').select('account_uuid').where('uuid', '=', anyOf(uuids)).where('account_uuid', 'is not', null).execute();
    await lockAccounts(ctx, db, families.map((f) => f.account_uuid), 'update');
    // The lock waits for a transaction that is adding an application (its foreign key takes a share lock on the
    // participant) and blocks new ones until we commit. A participant pseudonymised meanwhile drops out.
    const locked = await tx.selectFrom('participants as p')
      .select([
        'p.uuid', sql<string | null>`to_char(p.date_of_birth, 'YYYY-MM-DD')`.as('dob'), 'p.account_uuid as accountUuid',
        sql<number>`(extract(epoch from greatest(p.created_at, p.modified_at)) * 1000)::float8`.as('lastChange'),
      ])
      .where('p.uuid', '=', anyOf(uuids)).where('p.pseudonymised_at', 'is', null)
      .orderBy('p.uuid').forUpdate().execute();
    if (locked.length === 0) return { participants: [], accounts: [], applications: 0, retained: 0 };
    // A new statement, so a new snapshot: applications committed while we waited for the lock are seen.
    const apps = await tx.selectFrom('attendances as a')
      .select(['a.uuid', 'a.participant_uuid as participantUuid', 'a.offer_uuid as offerUuid'])
      .where('a.participant_uuid', '=', anyOf(locked.map((r) => r.uuid))).execute();
    const appsOf = new Map<string, { uuid: string; offerUuid: string }[]>();
    for (const a of apps) appsOf.set(a.participantUuid, [...(appsOf.get(a.participantUuid) ?? []), a]);
    const due = locked.filter((p) =>
      decide({ uuid: p.uuid, lastChange: p.lastChange, offers: (appsOf.get(p.uuid) ?? []).map((a) => a.offerUuid) }, offers, cutoff));
    if (due.length === 0) return { participants: [], accounts: [], applications: 0, retained: 0 };
    const dueIds = due.map((p) => p.uuid);

    // The age at the offer's first date, while the birth date is still there; free-text and file answers go.
    const ageRows = due.flatMap((p) => (appsOf.get(p.uuid) ?? []).map((a) => ({
      uuid: a.uuid, age: ageAtOffer(p.dob, offers.get(a.offerUuid)?.firstDay ?? null),
    })));
    if (ageRows.length > 0) {
      // Raw: the answers filtered in jsonb and the ages joined from `unnest(arrays)`, one statement per batch.
      await sql`update ${t('attendances')} a
        set participant_age = coalesce(a.participant_age, v.age), modified_at = now(),
          answers = (select coalesce(jsonb_agg(x.value order by x.ordinality), '[]'::jsonb)
            from jsonb_array_elements(a.answers) with ordinality as x(value, ordinality)
            where x.value->>'type' in ('yn', 'int'))
        from unnest(${ageRows.map((r) => r.uuid)}::uuid[], ${ageRows.map((r) => r.age)}::int[]) as v(uuid, age)
        where a.uuid = v.uuid`.execute(db);
      // Issue 21: the answer files go with their answers (D11).
      await deleteFilesOf(db, ctx.tenant.schema, ageRows.map((r) => r.uuid));
    }
    // A child without an account is its own debtor (D8): its receipts keep the name they were made out to.
    const retainedChildren = await tx.updateTable('debtors as d').from('participants as p')
      .set({ retained_name: sql`coalesce(d.retained_name, nullif(concat_ws(' ', p.firstname, p.lastname), ''))` })
      .whereRef('d.participant_uuid', '=', 'p.uuid').where('p.uuid', '=', anyOf(dueIds))
      .where(({ exists, selectFrom }) => exists(selectFrom('receipts as r').select(sql`1`.as('one')).whereRef('r.debtor_uuid', '=', 'd.uuid')))
      .executeTakeFirst();
    // Raw: each participant's pseudonym joined from `unnest(arrays)`.
    await sql`update ${t('participants')} p
      set firstname = null, lastname = null, date_of_birth = null, email = null, phone = null,
        pseudonym = v.pseudonym, pseudonymised_at = now(), modified_at = now()
      from unnest(${dueIds}::uuid[], ${due.map((p) => pseudonymFor(p.uuid))}::text[]) as v(uuid, pseudonym)
      where p.uuid = v.uuid`.execute(db);

    // The families: every account of these children changed (its `participants` names); those left without a
    // living child lose their personal data. Locked before they are counted (a child being added waits).
    const accountIds = [...new Set(due.map((p) => p.accountUuid).filter((a): a is string => a !== null))].sort();
    let accounts: { accounts: string[]; retained: number } = { accounts: [], retained: 0 };
    if (accountIds.length > 0) {
      await tx.selectFrom('accounts').select('uuid').where('uuid', '=', anyOf(accountIds)).orderBy('uuid').forUpdate().execute();
      await tx.updateTable('accounts').set({ modified_at: sql`now()` }).where('uuid', '=', anyOf(accountIds)).execute();
      accounts = await pseudonymiseAccounts(ctx, db, await dueAccounts(ctx, db, accountIds, [], cutoff));
    }
    // Issue 14: one event per child, in one statement.
    await recordEvents(ctx, db, due.map((p) => ({ type: 'participant.pseudonymised' as const, data: {
      participant: p.uuid, account: p.accountUuid ?? undefined, accountPseudonymised: p.accountUuid !== null && accounts.accounts.includes(p.accountUuid),
    } })));
    return {
      participants: dueIds,
      accounts: accounts.accounts,
      applications: ageRows.length,
      retained: Number(retainedChildren.numUpdatedRows) + accounts.retained,
    };
  });
}

/**
 * Accounts without any living child that were last changed before the cutoff and still hold personal data (a
 * family that never registered a child, or whose children were deleted), in batches.
 */
export async function sweepAccounts(
  ctx: ServiceContext, cutoff: Date, due: string[], dryRun: boolean, batchSize: number,
): Promise<{ accounts: string[]; retained: number; batches: number }> {
  const tenant = inSchema(dbOf(ctx.em), ctx.tenant.schema);
  const found: string[] = [];
  let retained = 0;
  let batches = 0;
  let after = NIL_UUID;
  for (;;) {
    const page = await tenant.selectFrom('accounts as acc').select('acc.uuid')
      .where('acc.uuid', '>', after).where('acc.modified_at', '<', cutoff.toISOString()).where(accountHoldsData('acc'))
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('participants as c').select(sql`1`.as('one'))
        .whereRef('c.account_uuid', '=', 'acc.uuid').where('c.pseudonymised_at', 'is', null)
        .where(sql<boolean>`c.uuid <> all(${due}::uuid[])`))))
      .orderBy('acc.uuid').limit(batchSize).execute();
    if (page.length === 0) break;
    after = page[page.length - 1].uuid;
    const ids = page.map((r) => r.uuid);
    if (dryRun) {
      found.push(...(await dueAccounts(ctx, dbOf(ctx.em), ids, due, cutoff)));
      continue;
    }
    batches++;
    const done = await ctx.em.transactional(async (em) => {
      const db = dbOf(em);
      await inSchema(db, ctx.tenant.schema).selectFrom('accounts').select('uuid').where('uuid', '=', anyOf(ids)).orderBy('uuid').forUpdate().execute();
      return pseudonymiseAccounts(ctx, db, await dueAccounts(ctx, db, ids, [], cutoff));
    });
    found.push(...done.accounts);
    retained += done.retained;
  }
  return { accounts: found, retained, batches };
}

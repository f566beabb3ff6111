import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../platform/context.js';
import type { AttendanceState } from '../../domain/attendance-states.js';
import { recordEvents } from '../../platform/events/events.js';
import { dbOf } from '../../platform/context.js';
import { GERMAN, likePattern } from '../../platform/db/search.js';
import type { Selectable } from 'kysely';
import { inSchema, sql, tablesOf, type Executor, type RawBuilder, type TenantDB } from '../../platform/db/sql.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { emptyPage, LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { newUuid } from '../../platform/http/ids.js';
import { assertPatchNotEmpty, wasSent } from '../../platform/http/patch.js';
import { conflict, notFound, stillReferenced, unprocessable } from '../../domain/errors.js';
import { lockAccounts, lockParticipants, resolveAccountRef, touchAccounts } from '../../engines/families/index.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { lockOffers, refillIfFirstComeRunning, reorderList } from '../../engines/participant-list/index.js';
import { Participant } from './entity.js';
import { fullNameSql, participantFieldSql, participantNameSql } from '../../engines/families/index.js';
import type { CreateParticipantInput, ListParticipantsInput, ParticipantOut, UpdateParticipantInput } from './schema.js';

// Participants (D6): reads are projections (the account reference joined in), writes go through the entity.
// Once pseudonymised (D9) a participant's names are left out.
type Row = Pick<Selectable<TenantDB['participants']>, 'uuid' | 'firstname' | 'lastname' | 'date_of_birth' | 'email' | 'phone'
  | 'pseudonym' | 'pseudonymised_at' | 'account_uuid' | 'created_at' | 'modified_at'> & { name: string | null; account_name: string | null; listTotal: number };

/** Nulls stay in; the `response()` wrapper omits them (spec 1.6). */
function toOut(r: Row): ParticipantOut {
  return {
    uuid: r.uuid,
    firstname: r.firstname ?? undefined, lastname: r.lastname ?? undefined, name: r.name ?? undefined,
    dateOfBirth: r.date_of_birth ?? undefined, email: r.email ?? undefined, phone: r.phone ?? undefined,
    pseudonym: r.pseudonym ?? undefined, pseudonymisedAt: formatTimestamp(r.pseudonymised_at),
    account: r.account_uuid ? { uuid: r.account_uuid, name: r.account_name ?? undefined } : undefined,
    createdAt: formatTimestamp(r.created_at)!, modifiedAt: formatTimestamp(r.modified_at)!,
  };
}

/** Raw: masked columns (D9) and conditions shared as SQL fragments (families engine), one statement per page. */
function projection(ctx: ServiceContext, where: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  const [participants, accounts] = [t('participants'), t('accounts')];
  return sql<Row>`
    select p.uuid, ${LIST_TOTAL}, ${participantFieldSql('p', 'firstname')} as firstname, ${participantFieldSql('p', 'lastname')} as lastname,
      ${participantNameSql('p')} as name,
      -- D9: once pseudonymised, nothing personal is shown, also where a column still held a value.
      case when p.pseudonymised_at is null then to_char(p.date_of_birth, 'YYYY-MM-DD') end as date_of_birth,
      case when p.pseudonymised_at is null then p.email end as email,
      case when p.pseudonymised_at is null then p.phone end as phone,
      case when p.pseudonymised_at is not null then p.pseudonym end as pseudonym, p.pseudonymised_at,
      a.uuid as account_uuid, ${fullNameSql('a')} as account_name,
      p.created_at, p.modified_at
    from ${participants} p
    left join ${accounts} a on a.uuid = p.account_uuid
    where ${where}
    order by p.lastname ${GERMAN}, p.firstname ${GERMAN}, p.uuid
    limit ${limit} offset ${offset}`;
}

export async function listParticipants(ctx: ServiceContext, input: ListParticipantsInput): Promise<ParticipantOut[]> {
  const { limit, offset } = pageOf(input);
  const db = dbOf(ctx.em);
  const conds: RawBuilder<unknown>[] = [sql`true`];
  if (input.account !== undefined) {
    // A reference filter that matches nothing gives an empty list (spec 1.9, D10).
    const account = await resolveAccountRef(ctx, input.account, db);
    if (!account) return emptyPage(ctx, { limit, offset });
    conds.push(sql`p.account_uuid = ${account}::uuid`);
  }
  if (input.q) {
    // D10: participants are searched by name (never by birth date or contact data); pseudonymised ones have none.
    conds.push(sql`${participantNameSql('p')} ilike ${likePattern(input.q)}`);
  }
  if (input.modifiedSince) conds.push(sql`p.modified_at >= ${input.modifiedSince.instant}`);
  const where = sql.join(conds, sql` and `);
  const res = await projection(ctx, where, limit, offset).execute(db);
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await projection(ctx, where, 1, 0).execute(db)).rows);
  return res.rows.map(toOut);
}

const notFoundProblem = (uuid: string) => notFound(`No participant with the identifier ${uuid} exists.`);

export async function getParticipant(ctx: ServiceContext, uuid: string): Promise<ParticipantOut> {
  const res = await projection(ctx, sql`p.uuid = ${uuid}::uuid`, 1, 0).execute(dbOf(ctx.em));
  if (!res.rows[0]) throw notFoundProblem(uuid);
  return toOut(res.rows[0]);
}

async function findOrThrow(em: EntityManager, uuid: string): Promise<Participant> {
  const p = await em.findOne(Participant, { uuid });
  if (!p) throw notFoundProblem(uuid);
  return p;
}

/** The `account` of a body: an unknown one is a well-formed request that makes no sense, so `detail` only (spec 7). */
async function accountOf(ctx: ServiceContext, db: Executor, ref: string): Promise<string> {
  const uuid = await resolveAccountRef(ctx, ref, db);
  if (!uuid) throw unprocessable(`account: No account with the identifier or e-mail address "${ref.slice(0, 254)}" exists.`);
  return uuid;
}

export async function createParticipant(ctx: ServiceContext, input: CreateParticipantInput): Promise<ParticipantOut> {
  const uuid = newUuid();
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const accountUuid = input.account != null ? await accountOf(ctx, db, input.account) : null;
    em.create(Participant, {
      uuid, accountUuid, firstname: input.firstname, lastname: input.lastname,
      dateOfBirth: input.dateOfBirth ?? null, email: input.email ?? null, phone: input.phone ?? null,
      pseudonymisedAt: null, pseudonym: null,
    });
    await em.flush();
    await touchAccounts(ctx, db, [accountUuid]);
  });
  return getParticipant(ctx, uuid);
}

export async function updateParticipant(ctx: ServiceContext, input: UpdateParticipantInput): Promise<ParticipantOut> {
  assertPatchNotEmpty(input);
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const p = await findOrThrow(em, input.uuid);
    // D9: a pseudonymised participant's data is gone for good; writing names or contact data back is refused.
    if (p.pseudonymisedAt) throw conflict('The participant was pseudonymised (retention period over); it cannot be changed.');
    const before = { account: p.accountUuid ?? null, firstname: p.firstname, lastname: p.lastname };
    // Names must always have a value: null is ignored (spec 1.12).
    if (input.firstname != null) p.firstname = input.firstname;
    if (input.lastname != null) p.lastname = input.lastname;
    // Optional fields: only the keys sent; null clears (an account sent as null detaches the child).
    if (wasSent(input, 'account')) p.accountUuid = input.account != null ? await accountOf(ctx, db, input.account) : null;
    if (wasSent(input, 'dateOfBirth')) p.dateOfBirth = input.dateOfBirth ?? null;
    if (wasSent(input, 'email')) p.email = input.email ?? null;
    if (wasSent(input, 'phone')) p.phone = input.phone ?? null;
    p.modifiedAt = new Date();
    const after = p.accountUuid ?? null;
    // The lock order of families (engines/families/lock.ts): the accounts this change touches before the child's row.
    if (after !== before.account || p.firstname !== before.firstname || p.lastname !== before.lastname) {
      await lockAccounts(ctx, db, [before.account, after], 'no key update');
    }
    await em.flush();
    if (after !== before.account) {
      await touchAccounts(ctx, db, [before.account, after]);
      // D8: the debtor changed; unpaid charges move to the new debtor's ledgers, posted under the offers' locks.
      await lockOffers(ctx, db, (await applicationsOf(ctx, db, p.uuid)).map((a) => a.offer));
      await syncCharges(db, ctx.tenant.schema, (await applicationsOf(ctx, db, p.uuid)).map((a) => a.uuid));
    } else if (p.firstname !== before.firstname || p.lastname !== before.lastname) await touchAccounts(ctx, db, [after]);
  });
  return getParticipant(ctx, input.uuid);
}

/**
 * The participant's applications with their offers and states (for locking, the reconciler and the refill).
 * `paid` is kept equal to the receipts rule (D10: an unreversed receipt covers it) by the receipts service, in
 * the same transactions.
 */
async function applicationsOf(ctx: ServiceContext, db: Executor, participantUuid: string): Promise<{ uuid: string; offer: string; status: AttendanceState; paid: boolean }[]> {
  return inSchema(db, ctx.tenant.schema).selectFrom('attendances')
    .select(['uuid', 'offer_uuid as offer', 'status', 'paid'])
    .where('participant_uuid', '=', participantUuid)
    .$narrowType<{ status: AttendanceState }>().execute();
}

/**
 * D6: deleting a participant removes its applications with it (cascade), as if they had never been made:
 * 409 while one is paid (spec 4.3 Delete). Like every write to a participant list, it first locks the offers
 * of those applications (uuid order, src/engines/participant-list), so a receipt or a transfer committed meanwhile is seen; the
 * charges are cancelled (D8), the lists renumbered, and a freed confirmed place moves the waiting list up
 * during a running first-come-first-served phase (D10).
 */
export async function deleteParticipant(ctx: ServiceContext, uuid: string): Promise<void> {
  try {
    await ctx.em.transactional(async (em) => {
      const db = dbOf(em);
      const p = await findOrThrow(em, uuid);
      // The lock order of families (engines/families/lock.ts): its account (changed: modified), the child (deleted),
      // then the offers of its applications. Deleting the account at the same moment waits at the account.
      await lockAccounts(ctx, db, [p.accountUuid], 'no key update');
      if ((await lockParticipants(ctx, db, [uuid], 'update')).length === 0) throw notFoundProblem(uuid);
      // Its account as committed now (a concurrent change of account, or the account's deletion, is seen).
      await em.refresh(p);
      const locked = await lockOffers(ctx, db, (await applicationsOf(ctx, db, uuid)).map((a) => a.offer));
      // Read again under the locks: an application, receipt or transfer may have committed meanwhile.
      const applications = await applicationsOf(ctx, db, uuid);
      if (applications.some((a) => a.paid)) {
        throw conflict('This participant has paid applications and cannot be deleted; reverse their receipts first.');
      }
      await touchAccounts(ctx, db, [p.accountUuid]);
      em.remove(p);
      await em.flush();
      // The (unpaid) applications went with the participant (cascade): their charges are cancelled (D8).
      await syncCharges(db, ctx.tenant.schema, applications.map((a) => a.uuid));
      // Issue 14: each application went; one statement.
      await recordEvents(ctx, db, applications.map((a) => ({ type: 'attendance.deleted' as const, data: {
        attendance: a.uuid, offer: a.offer, edition: locked.get(a.offer)!.editionUuid, participant: uuid, account: p.accountUuid ?? undefined, status: a.status,
      } })));
      for (const offer of locked.values()) {
        await reorderList(ctx, db, offer.uuid);
        if (applications.some((a) => a.offer === offer.uuid && a.status === 'confirmed')) await refillIfFirstComeRunning(ctx, db, offer);
      }
    });
  } catch (err) {
    // Records added later that still refer to the participant (and do not cascade) also keep it.
    if (err instanceof ForeignKeyConstraintViolationException) {
      throw stillReferenced('This participant is still referred to by other records and cannot be deleted.');
    }
    throw err;
  }
}

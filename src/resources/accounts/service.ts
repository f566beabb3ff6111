import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { GERMAN, likePattern } from '../../platform/db/search.js';
import type { Selectable } from 'kysely';
import { inSchema, sql, tablesOf, type RawBuilder, type TenantDB } from '../../platform/db/sql.js';
import { tenantDb } from '../../platform/db/tenant.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { newUuid } from '../../platform/http/ids.js';
import { assertPatchNotEmpty, wasSent } from '../../platform/http/patch.js';
import { invalid, notFound, violation } from '../../domain/errors.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { lockOffers } from '../../engines/participant-list/index.js';
import { fullNameSql, lockAccounts, lockParticipants, participantNameSql } from '../../engines/families/index.js';
import { Account } from './entity.js';
import {
  ACCOUNT_OPTIONAL_FIELDS,
  type AccountOut, type CreateAccountInput, type ListAccountsInput, type UpdateAccountInput,
} from './schema.js';

// Family accounts (D6): reads are projections (one query per page, the children's references included as a
// json_agg subquery), writes go through the entity. The e-mail address is the account's alias (spec 1.5).
type Row = Pick<Selectable<TenantDB['accounts']>, 'uuid' | 'email' | 'firstname' | 'lastname' | 'phone' | 'street' | 'zip' | 'city'
  | 'pseudonymised_at' | 'created_at' | 'modified_at'> & { name: string | null; participants: { uuid: string; name: string | null }[]; listTotal: number };

/** Nulls stay in; the `response()` wrapper omits them (spec 1.6). */
function toOut(r: Row): AccountOut {
  return {
    uuid: r.uuid, email: r.email ?? undefined,
    firstname: r.firstname ?? undefined, lastname: r.lastname ?? undefined, name: r.name ?? undefined,
    phone: r.phone ?? undefined, street: r.street ?? undefined, zip: r.zip ?? undefined, city: r.city ?? undefined,
    participants: r.participants.map((p) => ({ uuid: p.uuid, name: p.name ?? undefined })),
    pseudonymisedAt: formatTimestamp(r.pseudonymised_at),
    createdAt: formatTimestamp(r.created_at)!, modifiedAt: formatTimestamp(r.modified_at)!,
  };
}

/** Raw: the children's references aggregated as json per account, one statement per page. */
function projection(ctx: ServiceContext, where: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  const [accounts, participants] = [t('accounts'), t('participants')];
  return sql<Row>`
    select a.uuid, ${LIST_TOTAL}, a.email, a.firstname, a.lastname, ${fullNameSql('a')} as name,
      a.phone, a.street, a.zip, a.city,
      coalesce((
        select json_agg(json_build_object('uuid', p.uuid, 'name', ${participantNameSql('p')})
                        order by p.lastname ${GERMAN}, p.firstname ${GERMAN}, p.uuid)
        from ${participants} p where p.account_uuid = a.uuid
      ), '[]'::json) as participants,
      a.pseudonymised_at, a.created_at, a.modified_at
    from ${accounts} a
    where ${where}
    order by a.lastname ${GERMAN}, a.firstname ${GERMAN}, a.uuid
    limit ${limit} offset ${offset}`;
}

export async function listAccounts(ctx: ServiceContext, input: ListAccountsInput): Promise<AccountOut[]> {
  const { limit, offset } = pageOf(input);
  const conds: RawBuilder<unknown>[] = [sql`true`];
  if (input.q) {
    // D10: accounts are searched by name and e-mail.
    const q = likePattern(input.q);
    conds.push(sql`(${fullNameSql('a')} ilike ${q} or a.email ilike ${q})`);
  }
  if (input.modifiedSince) conds.push(sql`a.modified_at >= ${input.modifiedSince.instant}`);
  const where = sql.join(conds, sql` and `);
  const res = await projection(ctx, where, limit, offset).execute(dbOf(ctx.em));
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await projection(ctx, where, 1, 0).execute(dbOf(ctx.em))).rows);
  return res.rows.map(toOut);
}

async function readAccount(ctx: ServiceContext, uuid: string): Promise<AccountOut | null> {
  const res = await projection(ctx, sql`a.uuid = ${uuid}::uuid`, 1, 0).execute(dbOf(ctx.em));
  return res.rows[0] ? toOut(res.rows[0]) : null;
}

const notFoundProblem = (uuid: string) => notFound(`No account with the identifier ${uuid} exists.`);

export async function getAccount(ctx: ServiceContext, uuid: string): Promise<AccountOut> {
  const out = await readAccount(ctx, uuid);
  if (!out) throw notFoundProblem(uuid);
  return out;
}

const duplicateEmail = () => invalid([violation('email', 'This e-mail address is already used by another account.', 'unique')]);

/** D10: a duplicate e-mail (ignoring case) is 422 with a violation on `email`. */
async function assertEmailFree(ctx: ServiceContext, email: string, exceptUuid?: string): Promise<void> {
  const rows = await tenantDb(ctx).selectFrom('accounts').select('uuid')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', eb.fn('lower', [eb.val(email)]))).where('uuid', 'is distinct from', exceptUuid ?? null)
    .execute();
  if (rows.length > 0) throw duplicateEmail();
}

/** A concurrent write may take the e-mail between our check and the insert: still a 422 on `email`. */
async function flushEmail(em: EntityManager): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw duplicateEmail();
    throw err;
  }
}

async function findOrThrow(em: EntityManager, uuid: string): Promise<Account> {
  const a = await em.findOne(Account, { uuid });
  if (!a) throw notFoundProblem(uuid);
  return a;
}

export async function createAccount(ctx: ServiceContext, input: CreateAccountInput): Promise<AccountOut> {
  await assertEmailFree(ctx, input.email);
  const a = ctx.em.create(Account, {
    uuid: newUuid(), email: input.email, pseudonymisedAt: null,
    firstname: input.firstname ?? null, lastname: input.lastname ?? null, phone: input.phone ?? null,
    street: input.street ?? null, zip: input.zip ?? null, city: input.city ?? null,
  });
  await flushEmail(ctx.em);
  return getAccount(ctx, a.uuid);
}

export async function updateAccount(ctx: ServiceContext, input: UpdateAccountInput): Promise<AccountOut> {
  assertPatchNotEmpty(input);
  const a = await findOrThrow(ctx.em, input.uuid);
  // `email` must always have a value: null is ignored (spec 1.12). A change of case only is no conflict.
  if (input.email != null && input.email !== a.email) {
    if (input.email.toLowerCase() !== a.email?.toLowerCase()) await assertEmailFree(ctx, input.email, a.uuid);
    a.email = input.email;
  }
  // Only the keys sent; a key sent as null clears the field (spec 1.12).
  for (const key of ACCOUNT_OPTIONAL_FIELDS) {
    if (wasSent(input, key)) a[key] = input[key] ?? null;
  }
  a.modifiedAt = new Date();
  await flushEmail(ctx.em);
  return getAccount(ctx, a.uuid);
}

/**
 * D6: the account goes, its participants stay without an account (and count as changed for sync clients);
 * their places are not touched. Their unpaid charges move to each child's own ledger (D8), posted with the
 * offers of those applications locked first (uuid order, like every write to a participant list), so a
 * receipt or transfer committed meanwhile is seen.
 */
export async function deleteAccount(ctx: ServiceContext, uuid: string): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const tx = inSchema(db, ctx.tenant.schema);
    const a = await findOrThrow(em, uuid);
    // The lock order of families (engines/families/lock.ts): the account (deleted), its children (changed), then
    // the offers of their applications. Deleting one of the children at the same moment waits at the account.
    if ((await lockAccounts(ctx, db, [uuid], 'update')).length === 0) throw notFoundProblem(uuid);
    const children = await tx.selectFrom('participants').select('uuid').where('account_uuid', '=', uuid).execute();
    await lockParticipants(ctx, db, children.map((c) => c.uuid), 'no key update');
    const applicationsOfChildren = () => tx.selectFrom('attendances as at')
      .innerJoin('participants as p', 'p.uuid', 'at.participant_uuid')
      .select(['at.uuid', 'at.offer_uuid as offer'])
      .where('p.account_uuid', '=', uuid)
      .execute();
    await lockOffers(ctx, db, (await applicationsOfChildren()).map((r) => r.offer));
    const applications = await applicationsOfChildren();
    // The foreign key would only set null; this also marks the children changed for sync clients (modified_at).
    await tx.updateTable('participants').set({ account_uuid: null, modified_at: sql`now()` })
      .where('account_uuid', '=', uuid).execute();
    em.remove(a);
    await em.flush();
    // D8: each child is its own debtor now; unpaid charges move to its ledgers (paid ones stay with the receipts).
    await syncCharges(db, ctx.tenant.schema, applications.map((r) => r.uuid));
  });
}

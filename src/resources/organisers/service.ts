import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { assertAliasFree, deriveAlias, retryDerivedAlias } from '../../platform/db/aliases.js';
import { GERMAN, likePattern } from '../../platform/db/search.js';
import type { Selectable } from 'kysely';
import { sql, type TenantDB } from '../../platform/db/sql.js';
import { tenantDb } from '../../platform/db/tenant.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { listTotal, reportTotal } from '../../platform/http/paging.js';
import { newUuid } from '../../platform/http/ids.js';
import { assertPatchNotEmpty, wasSent } from '../../platform/http/patch.js';
import { notFound } from '../../domain/errors.js';
import { Organiser } from './entity.js';
import {
  ORGANISER_OPTIONAL_FIELDS,
  type CreateOrganiserInput, type ListOrganisersInput, type OrganiserOut, type UpdateOrganiserInput,
} from './schema.js';

// Organisers (D6): reads are projections, writes go through the entity.
const COLUMNS = [
  'uuid', 'name', 'alias', 'email', 'phone', 'website', 'street', 'zip', 'city', 'description', 'created_at', 'modified_at',
] as const;
type Row = Pick<Selectable<TenantDB['organisers']>, (typeof COLUMNS)[number]>;

type Fields = Omit<Row, 'created_at' | 'modified_at'> & { createdAt: Date | string; modifiedAt: Date | string };

/** Nulls stay in; the `response()` wrapper omits them (spec 1.6). */
function out(r: Fields): OrganiserOut {
  return {
    uuid: r.uuid, name: r.name, alias: r.alias,
    email: r.email ?? undefined, phone: r.phone ?? undefined, website: r.website ?? undefined,
    street: r.street ?? undefined, zip: r.zip ?? undefined, city: r.city ?? undefined,
    description: r.description ?? undefined,
    createdAt: formatTimestamp(r.createdAt)!, modifiedAt: formatTimestamp(r.modifiedAt)!,
  };
}

const toOut = (r: Row) => out({ ...r, createdAt: r.created_at, modifiedAt: r.modified_at });

function fromEntity(o: Organiser): OrganiserOut {
  return out({
    uuid: o.uuid, name: o.name, alias: o.alias,
    email: o.email ?? null, phone: o.phone ?? null, website: o.website ?? null,
    street: o.street ?? null, zip: o.zip ?? null, city: o.city ?? null, description: o.description ?? null,
    createdAt: o.createdAt, modifiedAt: o.modifiedAt,
  });
}

export async function listOrganisers(ctx: ServiceContext, input: ListOrganisersInput): Promise<OrganiserOut[]> {
  const { limit, offset } = pageOf(input);
  const q = input.q ? likePattern(input.q) : null;
  const since = input.modifiedSince?.instant ?? null;
  const query = tenantDb(ctx).selectFrom('organisers').select([...COLUMNS, listTotal])
    .$if(q !== null, (qb) => qb.where('name', 'ilike', q!))
    .$if(since !== null, (qb) => qb.where('modified_at', '>=', since!.toISOString()))
    .orderBy(sql`name ${GERMAN}`).orderBy('uuid');
  const rows = await query.limit(limit).offset(offset).execute();
  await reportTotal(ctx, { limit, offset }, rows, () => query.limit(1).execute());
  return rows.map(toOut);
}

async function findOrThrow(ctx: ServiceContext, uuid: string): Promise<Organiser> {
  const o = await ctx.em.findOne(Organiser, { uuid });
  if (!o) throw notFound(`No organiser with the identifier ${uuid} exists.`);
  return o;
}

export async function getOrganiser(ctx: ServiceContext, uuid: string): Promise<OrganiserOut> {
  return fromEntity(await findOrThrow(ctx, uuid));
}

export async function createOrganiser(ctx: ServiceContext, input: CreateOrganiserInput): Promise<OrganiserOut> {
  // A derived alias is unique under concurrency too (platform/db/aliases.ts): in a transaction, retried.
  return retryDerivedAlias('organisers', !input.alias, () => ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const alias = input.alias ?? (await deriveAlias(db, ctx.tenant.schema, 'organisers', input.name));
    if (input.alias) await assertAliasFree(db, ctx.tenant.schema, 'organisers', input.alias);
    const o = em.create(Organiser, {
      uuid: newUuid(), name: input.name, alias,
      email: input.email ?? null, phone: input.phone ?? null, website: input.website ?? null,
      street: input.street ?? null, zip: input.zip ?? null, city: input.city ?? null,
      description: input.description ?? null,
    });
    // A racing duplicate of a SENT alias is still a 422 on `alias`: the database's 23505 is mapped in
    // platform/http/errors.ts.
    await em.flush();
    return fromEntity(o);
  }));
}

export async function updateOrganiser(ctx: ServiceContext, input: UpdateOrganiserInput): Promise<OrganiserOut> {
  assertPatchNotEmpty(input);
  const o = await findOrThrow(ctx, input.uuid);
  const db = dbOf(ctx.em);
  if (input.name != null) o.name = input.name;
  if (input.alias != null && input.alias !== o.alias) {
    await assertAliasFree(db, ctx.tenant.schema, 'organisers', input.alias, o.uuid);
    o.alias = input.alias;
  } else if (wasSent(input, 'alias') && input.alias === null) {
    o.alias = await deriveAlias(db, ctx.tenant.schema, 'organisers', o.name, o.uuid);
  }
  // Only the keys sent; a key sent as null clears the field (spec 1.12).
  for (const key of ORGANISER_OPTIONAL_FIELDS) {
    if (wasSent(input, key)) o[key] = input[key] ?? null;
  }
  o.modifiedAt = new Date();
  await ctx.em.flush();
  return fromEntity(o);
}

export async function deleteOrganiser(ctx: ServiceContext, uuid: string): Promise<void> {
  const o = await findOrThrow(ctx, uuid);
  await ctx.em.remove(o).flush();
}

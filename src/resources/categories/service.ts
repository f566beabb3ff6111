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
import { Category } from './entity.js';
import type { CategoryOut, CreateCategoryInput, ListCategoriesInput, UpdateCategoryInput } from './schema.js';

// Categories (D6): reads are projections, writes go through the entity.
type Row = Pick<Selectable<TenantDB['categories']>, 'uuid' | 'name' | 'alias' | 'created_at' | 'modified_at'>;

function toOut(r: Row): CategoryOut {
  return { uuid: r.uuid, name: r.name, alias: r.alias, createdAt: formatTimestamp(r.created_at)!, modifiedAt: formatTimestamp(r.modified_at)! };
}

function fromEntity(c: Category): CategoryOut {
  return { uuid: c.uuid, name: c.name, alias: c.alias, createdAt: formatTimestamp(c.createdAt)!, modifiedAt: formatTimestamp(c.modifiedAt)! };
}

export async function listCategories(ctx: ServiceContext, input: ListCategoriesInput): Promise<CategoryOut[]> {
  const { limit, offset } = pageOf(input);
  const q = input.q ? likePattern(input.q) : null;
  const since = input.modifiedSince?.instant ?? null;
  const query = tenantDb(ctx).selectFrom('categories').select(['uuid', 'name', 'alias', 'created_at', 'modified_at', listTotal])
    .$if(q !== null, (qb) => qb.where('name', 'ilike', q!))
    .$if(since !== null, (qb) => qb.where('modified_at', '>=', since!.toISOString()))
    .orderBy(sql`name ${GERMAN}`).orderBy('uuid');
  const rows = await query.limit(limit).offset(offset).execute();
  await reportTotal(ctx, { limit, offset }, rows, () => query.limit(1).execute());
  return rows.map(toOut);
}

async function findOrThrow(ctx: ServiceContext, uuid: string): Promise<Category> {
  const c = await ctx.em.findOne(Category, { uuid });
  if (!c) throw notFound(`No category with the identifier ${uuid} exists.`);
  return c;
}

export async function getCategory(ctx: ServiceContext, uuid: string): Promise<CategoryOut> {
  return fromEntity(await findOrThrow(ctx, uuid));
}

export async function createCategory(ctx: ServiceContext, input: CreateCategoryInput): Promise<CategoryOut> {
  // A derived alias is unique under concurrency too (platform/db/aliases.ts): in a transaction, retried.
  return retryDerivedAlias('categories', !input.alias, () => ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const alias = input.alias ?? (await deriveAlias(db, ctx.tenant.schema, 'categories', input.name));
    if (input.alias) await assertAliasFree(db, ctx.tenant.schema, 'categories', input.alias);
    const c = em.create(Category, { uuid: newUuid(), name: input.name, alias });
    await em.flush();
    return fromEntity(c);
  }));
}

export async function updateCategory(ctx: ServiceContext, input: UpdateCategoryInput): Promise<CategoryOut> {
  assertPatchNotEmpty(input);
  const c = await findOrThrow(ctx, input.uuid);
  const db = dbOf(ctx.em);
  if (input.name != null) c.name = input.name;
  if (input.alias != null && input.alias !== c.alias) {
    await assertAliasFree(db, ctx.tenant.schema, 'categories', input.alias, c.uuid);
    c.alias = input.alias;
  } else if (wasSent(input, 'alias') && input.alias === null) {
    c.alias = await deriveAlias(db, ctx.tenant.schema, 'categories', c.name, c.uuid);
  }
  c.modifiedAt = new Date();
  await ctx.em.flush();
  return fromEntity(c);
}

export async function deleteCategory(ctx: ServiceContext, uuid: string): Promise<void> {
  const c = await findOrThrow(ctx, uuid);
  await ctx.em.remove(c).flush();
}

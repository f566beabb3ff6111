import type { ServiceContext, Viewer } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { publicCacheMs, TtlCache } from '../../platform/cache/ttl-cache.js';
import { prepared } from '../../platform/db/prepared.js';
import { GERMAN, likePattern } from '../../platform/db/search.js';
import { sql, tablesOf, type CompiledQuery, type Executor, type RawBuilder } from '../../platform/db/sql.js';
import { LRUCache } from 'lru-cache';
import { pageOf } from '../../platform/http/fields.js';
import { parseId } from '../../platform/http/ids.js';
import { notFound } from '../../domain/errors.js';
import { offerNotFound, offerReaderRole, offerVisibleSql } from '../../engines/access/index.js';
import { offersTouchingDays } from './dates.js';
import { offerJson, projection } from './projection.js';
import { publicPageSql } from './public-page.js';
import { finalJson } from '../../platform/http/final-json.js';
import type { ListOffersInput, OfferOut } from './schema.js';

// Reads of offers (spec 4.2; D5, D10): the list with its filters and one offer, each one projection
// (projection.ts) among the offers the viewer may see; with `from`/`until` one more look-up first (dates.ts).

/** A reference filter value as id (UUID/base58) and as alias. */
function refParams(value: string): { id: string | null; alias: string } {
  return { id: parseId(value), alias: value };
}

function orderByOf(input: ListOffersInput): RawBuilder<unknown> {
  const dir = sql.raw(input.order === 'desc' ? 'desc' : 'asc');
  switch (input.sort) {
    case 'name': return sql`o.name ${GERMAN} ${dir}, o.uuid`;
    case 'begin': return sql`fd.first_begin ${dir} nulls last, o.uuid`;
    case 'fee': return sql`coalesce(o.fee, 0) ${dir}, o.uuid`;
    case 'createdAt': return sql`o.created_at ${dir}, o.uuid`;
    case 'modifiedAt': return sql`o.modified_at ${dir}, o.uuid`;
    default: return sql`fd.first_begin ${dir} nulls last, o.name ${GERMAN} ${dir}, o.uuid`;
  }
}

type Listed = { page: OfferOut[]; total: number };

const publicLists = new TtlCache<Listed>();

/**
 * The list as this caller sees it. Anonymous (and legacy) pages are public and cacheable anyway, so a page
 * is reused for a few seconds per tenant and query (platform/cache/ttl-cache.ts).
 */
export async function listOffers(ctx: ServiceContext, input: ListOffersInput): Promise<OfferOut[]> {
  const viewer = ctx.viewer;
  // Website tokens read the public offers with their questions (D11), not the shared public page.
  const listed = viewer.kind !== 'anonymous' && viewer.kind !== 'legacy'
    ? await loadOfferList(ctx, input, viewer)
    : await publicLists.getOrLoad(`${ctx.tenant.slug}\u0000${JSON.stringify(input)}`, publicCacheMs(), () => loadOfferList(ctx, input, viewer));
  ctx.paging?.({ ...pageOf(input), total: listed.total });
  return listed.page;
}

/** The page `input` asks for among the offers `viewer` may see: its conditions, order and bounds. */
export async function offerPage(ctx: ServiceContext, db: Executor, input: ListOffersInput, viewer: Viewer) {
  const { limit, offset } = pageOf(input);
  // The filters are conditions of the projection's raw statement (projection.ts), on its `o` and `e`.
  const t = tablesOf(ctx.tenant.schema);
  const conds: RawBuilder<unknown>[] = [offerVisibleSql(ctx.tenant.schema, viewer)];
  if (input.edition !== undefined) {
    const r = refParams(input.edition);
    conds.push(sql`(e.uuid = ${r.id}::uuid or e.alias = ${r.alias})`);
  }
  if (input.category !== undefined) {
    const r = refParams(input.category);
    conds.push(sql`exists (select 1 from ${t('offer_categories')} fc join ${t('categories')} c on c.uuid = fc.category_uuid
      where fc.offer_uuid = o.uuid and (c.uuid = ${r.id}::uuid or c.alias = ${r.alias}))`);
  }
  if (input.host !== undefined) {
    const r = refParams(input.host);
    conds.push(sql`exists (select 1 from ${t('offer_hosts')} fh join ${t('organisers')} g on g.uuid = fh.organiser_uuid
      where fh.offer_uuid = o.uuid and (g.uuid = ${r.id}::uuid or g.alias = ${r.alias}))`);
  }
  if (input.q) {
    const q = likePattern(input.q);
    conds.push(sql`(o.name ilike ${q} or o.teaser ilike ${q} or o.description ilike ${q} or o.meeting_point ilike ${q})`);
  }
  // D10: an offer matches when any wanted place is among its places (matchesStatusFilter), as array overlap.
  if (input.status) conds.push(sql`o.places && ${input.status}::text[]`);
  if (input.modifiedSince) conds.push(sql`o.modified_at >= ${input.modifiedSince.instant}`);
  if (input.from || input.until) {
    const matching = await offersTouchingDays(ctx, db, input.from?.day ?? null, input.until?.day ?? null);
    conds.push(sql`o.uuid = any(${matching}::uuid[])`);
  }
  // The team's unfiltered list sorts every offer of the municipality (pageSql's `everyOffer`).
  const everyOffer = conds.length === 1 && offerReaderRole(viewer) !== null;
  return { where: sql.join(conds, sql` and `), orderBy: orderByOf(input), limit, offset, everyOffer };
}

// Issue 25: a page's statement is built from its fragments and compiled once per schema, viewer and query, then
// reused (building and compiling the ~6 KB statement was ~7 % of the API's CPU for a page read with a token). The
// key holds everything the text and the parameters come from: the schema, the viewer's kind and organisers, the
// tenant's url template and first host (offer-json.ts), the query. Pages with `from`/`until` are compiled each
// time: their condition holds the offers a look-up found for this request (dates.ts).
const compiledPages = new LRUCache<string, CompiledQuery<unknown>>({ max: 2_000 });

function pageKey(ctx: ServiceContext, input: ListOffersInput, viewer: Viewer): string | null {
  if (input.from || input.until) return null;
  const organisers = viewer.kind === 'organiser' ? viewer.organiserIds.join(',') : '';
  return [ctx.tenant.schema, viewer.kind, organisers, ctx.tenant.settings.offerUrlTemplate ?? '', ctx.tenant.hosts[0]?.host ?? '', JSON.stringify(input)].join('\u0000');
}

async function compiledPage<R>(ctx: ServiceContext, db: Executor, input: ListOffersInput, viewer: Viewer,
  build: (page: Awaited<ReturnType<typeof offerPage>>) => RawBuilder<R>): Promise<CompiledQuery<R>> {
  const key = pageKey(ctx, input, viewer);
  const cached = key === null ? undefined : compiledPages.get(key);
  if (cached) return cached as CompiledQuery<R>;
  const compiled = build(await offerPage(ctx, db, input, viewer)).compile(db);
  if (key !== null) compiledPages.set(key, compiled);
  return compiled;
}

/**
 * The page and how many offers match (issue 24's paging headers), counted by the page's own statement; only a page
 * past the end, which has no row to carry the count, asks once more for the first row (and only for the API).
 */
async function loadOfferList(ctx: ServiceContext, input: ListOffersInput, viewer: Viewer): Promise<Listed> {
  const db = dbOf(ctx.em);
  const now = new Date();
  const { offset } = pageOf(input);
  const pastTheEnd = async (count: (first: Awaited<ReturnType<typeof offerPage>>) => Promise<number | null | undefined>) =>
    (offset > 0 && ctx.paging ? (await count(await offerPage(ctx, db, input, viewer))) ?? 0 : 0);
  // The public page is written whole by PostgreSQL and sent as it is (public-page.ts, issue 10.2).
  if (viewer.kind === 'anonymous' || viewer.kind === 'legacy') {
    const query = await compiledPage(ctx, db, input, viewer, (p) => prepared(publicPageSql(ctx, p.where, p.orderBy, p.limit, p.offset)));
    const row = (await db.executeQuery(query)).rows[0];
    const total = row?.listTotal ?? await pastTheEnd(async (p) => (await prepared(publicPageSql(ctx, p.where, p.orderBy, 1, 0)).execute(db)).rows[0]?.listTotal);
    return { page: finalJson<OfferOut[]>(row?.page ?? '[]'), total };
  }
  // A named statement (platform/db/prepared.ts): parsed once per connection, its plan cached.
  const query = await compiledPage(ctx, db, input, viewer, (p) => prepared(projection(ctx, viewer, p.where, p.orderBy, p.limit, p.offset, p.everyOffer)));
  const res = await db.executeQuery(query);
  const total = res.rows[0]?.listTotal ?? await pastTheEnd(async (p) => (await prepared(projection(ctx, viewer, p.where, p.orderBy, 1, 0, p.everyOffer)).execute(db)).rows[0]?.listTotal);
  return { page: finalJson<OfferOut[]>(`[${res.rows.map((r) => offerJson(viewer, r, now)).join(',')}]`), total };
}

async function readOffer(ctx: ServiceContext, db: Executor, uuid: string, viewer: Viewer): Promise<OfferOut | null> {
  const now = new Date();
  const where = sql`o.uuid = ${uuid}::uuid and ${offerVisibleSql(ctx.tenant.schema, viewer)}`;
  const res = await prepared(projection(ctx, viewer, where, sql`o.uuid`, 1, 0)).execute(db);
  return res.rows[0] ? finalJson<OfferOut>(offerJson(viewer, res.rows[0], now)) : null;
}

export async function getOffer(ctx: ServiceContext, uuid: string): Promise<OfferOut> {
  const out = await readOffer(ctx, dbOf(ctx.em), uuid, ctx.viewer);
  if (!out) throw offerNotFound(uuid);
  return out;
}

/** The answer to a write: the offer as its writer now sees it. */
export async function writtenOffer(ctx: ServiceContext, uuid: string): Promise<OfferOut> {
  const out = await readOffer(ctx, dbOf(ctx.em), uuid, ctx.viewer);
  if (!out) throw notFound(`No offer with the identifier ${uuid} exists.`);
  return out;
}


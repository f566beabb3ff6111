import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { countsSql, publicFieldsSql } from './offer-json.js';

// The public page of offers (anonymous and legacy callers, spec 4.2) written whole by PostgreSQL as the JSON
// text of the answer (issue 10.2): the public fields of offer-json.ts, nulls omitted (json_strip_nulls,
// spec 1.6), in one text for the page. The service sends the text as it is (platform/http/final-json.ts);
// test/resources/offers/public-page.test.ts holds it equal to the offers read one by one.

/**
 * One page as JSON text, among the offers `where` lets through (access: offerVisibleSql for the viewer).
 *
 * Everything but the filters' values is written into the text as literals (the page's size and offset, the
 * url, the places): the default page is then a statement without parameters, which PostgreSQL plans once per
 * connection and keeps (prepared.ts). With parameters it plans five times before it settles on a generic plan,
 * each time ~3 ms here: with traffic spread over hundreds of municipalities, a connection rarely sees one
 * schema's page five times (bench/tenants.ts). Each page size and offset is its own statement; prepared.ts caps
 * how many a connection keeps.
 */
export function publicPageSql(ctx: ServiceContext, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  // The page is chosen first (its uuids in order), and only its rows are written out: PostgreSQL would
  // otherwise build every matching offer's JSON and count its places before the sort and the limit. The same
  // step counts the matching offers for the paging headers (issue 24), no second round trip.
  return sql<{ page: string; listTotal: number | null }>`
    with page as (
      select o.uuid as id, row_number() over (order by ${orderBy}) as n, count(*) over ()::int as total
      from ${t('offers')} o
      join ${t('editions')} e on e.uuid = o.edition_uuid
      left join lateral (select min(d."begin") as first_begin from ${t('offer_dates')} d where d.offer_uuid = o.uuid) fd on true
      where ${where}
      order by ${orderBy}
      limit ${sql.lit(limit)} offset ${sql.lit(offset)}
    )
    select coalesce(json_agg(json_strip_nulls(json_build_object(${publicFieldsSql(ctx)}
      )) order by p.n), '[]'::json)::text as page, max(p.total) as "listTotal"
    from page p
    join ${t('offers')} o on o.uuid = p.id
    join ${t('editions')} e on e.uuid = o.edition_uuid
    left join lateral ${countsSql(ctx, false)} c on true`;
}

import { sql, type RawBuilder, type tablesOf } from '../../platform/db/sql.js';

/**
 * The `page` step of an offer list (the public page and the projection with a token): the page's offer uuids in
 * order (`id`, `n`) and how many offers match (`total`, the paging headers' count, issue 24). Chosen first, so
 * that only the page's rows are written out (issue 25); size and offset as literals, so the default page is a
 * statement without parameters (planned once per connection).
 */
export function offerPage(t: ReturnType<typeof tablesOf>, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number): RawBuilder<unknown> {
  return sql`page as (
      select o.uuid as id, row_number() over (order by ${orderBy}) as n, count(*) over ()::int as total
      from ${t('offers')} o
      join ${t('editions')} e on e.uuid = o.edition_uuid
      left join lateral (select min(d."begin") as first_begin from ${t('offer_dates')} d where d.offer_uuid = o.uuid) fd on true
      where ${where}
      order by ${orderBy}
      limit ${sql.lit(limit)} offset ${sql.lit(offset)}
    )`;
}

import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { countsSql, pageSql, publicFieldsSql } from './offer-json.js';

// The public page of offers (anonymous and legacy callers, spec 4.2) written whole by PostgreSQL as the JSON
// text of the answer (issue 10.2): the public fields of offer-json.ts, nulls omitted (json_strip_nulls,
// spec 1.6), in one text for the page. The service sends the text as it is (platform/http/final-json.ts);
// test/resources/offers/public-page.test.ts holds it equal to the offers read one by one.

/** One page as JSON text, among the offers `where` lets through (access: offerVisibleSql for the viewer). */
export function publicPageSql(ctx: ServiceContext, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  return sql<{ page: string; listTotal: number | null }>`
    select coalesce(json_agg(json_strip_nulls(json_build_object(${publicFieldsSql(ctx)}
      )) order by p.n), '[]'::json)::text as page, max(p.total) as "listTotal"
    from ${pageSql(ctx, where, orderBy, limit, offset)} p
    join ${t('offers')} o on o.uuid = p.id
    join ${t('editions')} e on e.uuid = o.edition_uuid
    left join lateral ${countsSql(ctx, false)} c on true`;
}

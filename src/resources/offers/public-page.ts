import { OFFER_PLACES } from '../../domain/offer-workflow.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { apiTimestampSql } from '../../platform/http/dates.js';

// The public page of offers (anonymous and legacy callers, spec 4.2) written whole by PostgreSQL as the JSON
// text of the answer (issue 10.2): the fields, their order and the rules of `toOut` (projection.ts) for a
// viewer without a role: status in the workflow's order, vacancies and fullyBooked from the confirmed
// applications (D10), the offer's url, nulls omitted (json_strip_nulls, spec 1.6). The service sends the
// text as it is (platform/http/final-json.ts); test/resources/offers/public-page.test.ts holds it
// equal to `toOut`'s answer.

/**
 * The offer's page on the municipality's website (D2 offerUrlTemplate, else its first host). An alias holds only
 * lower-case letters, digits and hyphens (D10), which encodeURIComponent leaves as they are.
 */
function offerUrlSql(ctx: ServiceContext): RawBuilder<string | null> {
  const template = ctx.tenant.settings.offerUrlTemplate;
  if (template) return sql<string>`replace(${sql.lit(template)}::text, '{alias}', o.alias)`;
  const host = ctx.tenant.hosts[0]?.host;
  return host ? sql<string>`(${sql.lit(`https://${host}/angebote/`)}::text || o.alias)` : sql<null>`null::text`;
}

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
  const ref = (a: string) => sql`json_build_object('uuid', ${sql.ref(`${a}.uuid`)}, 'name', ${sql.ref(`${a}.name`)}, 'alias', ${sql.ref(`${a}.alias`)})`;
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
    select coalesce(json_agg(json_strip_nulls(json_build_object(
        'uuid', o.uuid, 'name', o.name, 'alias', o.alias, 'edition', ${ref('e')},
        'hosts', coalesce((select json_agg(${ref('g')} order by h.position, g.name)
          from ${t('offer_hosts')} h join ${t('organisers')} g on g.uuid = h.organiser_uuid where h.offer_uuid = o.uuid), '[]'::json),
        'status', coalesce((select json_agg(pl order by i) from unnest(array[${sql.join(OFFER_PLACES.map((p) => sql.lit(p)))}]::text[]) with ordinality as u(pl, i)
          where pl = any(o.places)), '[]'::json),
        'teaser', o.teaser, 'description', o.description,
        'dates', coalesce((select json_agg(json_build_object('uuid', d.uuid, 'begin', ${apiTimestampSql('d.begin')},
            'end', ${apiTimestampSql('d.end')}, 'recurrence', d.recurrence) order by d.position, d."begin")
          from ${t('offer_dates')} d where d.offer_uuid = o.uuid), '[]'::json),
        'fee', o.fee, 'minAge', o.min_age, 'maxAge', o.max_age, 'minParticipants', o.min_participants,
        'maxParticipants', o.max_participants,
        'vacancies', case when o.max_participants is not null then greatest(0, o.max_participants - c.n) end,
        'fullyBooked', coalesce(o.max_participants - c.n <= 0, false),
        'requiresApplication', o.requires_application, 'onlineApplication', o.online_application,
        'applicationDeadline', ${apiTimestampSql('o.application_deadline')}, 'applyText', o.apply_text,
        'meetingPoint', o.meeting_point, 'meetingAddress', o.meeting_address,
        'meetingLat', o.meeting_lat, 'meetingLng', o.meeting_lng, 'bring', o.bring,
        'wheelchairAccessible', o.wheelchair_accessible,
        'categories', coalesce((select json_agg(${ref('k')} order by oc.position, k.name)
          from ${t('offer_categories')} oc join ${t('categories')} k on k.uuid = oc.category_uuid where oc.offer_uuid = o.uuid), '[]'::json),
        'url', ${offerUrlSql(ctx)}, 'media', coalesce(o.media, '[]'::jsonb),
        'createdAt', ${apiTimestampSql('o.created_at')}, 'modifiedAt', ${apiTimestampSql('o.modified_at')}
      )) order by p.n), '[]'::json)::text as page, max(p.total) as "listTotal"
    from page p
    join ${t('offers')} o on o.uuid = p.id
    join ${t('editions')} e on e.uuid = o.edition_uuid
    left join lateral (select count(*)::int as n from ${t('attendances')} a where a.offer_uuid = o.uuid and a.status = 'confirmed') c on true`;
}

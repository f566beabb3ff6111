import { ATTENDANCE_STATES } from '../../domain/attendance-states.js';
import { OFFER_PLACES } from '../../domain/offer-workflow.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { apiTimestampSql } from '../../platform/http/dates.js';

// The offer's fields as PostgreSQL writes them into the answer's JSON text (issue 10.2 the public page; issue 25
// every viewer's page and offer): in the answer's order, with the rules of the domain written in SQL: status in
// the workflow's order (normalizePlaces), vacancies, fullyBooked and overbooked from the confirmed applications
// (D10, domain/participant-list.ts), the applications per state, the offer's url. The answer is sent as the text
// (platform/http/final-json.ts); test/resources/offers/offer-json.test.ts holds every field to the domain's
// functions. Every fragment reads the offer as `o`, its edition as `e` and its applications' counts as `c`
// (`confirmed`, and `states` for the team, from `countsSql`).

const ref = (a: string) => sql`json_build_object('uuid', ${sql.ref(`${a}.uuid`)}, 'name', ${sql.ref(`${a}.name`)}, 'alias', ${sql.ref(`${a}.alias`)})`;

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
 * The applications of offer `o` counted (a lateral subquery, joined as `c`): `confirmed`, and with `perState` a
 * JSON object of every state's count (0 where none), the team's `attendances`.
 */
export function countsSql(ctx: ServiceContext, perState: boolean): RawBuilder<unknown> {
  const t = tablesOf(ctx.tenant.schema);
  if (!perState) return sql`(select count(*)::int as confirmed from ${t('attendances')} a where a.offer_uuid = o.uuid and a.status = 'confirmed')`;
  const states = sql.join(ATTENDANCE_STATES.map((s) => sql`${sql.lit(s)}::text, count(*) filter (where a.status = ${sql.lit(s)})::int`));
  return sql`(select count(*) filter (where a.status = 'confirmed')::int as confirmed, json_build_object(${states}) as states
    from ${t('attendances')} a where a.offer_uuid = o.uuid)`;
}

/**
 * The page (issue 25): its offers' uuids in order (`n`), their first dates (`first_begin`) and how many offers
 * match (`total`, for the paging headers, issue 24), a subquery joined as `p`. The page is chosen first and only
 * its rows are written out: PostgreSQL would otherwise build every matching offer's JSON and count its places
 * before the sort and the limit. Its size and offset are literals, so the default page is a statement without
 * parameters, which PostgreSQL plans once per connection and keeps (prepared.ts) whatever the session's
 * plan_cache_mode (connections.ts): a plan is ~3 ms here, the page's execution less (bench/tenants.ts).
 * `everyOffer`: the conditions let (nearly) all of the municipality's offers through (the team's unfiltered
 * list), so the first dates are taken in one grouped pass over the dates instead of one look-up per offer (630
 * offers: 1.8 instead of 2.8 ms of PostgreSQL CPU for the page step); a narrower list looks up only its own.
 */
export function pageSql(ctx: ServiceContext, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number, everyOffer = false): RawBuilder<unknown> {
  const t = tablesOf(ctx.tenant.schema);
  const firstDates = everyOffer
    ? sql`left join (select d.offer_uuid, min(d."begin") as first_begin from ${t('offer_dates')} d group by d.offer_uuid) fd on fd.offer_uuid = o.uuid`
    : sql`left join lateral (select min(d."begin") as first_begin from ${t('offer_dates')} d where d.offer_uuid = o.uuid) fd on true`;
  return sql`(select o.uuid as id, fd.first_begin, row_number() over (order by ${orderBy}) as n, count(*) over ()::int as total
      from ${t('offers')} o
      join ${t('editions')} e on e.uuid = o.edition_uuid
      ${firstDates}
      where ${where}
      order by ${orderBy}
      limit ${sql.lit(limit)} offset ${sql.lit(offset)})`;
}

/** The fields every viewer reads, as `json_build_object`'s arguments (name, value, ...), in the answer's order. */
export function publicFieldsSql(ctx: ServiceContext): RawBuilder<unknown> {
  const t = tablesOf(ctx.tenant.schema);
  return sql`'uuid', o.uuid, 'name', o.name, 'alias', o.alias, 'edition', ${ref('e')},
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
    'vacancies', case when o.max_participants is not null then greatest(0, o.max_participants - c.confirmed) end,
    'fullyBooked', coalesce(o.max_participants - c.confirmed <= 0, false),
    'requiresApplication', o.requires_application, 'onlineApplication', o.online_application,
    'applicationDeadline', ${apiTimestampSql('o.application_deadline')}, 'applyText', o.apply_text,
    'meetingPoint', o.meeting_point, 'meetingAddress', o.meeting_address,
    'meetingLat', o.meeting_lat, 'meetingLng', o.meeting_lng, 'bring', o.bring,
    'wheelchairAccessible', o.wheelchair_accessible,
    'categories', coalesce((select json_agg(${ref('k')} order by oc.position, k.name)
      from ${t('offer_categories')} oc join ${t('categories')} k on k.uuid = oc.category_uuid where oc.offer_uuid = o.uuid), '[]'::json),
    'url', ${offerUrlSql(ctx)}, 'media', coalesce(o.media, '[]'::jsonb),
    'createdAt', ${apiTimestampSql('o.created_at')}, 'modifiedAt', ${apiTimestampSql('o.modified_at')}`;
}

/** A website token's field after the public ones (D11: it builds the families' form). */
export const websiteFieldsSql = sql`'applicationQuestions', coalesce(o.application_questions, '[]'::jsonb)`;

/** The team's fields after the public ones, up to `transitions` (which the domain decides in Node). */
export const teamFieldsSql = sql`'publish', o.publish, 'comment', o.comment, 'contact', o.contact,
    'attendances', c.states,
    'overbooked', case when o.max_participants is null then 0 else greatest(0, c.confirmed - o.max_participants) end,
    'applicationQuestions', coalesce(o.application_questions, '[]'::jsonb)`;

/** The team's fields after `transitions`: the variant's base and the variants (spec 2.3). */
export function teamTailSql(ctx: ServiceContext): RawBuilder<unknown> {
  const t = tablesOf(ctx.tenant.schema);
  return sql`'variantBase', (select ${ref('b')} from ${t('offers')} b where b.uuid = o.variant_base_uuid),
    'variants', coalesce((select json_agg(${ref('v')} order by v.created_at, v.uuid) from ${t('offers')} v where v.variant_base_uuid = o.uuid), '[]'::json)`;
}

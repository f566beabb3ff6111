import { ATTENDANCE_STATES, type AttendanceState } from '../../domain/attendance-states.js';
import { normalizePlaces, offerTransitionsFor, type OfferPlace } from '../../domain/offer-workflow.js';
import { fullyBooked, overbooked, vacancies } from '../../domain/participant-list.js';
import type { ServiceContext, Viewer } from '../../platform/context.js';
import { sql, tablesOf, type RawBuilder, type TenantDB } from '../../platform/db/sql.js';
import { apiTimestampSql } from '../../platform/http/dates.js';
import { omitNulls } from '../../platform/http/response.js';
import { offerReaderRole, ownsOffer } from '../../engines/access/index.js';
import type { ApplicationQuestion } from './entity.js';
import type { OfferOut } from './schema.js';

// The offer as the API writes it (spec 2.3, 4.2; D5, D10): one SQL projection per page, every reference and
// count joined in and every timestamp formatted by PostgreSQL (apiTimestampSql), and `toOut` for the rules
// PostgreSQL does not know (vacancies, transitions). What the viewer sees is src/engines/access/'s.
// It stays a raw SQL template: a json projection with correlated subqueries, sent as one named statement
// (platform/db/prepared.ts) whose text must not change from page to page; its tables come from `tablesOf`.

type Ref = { uuid: string; name?: string; alias?: string };
type Offers = TenantDB['offers'];
/** The columns the projection passes through unchanged (or only renamed), typed from the schema. */
type Stored = {
  uuid: Offers['uuid']; name: Offers['name']; alias: Offers['alias']; teaser: Offers['teaser']; description: Offers['description'];
  fee: Offers['fee']; minAge: Offers['min_age']; maxAge: Offers['max_age']; minParticipants: Offers['min_participants'];
  maxParticipants: Offers['max_participants']; applyText: Offers['apply_text']; meetingPoint: Offers['meeting_point'];
  meetingAddress: Offers['meeting_address']; meetingLat: Offers['meeting_lat']; meetingLng: Offers['meeting_lng']; bring: Offers['bring'];
  comment: Offers['comment']; contact: Offers['contact'];
};
export type Row = Stored & {
  places: OfferPlace[]; publish: 'public' | 'private_link';
  requiresApplication: boolean; onlineApplication: boolean; applicationDeadline: string | null; wheelchairAccessible: boolean;
  media: string[]; applicationQuestions: ApplicationQuestion[];
  createdAt: string; modifiedAt: string; firstBegin: string | null;
  edition: Ref; hosts: Ref[]; categories: Ref[];
  dates: { uuid: string; begin: string; end: string; recurrence: string | null }[];
  variantBase: Ref | null; variants: Ref[];
  /** Applications per state (only states that occur). */
  counts: Partial<Record<AttendanceState, number>>;
};

/** One page of offers as `viewer` reads them, among the rows `where` lets through (access: offerVisibleSql). */
export function projection(ctx: ServiceContext, viewer: Viewer, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number) {
  const t = tablesOf(ctx.tenant.schema);
  // Anonymous callers see neither variants nor counts by state nor the internal fields: their page skips those
  // subqueries and only counts confirmed applications (for vacancies), which PostgreSQL and Node both feel.
  // A website token (D11) sees the public offers with their application questions: it builds the families' form.
  const questions = viewer.kind === 'website' ? sql`o.application_questions` : sql`null::jsonb`;
  const tokenOnly = offerReaderRole(viewer) === null
    ? sql`null::text as comment, null::text as contact, ${questions} as "applicationQuestions", null::json as "variantBase", '[]'::json as variants,
      json_build_object('confirmed', (select count(*)::int from ${t('attendances')} a where a.offer_uuid = o.uuid and a.status = 'confirmed')) as counts`
    : sql`o.comment, o.contact, o.application_questions as "applicationQuestions",
      json_strip_nulls((select json_build_object('uuid', b.uuid, 'name', b.name, 'alias', b.alias) from ${t('offers')} b where b.uuid = o.variant_base_uuid)) as "variantBase",
      json_strip_nulls(coalesce((select json_agg(json_build_object('uuid', v.uuid, 'name', v.name, 'alias', v.alias) order by v.created_at, v.uuid)
        from ${t('offers')} v where v.variant_base_uuid = o.uuid), '[]'::json)) as variants,
      coalesce((select json_object_agg(ac.status, ac.n) from (select a.status, count(*)::int as n
        from ${t('attendances')} a where a.offer_uuid = o.uuid group by a.status) ac), '{}'::json) as counts`;
  // `listTotal`: how many offers the conditions match, for the paging headers (issue 24). Issue 25: the page is
  // chosen first (its uuids in order, and the count), and only its rows are written out, as the public page does
  // (public-page.ts): the count over all matching offers kept PostgreSQL from leaving the subqueries of the
  // fields until after the limit, so a token's page built every matching offer's fields. The page's size and
  // offset are literals, so the default page is a statement without parameters (planned once per connection).
  return sql<Row & { listTotal: number }>`
    with page as (
      select o.uuid as id, row_number() over (order by ${orderBy}) as n, count(*) over ()::int as total
      from ${t('offers')} o
      join ${t('editions')} e on e.uuid = o.edition_uuid
      left join lateral (select min(d."begin") as first_begin from ${t('offer_dates')} d where d.offer_uuid = o.uuid) fd on true
      where ${where}
      order by ${orderBy}
      limit ${sql.lit(limit)} offset ${sql.lit(offset)}
    )
    select o.uuid, p.total as "listTotal", o.name, o.alias, o.places, o.publish, o.teaser, o.description, o.fee,
      o.min_age as "minAge", o.max_age as "maxAge", o.min_participants as "minParticipants",
      o.max_participants as "maxParticipants", o.requires_application as "requiresApplication",
      o.online_application as "onlineApplication", ${apiTimestampSql('o.application_deadline')} as "applicationDeadline",
      o.apply_text as "applyText", o.meeting_point as "meetingPoint", o.meeting_address as "meetingAddress",
      o.meeting_lat as "meetingLat", o.meeting_lng as "meetingLng", o.bring,
      o.wheelchair_accessible as "wheelchairAccessible", o.media, ${apiTimestampSql('o.created_at')} as "createdAt",
      ${apiTimestampSql('o.modified_at')} as "modifiedAt", fd.first_begin::text as "firstBegin",
      json_strip_nulls(json_build_object('uuid', e.uuid, 'name', e.name, 'alias', e.alias)) as edition,
      json_strip_nulls(coalesce((select json_agg(json_build_object('uuid', g.uuid, 'name', g.name, 'alias', g.alias) order by h.position, g.name)
        from ${t('offer_hosts')} h join ${t('organisers')} g on g.uuid = h.organiser_uuid where h.offer_uuid = o.uuid), '[]'::json)) as hosts,
      json_strip_nulls(coalesce((select json_agg(json_build_object('uuid', c.uuid, 'name', c.name, 'alias', c.alias) order by oc.position, c.name)
        from ${t('offer_categories')} oc join ${t('categories')} c on c.uuid = oc.category_uuid where oc.offer_uuid = o.uuid), '[]'::json)) as categories,
      json_strip_nulls(coalesce((select json_agg(json_build_object('uuid', d.uuid, 'begin', ${apiTimestampSql('d.begin')}, 'end', ${apiTimestampSql('d.end')}, 'recurrence', d.recurrence)
          order by d.position, d."begin")
        from ${t('offer_dates')} d where d.offer_uuid = o.uuid), '[]'::json)) as dates,
      ${tokenOnly}
    from page p
    join ${t('offers')} o on o.uuid = p.id
    join ${t('editions')} e on e.uuid = o.edition_uuid
    left join lateral (select min(d."begin") as first_begin from ${t('offer_dates')} d where d.offer_uuid = o.uuid) fd on true
    order by p.n`;
}

function offerUrl(ctx: ServiceContext, alias: string): string | undefined {
  const template = ctx.tenant.settings.offerUrlTemplate;
  if (template) return template.replaceAll('{alias}', encodeURIComponent(alias));
  const host = ctx.tenant.hosts[0]?.host;
  return host ? `https://${host}/angebote/${alias}` : undefined;
}

export function toOut(ctx: ServiceContext, viewer: Viewer, r: Row, now: Date): OfferOut {
  // D10: vacancies = maxParticipants − confirmed applications (held-back confirmations hold a place too).
  const confirmed = r.counts.confirmed ?? 0;
  const vac = vacancies(r.maxParticipants, confirmed);
  const out: Record<string, unknown> = {
    uuid: r.uuid,
    name: r.name,
    alias: r.alias,
    edition: r.edition,
    hosts: r.hosts,
    status: normalizePlaces(r.places),
    teaser: r.teaser,
    description: r.description,
    dates: r.dates,
    fee: r.fee,
    minAge: r.minAge,
    maxAge: r.maxAge,
    minParticipants: r.minParticipants,
    maxParticipants: r.maxParticipants,
    vacancies: vac,
    fullyBooked: fullyBooked(r.maxParticipants, confirmed),
    requiresApplication: r.requiresApplication,
    onlineApplication: r.onlineApplication,
    applicationDeadline: r.applicationDeadline,
    applyText: r.applyText,
    meetingPoint: r.meetingPoint,
    meetingAddress: r.meetingAddress,
    meetingLat: r.meetingLat == null ? null : Number(r.meetingLat),
    meetingLng: r.meetingLng == null ? null : Number(r.meetingLng),
    bring: r.bring,
    wheelchairAccessible: r.wheelchairAccessible,
    categories: r.categories,
    url: offerUrl(ctx, r.alias),
    media: r.media ?? [],
    createdAt: r.createdAt,
    modifiedAt: r.modifiedAt,
  };
  const role = offerReaderRole(viewer);
  if (viewer.kind === 'website') out.applicationQuestions = omitNulls(r.applicationQuestions ?? []);
  if (role !== null) {
    const ownOffer = ownsOffer(viewer, r.hosts.map((h) => h.uuid));
    out.publish = r.publish;
    out.comment = r.comment;
    out.contact = r.contact;
    out.attendances = Object.fromEntries(ATTENDANCE_STATES.map((s) => [s, r.counts[s] ?? 0]));
    out.overbooked = overbooked(r.maxParticipants, confirmed);
    out.applicationQuestions = omitNulls(r.applicationQuestions ?? []);
    out.transitions = offerTransitionsFor({
      role, ownOffer, places: r.places, now, firstDateBegin: r.firstBegin ? new Date(r.firstBegin) : null,
    });
    out.variantBase = r.variantBase;
    out.variants = r.variants;
  }
  // The answer in its final form (spec 1.6: null fields omitted; nested ones by json_strip_nulls above), so the
  // list needs no output pass in production (finalResponse, platform/http/response.ts).
  const final: Record<string, unknown> = {};
  for (const k in out) if (out[k] != null) final[k] = out[k];
  return final as OfferOut;
}


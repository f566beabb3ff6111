import { ATTENDANCE_STATES, type AttendanceState } from '../../domain/attendance-states.js';
import {
  applyOfferTransition, normalizePlaces, offerTransitionsFor, type OfferPlace, type OfferRole, type OfferTransition,
} from '../../domain/offer-workflow.js';
import { fullyBooked, overbooked, vacancies } from '../../domain/participant-list.js';
import { expandOccurrences, touchesDays } from '../../domain/recurrence.js';
import type { Actor, ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { assertAliasFree, deriveAlias, retryDerivedAlias } from '../../platform/db/aliases.js';
import { prepared } from '../../platform/db/prepared.js';
import { GERMAN, likePattern } from '../../platform/db/search.js';
import { qualified, sql, type Executor, type RawBuilder } from '../../platform/db/sql.js';
import { berlinDayBounds, ZONE } from '../../platform/http/dates.js';
import { publicCacheMs, TtlCache } from '../../platform/cache/ttl-cache.js';
import { pageOf } from '../../platform/http/fields.js';
import { omitNulls } from '../../platform/http/response.js';
import { newUuid, parseId } from '../../platform/http/ids.js';
import { queueMail } from '../../platform/mail/outbox.js';
import { recordEvent, recordEvents } from '../../platform/events/events.js';
import { assertPatchNotEmpty, sentKeys, wasSent } from '../../platform/http/patch.js';
import { conflict, forbidden, invalid, notFound, Problem, unprocessable, violation } from '../../platform/http/problem.js';
import { DomainError } from '../../domain/errors.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { lockOffer, refillAfterCapacityChange } from '../../engines/participant-list/index.js';
import { editionOnlineSql } from '../../engines/edition-phases/index.js';
import { Offer, OfferDate, type ApplicationQuestion } from './entity.js';
import type {
  CopyOfferInput, CreateOfferInput, ListOffersInput, OfferDateIn, OfferOut, TransitionOfferInput, UpdateOfferInput,
} from './schema.js';

// Offers (spec 2.3, 4.2; D5, D10). Reads are one SQL projection per page (plus, with `from`/`until`, one
// look-up of the candidate dates whose recurrences are expanded by the pure rules); writes go through the
// entities in one transaction.

type Ref = { uuid: string; name?: string; alias?: string };
type Row = {
  uuid: string; name: string; alias: string; places: OfferPlace[]; publish: 'public' | 'private_link';
  teaser: string | null; description: string | null; fee: number | null; minAge: number | null; maxAge: number | null;
  minParticipants: number | null; maxParticipants: number | null; requiresApplication: boolean; onlineApplication: boolean;
  applicationDeadline: string | null; applyText: string | null; meetingPoint: string | null; meetingAddress: string | null;
  meetingLat: number | null; meetingLng: number | null; bring: string | null; wheelchairAccessible: boolean;
  media: string[]; comment: string | null; contact: string | null; applicationQuestions: ApplicationQuestion[];
  createdAt: string; modifiedAt: string; firstBegin: string | null;
  edition: Ref; hosts: Ref[]; categories: Ref[];
  dates: { uuid: string; begin: string; end: string; recurrence: string | null }[];
  variantBase: Ref | null; variants: Ref[];
  /** Applications per state (only states that occur). */
  counts: Partial<Record<AttendanceState, number>>;
};

// ---- who sees what --------------------------------------------------------------------------------

type Viewer = { kind: 'public' } | { kind: 'admin' } | { kind: 'organiser'; organiserIds: string[] };

function viewerOf(actor: Actor | null): Viewer {
  if (!actor || actor.access === 'legacy') return { kind: 'public' };
  if (actor.role === 'admin') return { kind: 'admin' };
  return { kind: 'organiser', organiserIds: actor.organiserIds };
}

function tableOf(ctx: ServiceContext, table: string) {
  return qualified(ctx.tenant.schema, table);
}

/** Rows the viewer may see (spec 4.2, D5). */
function visibility(ctx: ServiceContext, viewer: Viewer): RawBuilder<unknown> {
  switch (viewer.kind) {
    case 'admin':
      return sql`true`;
    case 'public':
      return sql`('published' = any(o.places) and o.publish = 'public' and ${editionOnlineSql(ctx.tenant.schema, 'e')})`;
    case 'organiser':
      return sql`('published' = any(o.places) or exists (select 1 from ${tableOf(ctx, 'offer_hosts')} vh
        where vh.offer_uuid = o.uuid and vh.organiser_uuid = any(${viewer.organiserIds}::uuid[])))`;
  }
}

// ---- the projection -------------------------------------------------------------------------------

/**
 * A timestamptz as the API writes it (spec 1.7, D10): Berlin wall-clock time, whole seconds, with the offset of
 * that instant, e.g. `2027-07-05T09:00:00+02:00`; the same text as formatTimestamp, but made by PostgreSQL in the
 * page's query. Formatting with luxon in Node cost ~150 µs per value, over half the CPU of a 200-offer page
 * (bench/README.md).
 */
function apiTimestampSql(column: string): RawBuilder<string> {
  const col = sql.ref(column);
  const local = sql`(${col} at time zone ${sql.lit(ZONE)})`;
  const utc = sql`(${col} at time zone 'UTC')`;
  return sql<string>`(to_char(${local}, 'YYYY-MM-DD"T"HH24:MI:SS')
    || case when ${local} < ${utc} then '-' else '+' end || to_char(greatest(${local} - ${utc}, ${utc} - ${local}), 'HH24:MI'))`;
}

function projection(ctx: ServiceContext, viewer: Viewer, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number) {
  const t = (name: string) => tableOf(ctx, name);
  // Anonymous callers see neither variants nor counts by state nor the internal fields: their page skips those
  // subqueries and only counts confirmed applications (for vacancies), which PostgreSQL and Node both feel.
  const tokenOnly = viewer.kind === 'public'
    ? sql`null::text as comment, null::text as contact, null::jsonb as "applicationQuestions", null::json as "variantBase", '[]'::json as variants,
      json_build_object('confirmed', (select count(*)::int from ${t('attendances')} a where a.offer_uuid = o.uuid and a.status = 'confirmed')) as counts`
    : sql`o.comment, o.contact, o.application_questions as "applicationQuestions",
      json_strip_nulls((select json_build_object('uuid', b.uuid, 'name', b.name, 'alias', b.alias) from ${t('offers')} b where b.uuid = o.variant_base_uuid)) as "variantBase",
      json_strip_nulls(coalesce((select json_agg(json_build_object('uuid', v.uuid, 'name', v.name, 'alias', v.alias) order by v.created_at, v.uuid)
        from ${t('offers')} v where v.variant_base_uuid = o.uuid), '[]'::json)) as variants,
      coalesce((select json_object_agg(ac.status, ac.n) from (select a.status, count(*)::int as n
        from ${t('attendances')} a where a.offer_uuid = o.uuid group by a.status) ac), '{}'::json) as counts`;
  return sql<Row>`
    select o.uuid, o.name, o.alias, o.places, o.publish, o.teaser, o.description, o.fee,
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
    from ${t('offers')} o
    join ${t('editions')} e on e.uuid = o.edition_uuid
    left join lateral (select min(d."begin") as first_begin from ${t('offer_dates')} d where d.offer_uuid = o.uuid) fd on true
    where ${where}
    order by ${orderBy}
    limit ${limit} offset ${offset}`;
}

function offerUrl(ctx: ServiceContext, alias: string): string | undefined {
  const template = ctx.tenant.settings.offerUrlTemplate;
  if (template) return template.replaceAll('{alias}', encodeURIComponent(alias));
  const host = ctx.tenant.hosts[0]?.host;
  return host ? `https://${host}/angebote/${alias}` : undefined;
}


function toOut(ctx: ServiceContext, viewer: Viewer, r: Row, now: Date): OfferOut {
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
  if (viewer.kind !== 'public') {
    const role: OfferRole = viewer.kind;
    const ownOffer = viewer.kind === 'organiser' && r.hosts.some((h) => viewer.organiserIds.includes(h.uuid));
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

// ---- list -----------------------------------------------------------------------------------------

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

const ONE_YEAR_MS = 366 * 86_400_000;

/** Offers with an occurrence on the Berlin days (D5, D10): coarse SQL pre-filter, exact check with the rules. */
async function offersTouchingDays(ctx: ServiceContext, db: Executor, fromDay: string | null, untilDay: string | null): Promise<string[]> {
  const rangeStart = fromDay ? berlinDayBounds(fromDay).start : null;
  const rangeEnd = untilDay ? berlinDayBounds(untilDay).end : null;
  const rows = await sql<{ offerUuid: string; horizon: Date | null; begin: Date; end: Date; recurrence: string | null }>`
    select d.offer_uuid as "offerUuid", d."begin", d."end", d.recurrence,
      case when d.recurrence is not null then (select max(t.end_at) from ${tableOf(ctx, 'edition_tasks')} t
        where t.edition_uuid = o.edition_uuid) end as horizon
    from ${tableOf(ctx, 'offer_dates')} d join ${tableOf(ctx, 'offers')} o on o.uuid = d.offer_uuid
    where (${rangeEnd}::timestamptz is null or d."begin" < ${rangeEnd})
      and (${rangeStart}::timestamptz is null or d.recurrence is not null or d."end" > ${rangeStart} or d."begin" >= ${rangeStart})`.execute(db);
  const hits = new Set<string>();
  for (const r of rows.rows) {
    if (hits.has(r.offerUuid)) continue;
    const begin = new Date(r.begin);
    const horizon = r.horizon ? new Date(r.horizon) : new Date(begin.getTime() + ONE_YEAR_MS);
    const occurrences = expandOccurrences({ begin, end: new Date(r.end), recurrence: r.recurrence, horizon });
    if (touchesDays(occurrences, fromDay, untilDay)) hits.add(r.offerUuid);
  }
  return [...hits];
}

const publicLists = new TtlCache<OfferOut[]>();

/**
 * The list as this caller sees it. Anonymous (and legacy) pages are public and cacheable anyway, so a page
 * is reused for a few seconds per tenant and query (platform/cache/ttl-cache.ts).
 */
export async function listOffers(ctx: ServiceContext, input: ListOffersInput): Promise<OfferOut[]> {
  const viewer = viewerOf(ctx.actor);
  if (viewer.kind !== 'public') return loadOfferList(ctx, input, viewer);
  return publicLists.getOrLoad(`${ctx.tenant.slug}\u0000${JSON.stringify(input)}`, publicCacheMs(), () => loadOfferList(ctx, input, viewer));
}

async function loadOfferList(ctx: ServiceContext, input: ListOffersInput, viewer: Viewer): Promise<OfferOut[]> {
  const db = dbOf(ctx.em);
  const now = new Date();
  const { limit, offset } = pageOf(input);
  const conds: RawBuilder<unknown>[] = [visibility(ctx, viewer)];
  if (input.edition !== undefined) {
    const r = refParams(input.edition);
    conds.push(sql`(e.uuid = ${r.id}::uuid or e.alias = ${r.alias})`);
  }
  if (input.category !== undefined) {
    const r = refParams(input.category);
    conds.push(sql`exists (select 1 from ${tableOf(ctx, 'offer_categories')} fc join ${tableOf(ctx, 'categories')} c on c.uuid = fc.category_uuid
      where fc.offer_uuid = o.uuid and (c.uuid = ${r.id}::uuid or c.alias = ${r.alias}))`);
  }
  if (input.host !== undefined) {
    const r = refParams(input.host);
    conds.push(sql`exists (select 1 from ${tableOf(ctx, 'offer_hosts')} fh join ${tableOf(ctx, 'organisers')} g on g.uuid = fh.organiser_uuid
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
  const where = sql.join(conds, sql` and `);
  // A named statement (platform/db/prepared.ts): parsed once per connection, its plan cached.
  const res = await prepared(projection(ctx, viewer, where, orderByOf(input), limit, offset)).execute(db);
  return res.rows.map((r) => toOut(ctx, viewer, r, now));
}

async function readOffer(ctx: ServiceContext, db: Executor, uuid: string, viewer: Viewer): Promise<OfferOut | null> {
  const now = new Date();
  const where = sql`o.uuid = ${uuid}::uuid and ${visibility(ctx, viewer)}`;
  const res = await prepared(projection(ctx, viewer, where, sql`o.uuid`, 1, 0)).execute(db);
  return res.rows[0] ? toOut(ctx, viewer, res.rows[0], now) : null;
}

export async function getOffer(ctx: ServiceContext, uuid: string): Promise<OfferOut> {
  const out = await readOffer(ctx, dbOf(ctx.em), uuid, viewerOf(ctx.actor));
  if (!out) throw notFound(`No offer with the identifier ${uuid} exists, or you may not see it.`);
  return out;
}

// ---- writes: helpers ------------------------------------------------------------------------------

async function resolveRef(ctx: ServiceContext, db: Executor, table: string, ref: string, field: string, label: string): Promise<string> {
  const id = parseId(ref);
  const res = await sql<{ uuid: string }>`select uuid from ${tableOf(ctx, table)} where uuid = ${id}::uuid or alias = ${ref} limit 1`.execute(db);
  if (!res.rows[0]) throw unprocessable(`${field}: No ${label} with the identifier or alias "${ref.slice(0, 80)}" exists.`);
  return res.rows[0].uuid;
}

async function resolveRefs(ctx: ServiceContext, db: Executor, table: string, refs: string[], field: string, label: string): Promise<string[]> {
  const out: string[] = [];
  for (const [i, ref] of refs.entries()) {
    const uuid = await resolveRef(ctx, db, table, ref, `${field}[${i}]`, label);
    if (!out.includes(uuid)) out.push(uuid);
  }
  return out;
}

function assertOwnHosts(ctx: ServiceContext, hosts: string[]): void {
  const actor = ctx.actor;
  if (!actor || actor.role === 'admin') return;
  if (hosts.length === 0 || hosts.some((h) => !actor.organiserIds.includes(h))) {
    throw forbidden('Organisers may only create and change offers of their own organisers.');
  }
}

async function hostsOf(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<string[]> {
  const res = await sql<{ organiser_uuid: string }>`select organiser_uuid from ${tableOf(ctx, 'offer_hosts')}
    where offer_uuid = ${offerUuid} order by position`.execute(db);
  return res.rows.map((r) => r.organiser_uuid);
}

async function replaceLinks(ctx: ServiceContext, db: Executor, table: 'offer_hosts' | 'offer_categories', offerUuid: string, uuids: string[]) {
  const col = sql.raw(table === 'offer_hosts' ? 'organiser_uuid' : 'category_uuid');
  await sql`delete from ${tableOf(ctx, table)} where offer_uuid = ${offerUuid}`.execute(db);
  for (const [i, u] of uuids.entries()) {
    await sql`insert into ${tableOf(ctx, table)} (offer_uuid, ${col}, position) values (${offerUuid}, ${u}, ${i})`.execute(db);
  }
}

async function copyLinks(ctx: ServiceContext, db: Executor, fromOffer: string, toOffer: string) {
  await sql`insert into ${tableOf(ctx, 'offer_hosts')} (offer_uuid, organiser_uuid, position)
    select ${toOffer}::uuid, organiser_uuid, position from ${tableOf(ctx, 'offer_hosts')} where offer_uuid = ${fromOffer}`.execute(db);
  await sql`insert into ${tableOf(ctx, 'offer_categories')} (offer_uuid, category_uuid, position)
    select ${toOffer}::uuid, category_uuid, position from ${tableOf(ctx, 'offer_categories')} where offer_uuid = ${fromOffer}`.execute(db);
}

function questionsOf(list: NonNullable<CreateOfferInput['applicationQuestions']>): ApplicationQuestion[] {
  return list.map((q) => ({ uuid: q.uuid ?? newUuid(), label: q.label, type: q.type, required: q.required ?? false }));
}

type Em = ServiceContext['em'];

function replaceDates(em: Em, offerUuid: string, dates: OfferDateIn[], existing: OfferDate[]) {
  for (const d of existing) em.remove(d);
  dates.forEach((d, i) =>
    em.create(OfferDate, { uuid: newUuid(), offerUuid, begin: d.begin, end: d.end, recurrence: d.recurrence ?? null, position: i }));
}

const SIMPLE_FIELDS = [
  'teaser', 'description', 'fee', 'minAge', 'maxAge', 'minParticipants', 'maxParticipants', 'applicationDeadline',
  'applyText', 'meetingPoint', 'meetingAddress', 'meetingLat', 'meetingLng', 'bring', 'comment', 'contact',
] as const;
const BOOLEAN_DEFAULTS = { requiresApplication: true, onlineApplication: true, wheelchairAccessible: false } as const;

/** Fields a base offer hands down to its variants on every save (D5). */
const DESCRIPTIVE_COLUMNS = [
  'name', 'teaser', 'description', 'fee', 'min_age', 'max_age', 'apply_text', 'meeting_point', 'meeting_address',
  'meeting_lat', 'meeting_lng', 'bring', 'wheelchair_accessible', 'media', 'requires_application', 'online_application',
  'application_questions', 'contact',
] as const;

async function syncVariants(ctx: ServiceContext, db: Executor, baseUuid: string, renamed: boolean): Promise<{ uuid: string; editionUuid: string; places: OfferPlace[] }[]> {
  const set = sql.join(DESCRIPTIVE_COLUMNS.map((c) => sql`${sql.id(c)} = b.${sql.id(c)}`), sql`, `);
  const res = await sql<{ uuid: string }>`update ${tableOf(ctx, 'offers')} v set ${set}, modified_at = now()
    from ${tableOf(ctx, 'offers')} b where b.uuid = ${baseUuid} and v.variant_base_uuid = b.uuid
    returning v.uuid, v.name, v.was_published as "wasPublished", v.edition_uuid as "editionUuid", v.places`.execute(db);
  for (const { uuid, name, wasPublished } of res.rows as unknown as { uuid: string; name: string; wasPublished: boolean }[]) {
    if (renamed && !wasPublished) {
      // D10: a variant's alias, too, follows renames until it is first published.
      const alias = await deriveAlias(db, ctx.tenant.schema, 'offers', name, uuid);
      await sql`update ${tableOf(ctx, 'offers')} set alias = ${alias} where uuid = ${uuid}`.execute(db);
    }
    for (const table of ['offer_hosts', 'offer_categories'] as const) {
      await sql`delete from ${tableOf(ctx, table)} where offer_uuid = ${uuid}`.execute(db);
    }
    await copyLinks(ctx, db, baseUuid, uuid);
  }
  return res.rows as unknown as { uuid: string; editionUuid: string; places: OfferPlace[] }[];
}

// ---- events (issue 14) ------------------------------------------------------------------------------

/** Fields a base copies to its variants (DESCRIPTIVE_COLUMNS, and the organisers and categories). */
const VARIANT_FIELDS = new Set(['name', 'teaser', 'description', 'fee', 'minAge', 'maxAge', 'applyText', 'meetingPoint', 'meetingAddress',
  'meetingLat', 'meetingLng', 'bring', 'wheelchairAccessible', 'media', 'requiresApplication', 'onlineApplication', 'applicationQuestions',
  'contact', 'hosts', 'categories']);

/** `offer.changed` for the offer (the fields sent) and for each variant its descriptive fields were copied to. */
async function recordOfferChanges(
  ctx: ServiceContext, db: Executor, offer: Offer, variants: { uuid: string; editionUuid: string; places: OfferPlace[] }[], fields: string[],
): Promise<void> {
  const copied = fields.filter((f) => VARIANT_FIELDS.has(f));
  await recordEvents(ctx, db, [
    { type: 'offer.changed', data: { offer: offer.uuid, edition: offer.editionUuid, status: normalizePlaces(offer.places as OfferPlace[]), fields } },
    ...(copied.length === 0 ? [] : variants.map((v) => ({
      type: 'offer.changed' as const, data: { offer: v.uuid, edition: v.editionUuid, status: normalizePlaces(v.places), fields: copied },
    }))),
  ]);
}

/** D5 transitions: publish, cancel and relaunch have their own events; the others change the offer's status. */
async function recordOfferTransition(ctx: ServiceContext, db: Executor, offer: Offer, transition: OfferTransition, notify: boolean): Promise<void> {
  const refs = { offer: offer.uuid, edition: offer.editionUuid, status: normalizePlaces(offer.places as OfferPlace[]) };
  switch (transition) {
    case 'publish': return void await recordEvent(ctx, db, 'offer.published', refs);
    case 'cancel': return void await recordEvent(ctx, db, 'offer.cancelled', { ...refs, notify });
    case 'relaunch': return void await recordEvent(ctx, db, 'offer.relaunched', { ...refs, notify });
    default: return void await recordEvent(ctx, db, 'offer.changed', { ...refs, fields: ['status'] });
  }
}

/** Loads an offer for a write; organisers only touch offers they can see, and only their own (403). */
async function loadForWrite(ctx: ServiceContext, em: Em, uuid: string): Promise<{ offer: Offer; hosts: string[] }> {
  const offer = await em.findOne(Offer, { uuid });
  const notFoundProblem = notFound(`No offer with the identifier ${uuid} exists, or you may not see it.`);
  if (!offer) throw notFoundProblem;
  const hosts = await hostsOf(ctx, dbOf(em), uuid);
  const actor = ctx.actor;
  if (actor && actor.role === 'organiser') {
    const own = hosts.some((h) => actor.organiserIds.includes(h));
    if (!own && !offer.places.includes('published')) throw notFoundProblem;
    if (!own) throw forbidden('Organisers may only change the offers of their own organisers.');
  }
  return { offer, hosts };
}

async function tokenView(ctx: ServiceContext, uuid: string): Promise<OfferOut> {
  const viewer = viewerOf(ctx.actor);
  const out = await readOffer(ctx, dbOf(ctx.em), uuid, viewer.kind === 'public' ? { kind: 'admin' } : viewer);
  if (!out) throw notFound(`No offer with the identifier ${uuid} exists.`);
  return out;
}

// ---- create / update / delete ---------------------------------------------------------------------

/** The offer's stored `media`, or null when there is no such offer. */
export async function storedMedia(ctx: ServiceContext, uuid: string): Promise<string[] | null> {
  const res = await sql<{ media: string[] }>`select media from ${tableOf(ctx, 'offers')} where uuid = ${uuid}::uuid`.execute(dbOf(ctx.em));
  return res.rows[0] ? res.rows[0].media ?? [] : null;
}

export async function createOffer(ctx: ServiceContext, input: CreateOfferInput): Promise<OfferOut> {
  const uuid = newUuid();
  await retryDerivedAlias('offers', !input.alias, () => ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const editionUuid = await resolveRef(ctx, db, 'editions', input.edition, 'edition', 'edition');
    let hosts = input.hosts ? await resolveRefs(ctx, db, 'organisers', input.hosts, 'hosts', 'organiser') : [];
    if (ctx.actor?.role === 'organiser' && !input.hosts) hosts = [...ctx.actor.organiserIds];
    assertOwnHosts(ctx, hosts);
    const categories = input.categories ? await resolveRefs(ctx, db, 'categories', input.categories, 'categories', 'category') : [];
    if (input.alias) await assertAliasFree(db, ctx.tenant.schema, 'offers', input.alias);
    const alias = input.alias ?? (await deriveAlias(db, ctx.tenant.schema, 'offers', input.name));
    const data: Record<string, unknown> = {
      uuid, editionUuid, name: input.name, alias, places: ['draft'], publish: input.publish ?? 'public',
      media: input.media ?? [], applicationQuestions: questionsOf(input.applicationQuestions ?? []),
      variantBaseUuid: null, wasPublished: false,
    };
    for (const f of SIMPLE_FIELDS) data[f] = input[f] ?? null;
    for (const [f, d] of Object.entries(BOOLEAN_DEFAULTS)) data[f] = input[f as keyof typeof BOOLEAN_DEFAULTS] ?? d;
    em.create(Offer, data as never);
    await em.flush();
    replaceDates(em, uuid, input.dates ?? [], []);
    await em.flush();
    await replaceLinks(ctx, db, 'offer_hosts', uuid, hosts);
    await replaceLinks(ctx, db, 'offer_categories', uuid, categories);
  }));
  return tokenView(ctx, uuid);
}

export async function updateOffer(ctx: ServiceContext, input: UpdateOfferInput): Promise<OfferOut> {
  assertPatchNotEmpty(input);
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const { offer } = await loadForWrite(ctx, em, input.uuid);
    const placesBefore = offer.maxParticipants ?? null;
    const editionBefore = offer.editionUuid;
    if (input.edition != null) offer.editionUuid = await resolveRef(ctx, db, 'editions', input.edition, 'edition', 'edition');
    let hosts: string[] | null = null;
    if (wasSent(input, 'hosts')) {
      hosts = input.hosts ? await resolveRefs(ctx, db, 'organisers', input.hosts, 'hosts', 'organiser') : [];
      assertOwnHosts(ctx, hosts);
    }
    let categories: string[] | null = null;
    if (wasSent(input, 'categories')) {
      categories = input.categories ? await resolveRefs(ctx, db, 'categories', input.categories, 'categories', 'category') : [];
    }
    // Cross-field rules against the stored values.
    const minAge = wasSent(input, 'minAge') ? input.minAge ?? null : offer.minAge ?? null;
    const maxAge = wasSent(input, 'maxAge') ? input.maxAge ?? null : offer.maxAge ?? null;
    if (minAge != null && maxAge != null && minAge > maxAge) throw invalid([violation('maxAge', 'maxAge must not be below minAge.', 'range')]);

    const renamed = input.name != null && input.name !== offer.name;
    if (input.name != null) offer.name = input.name;
    if (input.alias != null && input.alias !== offer.alias) {
      if (offer.wasPublished) throw invalid([violation('alias', 'The alias is frozen once the offer was published.', 'invalid')]);
      await assertAliasFree(db, ctx.tenant.schema, 'offers', input.alias, offer.uuid);
      offer.alias = input.alias;
    } else if (!offer.wasPublished && ((renamed && input.alias == null) || (wasSent(input, 'alias') && input.alias === null))) {
      // D10: the alias follows renames until the offer is first published.
      offer.alias = await deriveAlias(db, ctx.tenant.schema, 'offers', offer.name, offer.uuid);
    }
    const o = offer as unknown as Record<string, unknown>;
    for (const f of SIMPLE_FIELDS) if (wasSent(input, f)) o[f] = input[f] ?? null;
    for (const [f, d] of Object.entries(BOOLEAN_DEFAULTS)) {
      const k = f as keyof typeof BOOLEAN_DEFAULTS;
      if (wasSent(input, k)) o[f] = input[k] ?? d;
    }
    if (wasSent(input, 'publish')) offer.publish = input.publish ?? 'public';
    if (wasSent(input, 'media')) offer.media = input.media ?? [];
    if (wasSent(input, 'applicationQuestions')) offer.applicationQuestions = questionsOf(input.applicationQuestions ?? []);
    if (wasSent(input, 'dates')) {
      const existing = await em.find(OfferDate, { offerUuid: offer.uuid });
      replaceDates(em, offer.uuid, input.dates ?? [], existing);
    }
    offer.modifiedAt = new Date();
    await em.flush();
    if (hosts) await replaceLinks(ctx, db, 'offer_hosts', offer.uuid, hosts);
    if (categories) await replaceLinks(ctx, db, 'offer_categories', offer.uuid, categories);
    const variants = await syncVariants(ctx, db, offer.uuid, renamed);
    await recordOfferChanges(ctx, db, offer, variants, sentKeys(input));
    if (wasSent(input, 'maxParticipants')) await refillAfterCapacityChange(ctx, db, offer.uuid, placesBefore, offer.maxParticipants ?? null);
    // D8: unpaid charges follow the applications into the new edition's ledgers.
    if (offer.editionUuid !== editionBefore) {
      const apps = await sql<{ uuid: string }>`select uuid from ${tableOf(ctx, 'attendances')} where offer_uuid = ${offer.uuid}::uuid`.execute(db);
      await syncCharges(db, ctx.tenant.schema, apps.rows.map((r) => r.uuid));
    }
  });
  return tokenView(ctx, input.uuid);
}

export async function deleteOffer(ctx: ServiceContext, uuid: string): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const { offer } = await loadForWrite(ctx, em, uuid);
    // D5: 409 while applications exist.
    const res = await sql<{ n: number }>`select count(*)::int as n from ${tableOf(ctx, 'attendances')} where offer_uuid = ${uuid}`.execute(db);
    if ((res.rows[0]?.n ?? 0) > 0) throw conflict(`The offer ${uuid} has ${res.rows[0].n} applications and cannot be deleted.`);
    await sql`update ${tableOf(ctx, 'offers')} set variant_base_uuid = null where variant_base_uuid = ${uuid}`.execute(db);
    em.remove(offer);
    await em.flush();
  });
}

// ---- workflow -------------------------------------------------------------------------------------

/** E-mail addresses of the families with a confirmed place on the offer. */
async function confirmedFamilies(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<string[]> {
  const res = await sql<{ email: string }>`
    select distinct coalesce(acc.email, p.email) as email
    from ${tableOf(ctx, 'attendances')} a
    join ${tableOf(ctx, 'participants')} p on p.uuid = a.participant_uuid
    left join ${tableOf(ctx, 'accounts')} acc on acc.uuid = p.account_uuid
    where a.offer_uuid = ${offerUuid} and a.status = 'confirmed' and coalesce(acc.email, p.email) is not null`.execute(db);
  return res.rows.map((r) => r.email);
}

export async function transitionOffer(ctx: ServiceContext, input: TransitionOfferInput): Promise<OfferOut> {
  const actor = ctx.actor;
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    // The participant-list lock (like every write to the offer's applications): cancel and relaunch change
    // what its applications owe.
    await lockOffer(ctx, db, input.uuid);
    const offer = await em.findOne(Offer, { uuid: input.uuid });
    const missing = notFound(`No offer with the identifier ${input.uuid} exists, or you may not see it.`);
    if (!offer || !actor) throw missing;
    const hosts = await hostsOf(ctx, db, offer.uuid);
    const ownOffer = actor.role === 'organiser' && hosts.some((h) => actor.organiserIds.includes(h));
    if (actor.role === 'organiser' && !ownOffer && !offer.places.includes('published')) throw missing;
    const first = await sql<{ b: Date | null }>`select min("begin") as b from ${tableOf(ctx, 'offer_dates')} where offer_uuid = ${offer.uuid}`.execute(db);
    const firstDateBegin = first.rows[0]?.b ? new Date(first.rows[0].b) : null;
    const result = applyOfferTransition({
      role: actor.role, ownOffer, firstDateBegin, now: new Date(), places: offer.places as OfferPlace[], transition: input.transition,
    });
    if (!result.ok) throw new DomainError(result.code, result.detail);
    offer.places = result.to;
    if (result.to.includes('published')) offer.wasPublished = true;
    offer.modifiedAt = new Date();
    await em.flush();
    await recordOfferTransition(ctx, db, offer, result.transition, !!input.notify);
    // D5: while the offer is cancelled none of its applications is payable; cancel cancels the unpaid charges,
    // relaunch charges them again (paid ones stay paid). The reconciler decides from the offer's new places.
    if (result.transition === 'cancel' || result.transition === 'relaunch' || result.transition === 'unpublish') {
      const apps = await sql<{ uuid: string }>`select uuid from ${tableOf(ctx, 'attendances')} where offer_uuid = ${offer.uuid}::uuid`.execute(db);
      await syncCharges(db, ctx.tenant.schema, apps.rows.map((r) => r.uuid));
    }
    if (input.notify && (result.transition === 'cancel' || result.transition === 'relaunch')) {
      const cancel = result.transition === 'cancel';
      for (const email of await confirmedFamilies(ctx, db, offer.uuid)) {
        await queueMail(ctx, db, {
          kind: cancel ? 'offer_cancelled' : 'offer_relaunched',
          recipient: email,
          subject: cancel ? `Abgesagt: ${offer.name}` : `Findet wieder statt: ${offer.name}`,
          body: cancel
            ? `Guten Tag,\n\ndas Angebot „${offer.name}“ wurde leider abgesagt.\n`
            : `Guten Tag,\n\ndas Angebot „${offer.name}“ findet nun doch statt.\n`,
          payload: { offer: offer.uuid, transition: result.transition },
        });
      }
    }
  });
  return tokenView(ctx, input.uuid);
}

// ---- copy and variant -----------------------------------------------------------------------------

async function duplicate(ctx: ServiceContext, sourceUuid: string, make: (source: Offer, db: Executor) => Promise<{ name: string; editionUuid: string; variantBaseUuid: string | null }>): Promise<string> {
  const uuid = newUuid();
  await retryDerivedAlias('offers', true, () => ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const { offer: source } = await loadForWrite(ctx, em, sourceUuid);
    const { name, editionUuid, variantBaseUuid } = await make(source, db);
    const alias = await deriveAlias(db, ctx.tenant.schema, 'offers', name);
    const data: Record<string, unknown> = {
      uuid, editionUuid, name, alias, places: ['draft'], publish: source.publish, media: [...(source.media ?? [])],
      applicationQuestions: (source.applicationQuestions ?? []).map((q) => ({ ...q })), variantBaseUuid, wasPublished: false,
    };
    const s = source as unknown as Record<string, unknown>;
    for (const f of SIMPLE_FIELDS) data[f] = s[f] ?? null;
    for (const f of Object.keys(BOOLEAN_DEFAULTS)) data[f] = s[f];
    em.create(Offer, data as never);
    await em.flush();
    await copyLinks(ctx, db, source.uuid, uuid);
  }));
  return uuid;
}

/** D5, D10: name + " (Kopie)", a draft without dates or applications, optionally in another edition. */
export async function copyOffer(ctx: ServiceContext, input: CopyOfferInput): Promise<OfferOut> {
  const uuid = await duplicate(ctx, input.uuid, async (source, db) => ({
    name: `${source.name} (Kopie)`.slice(0, 200),
    editionUuid: input.edition != null ? await resolveRef(ctx, db, 'editions', input.edition, 'edition', 'edition') : source.editionUuid,
    variantBaseUuid: null,
  }));
  return tokenView(ctx, uuid);
}

/** D5: a new draft of the same offer (its own dates to come), a variant of the base. */
export async function variantOffer(ctx: ServiceContext, uuid: string): Promise<OfferOut> {
  const created = await duplicate(ctx, uuid, async (source) => ({
    name: source.name, editionUuid: source.editionUuid, variantBaseUuid: source.variantBaseUuid ?? source.uuid,
  }));
  return tokenView(ctx, created);
}

import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { sql, type Executor } from '../../platform/db/sql.js';
import { newUuid, parseId } from '../../platform/http/ids.js';
import { unprocessable } from '../../domain/errors.js';
import { assertMayChangeOffer, offerNotFound } from '../../engines/access/index.js';
import { Offer, OfferDate, type ApplicationQuestion } from './entity.js';
import { tableOf } from './projection.js';
import type { CreateOfferInput, OfferDateIn } from './schema.js';

// What the offer's writes share (service.ts, workflow.ts, variants.ts): the offer loaded for a change, its
// references resolved, its links to organisers and categories, its dates and plain fields.

export async function resolveRef(ctx: ServiceContext, db: Executor, table: string, ref: string, field: string, label: string): Promise<string> {
  const id = parseId(ref);
  const res = await sql<{ uuid: string }>`select uuid from ${tableOf(ctx, table)} where uuid = ${id}::uuid or alias = ${ref} limit 1`.execute(db);
  if (!res.rows[0]) throw unprocessable(`${field}: No ${label} with the identifier or alias "${ref.slice(0, 80)}" exists.`);
  return res.rows[0].uuid;
}

export async function resolveRefs(ctx: ServiceContext, db: Executor, table: string, refs: string[], field: string, label: string): Promise<string[]> {
  const out: string[] = [];
  for (const [i, ref] of refs.entries()) {
    const uuid = await resolveRef(ctx, db, table, ref, `${field}[${i}]`, label);
    if (!out.includes(uuid)) out.push(uuid);
  }
  return out;
}

export async function hostsOf(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<string[]> {
  const res = await sql<{ organiser_uuid: string }>`select organiser_uuid from ${tableOf(ctx, 'offer_hosts')}
    where offer_uuid = ${offerUuid} order by position`.execute(db);
  return res.rows.map((r) => r.organiser_uuid);
}

export async function replaceLinks(ctx: ServiceContext, db: Executor, table: 'offer_hosts' | 'offer_categories', offerUuid: string, uuids: string[]) {
  const col = sql.raw(table === 'offer_hosts' ? 'organiser_uuid' : 'category_uuid');
  await sql`delete from ${tableOf(ctx, table)} where offer_uuid = ${offerUuid}`.execute(db);
  for (const [i, u] of uuids.entries()) {
    await sql`insert into ${tableOf(ctx, table)} (offer_uuid, ${col}, position) values (${offerUuid}, ${u}, ${i})`.execute(db);
  }
}

export async function copyLinks(ctx: ServiceContext, db: Executor, fromOffer: string, toOffer: string) {
  await sql`insert into ${tableOf(ctx, 'offer_hosts')} (offer_uuid, organiser_uuid, position)
    select ${toOffer}::uuid, organiser_uuid, position from ${tableOf(ctx, 'offer_hosts')} where offer_uuid = ${fromOffer}`.execute(db);
  await sql`insert into ${tableOf(ctx, 'offer_categories')} (offer_uuid, category_uuid, position)
    select ${toOffer}::uuid, category_uuid, position from ${tableOf(ctx, 'offer_categories')} where offer_uuid = ${fromOffer}`.execute(db);
}

export function questionsOf(list: NonNullable<CreateOfferInput['applicationQuestions']>): ApplicationQuestion[] {
  return list.map((q) => ({ uuid: q.uuid ?? newUuid(), label: q.label, type: q.type, required: q.required ?? false }));
}

export type Em = ServiceContext['em'];

export function replaceDates(em: Em, offerUuid: string, dates: OfferDateIn[], existing: OfferDate[]) {
  for (const d of existing) em.remove(d);
  dates.forEach((d, i) =>
    em.create(OfferDate, { uuid: newUuid(), offerUuid, begin: d.begin, end: d.end, recurrence: d.recurrence ?? null, position: i }));
}

export const SIMPLE_FIELDS = [
  'teaser', 'description', 'fee', 'minAge', 'maxAge', 'minParticipants', 'maxParticipants', 'applicationDeadline',
  'applyText', 'meetingPoint', 'meetingAddress', 'meetingLat', 'meetingLng', 'bring', 'comment', 'contact',
] as const;
export const BOOLEAN_DEFAULTS = { requiresApplication: true, onlineApplication: true, wheelchairAccessible: false } as const;

/** Loads an offer for a write; organisers only touch offers they can see (404), and only their own (403). */
export async function loadForWrite(ctx: ServiceContext, em: Em, uuid: string): Promise<{ offer: Offer; hosts: string[] }> {
  const offer = await em.findOne(Offer, { uuid });
  if (!offer) throw offerNotFound(uuid);
  const hosts = await hostsOf(ctx, dbOf(em), uuid);
  assertMayChangeOffer(ctx.viewer, uuid, { hosts, published: offer.places.includes('published') });
  return { offer, hosts };
}


import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { newUuid, parseId } from '../../platform/http/ids.js';
import { unprocessable } from '../../domain/errors.js';
import { assertMayChangeOffer, offerNotFound } from '../../engines/access/index.js';
import { Offer, OfferDate, type ApplicationQuestion } from './entity.js';
import type { CreateOfferInput, OfferDateIn } from './schema.js';

// What the offer's writes share (service.ts, workflow.ts, variants.ts): the offer loaded for a change, its
// references resolved, its links to organisers and categories, its dates and plain fields.

/** Tables an offer refers to by identifier or alias. */
export type RefTable = 'editions' | 'organisers' | 'categories';

export async function resolveRef(ctx: ServiceContext, db: Executor, table: RefTable, ref: string, field: string, label: string): Promise<string> {
  const id = parseId(ref);
  // Not an identifier: only the alias can match (`uuid = null` matches nothing).
  const row = await inSchema(db, ctx.tenant.schema).selectFrom(table).select('uuid')
    .where((eb) => (id === null ? eb('alias', '=', ref) : eb.or([eb('uuid', '=', id), eb('alias', '=', ref)])))
    .limit(1).executeTakeFirst();
  if (!row) throw unprocessable(`${field}: No ${label} with the identifier or alias "${ref.slice(0, 80)}" exists.`);
  return row.uuid;
}

export async function resolveRefs(ctx: ServiceContext, db: Executor, table: RefTable, refs: string[], field: string, label: string): Promise<string[]> {
  const out: string[] = [];
  for (const [i, ref] of refs.entries()) {
    const uuid = await resolveRef(ctx, db, table, ref, `${field}[${i}]`, label);
    if (!out.includes(uuid)) out.push(uuid);
  }
  return out;
}

export async function hostsOf(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<string[]> {
  const rows = await inSchema(db, ctx.tenant.schema).selectFrom('offer_hosts').select('organiser_uuid')
    .where('offer_uuid', '=', offerUuid).orderBy('position').execute();
  return rows.map((r) => r.organiser_uuid);
}

export async function replaceLinks(ctx: ServiceContext, db: Executor, table: 'offer_hosts' | 'offer_categories', offerUuid: string, uuids: string[]) {
  const tx = inSchema(db, ctx.tenant.schema);
  await tx.deleteFrom(table).where('offer_uuid', '=', offerUuid).execute();
  if (uuids.length === 0) return;
  // One statement for the rows, in their order (`position`).
  if (table === 'offer_hosts') {
    await tx.insertInto('offer_hosts').values(uuids.map((u, position) => ({ offer_uuid: offerUuid, organiser_uuid: u, position }))).execute();
  } else {
    await tx.insertInto('offer_categories').values(uuids.map((u, position) => ({ offer_uuid: offerUuid, category_uuid: u, position }))).execute();
  }
}

export async function copyLinks(ctx: ServiceContext, db: Executor, fromOffer: string, toOffer: string) {
  const tx = inSchema(db, ctx.tenant.schema);
  const target = sql<string>`${toOffer}::uuid`.as('offer_uuid');
  await tx.insertInto('offer_hosts').columns(['offer_uuid', 'organiser_uuid', 'position'])
    .expression((eb) => eb.selectFrom('offer_hosts').select([target, 'organiser_uuid', 'position']).where('offer_uuid', '=', fromOffer))
    .execute();
  await tx.insertInto('offer_categories').columns(['offer_uuid', 'category_uuid', 'position'])
    .expression((eb) => eb.selectFrom('offer_categories').select([target, 'category_uuid', 'position']).where('offer_uuid', '=', fromOffer))
    .execute();
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


import type { OfferPlace } from '../../domain/offer-workflow.js';
import { normalizePlaces } from '../../domain/offer-workflow.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { deriveAlias, retryDerivedAlias } from '../../platform/db/aliases.js';
import { inSchema, sql, type Executor, type TenantDB } from '../../platform/db/sql.js';
import { recordEvents } from '../../platform/events/events.js';
import { newUuid } from '../../platform/http/ids.js';
import { Offer } from './entity.js';
import { writtenOffer } from './list.js';
import type { CopyOfferInput, OfferOut } from './schema.js';
import { BOOLEAN_DEFAULTS, copyLinks, loadForWrite, resolveRef, SIMPLE_FIELDS } from './store.js';

// Copies and variants of an offer (D5, D10): a copy is a new draft of its own; a variant is a new draft of the
// same offer that keeps the base's descriptive fields, organisers and categories (copied on every save of
// the base, syncVariants).

/** Fields a base offer hands down to its variants on every save (D5). */
const DESCRIPTIVE_COLUMNS = [
  'name', 'teaser', 'description', 'fee', 'min_age', 'max_age', 'apply_text', 'meeting_point', 'meeting_address',
  'meeting_lat', 'meeting_lng', 'bring', 'wheelchair_accessible', 'media', 'requires_application', 'online_application',
  'application_questions', 'contact',
] as const satisfies readonly (keyof TenantDB['offers'])[];

export async function syncVariants(ctx: ServiceContext, db: Executor, baseUuid: string, renamed: boolean): Promise<{ uuid: string; editionUuid: string; places: OfferPlace[] }[]> {
  const tx = inSchema(db, ctx.tenant.schema);
  const rows = await tx.updateTable('offers as v').from('offers as b')
    .set((eb) => ({ ...Object.fromEntries(DESCRIPTIVE_COLUMNS.map((c) => [c, eb.ref(`b.${c}`)])), modified_at: sql`now()` }))
    .where('b.uuid', '=', baseUuid).whereRef('v.variant_base_uuid', '=', 'b.uuid')
    .returning(['v.uuid', 'v.name', 'v.was_published as wasPublished', 'v.edition_uuid as editionUuid', 'v.places'])
    .execute();
  for (const { uuid, name, wasPublished } of rows) {
    if (renamed && !wasPublished) {
      // D10: a variant's alias, too, follows renames until it is first published.
      const alias = await deriveAlias(db, ctx.tenant.schema, 'offers', name, uuid);
      await tx.updateTable('offers').set({ alias }).where('uuid', '=', uuid).execute();
    }
    for (const table of ['offer_hosts', 'offer_categories'] as const) {
      await tx.deleteFrom(table).where('offer_uuid', '=', uuid).execute();
    }
    await copyLinks(ctx, db, baseUuid, uuid);
  }
  return rows.map((r) => ({ uuid: r.uuid, editionUuid: r.editionUuid, places: r.places as OfferPlace[] }));
}

// ---- events (issue 14) ------------------------------------------------------------------------------

/** Fields a base copies to its variants (DESCRIPTIVE_COLUMNS, and the organisers and categories). */
const VARIANT_FIELDS = new Set(['name', 'teaser', 'description', 'fee', 'minAge', 'maxAge', 'applyText', 'meetingPoint', 'meetingAddress',
  'meetingLat', 'meetingLng', 'bring', 'wheelchairAccessible', 'media', 'requiresApplication', 'onlineApplication', 'applicationQuestions',
  'contact', 'hosts', 'categories']);

/** `offer.changed` for the offer (the fields sent) and for each variant its descriptive fields were copied to. */
export async function recordOfferChanges(
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
  return writtenOffer(ctx, uuid);
}

/** D5: a new draft of the same offer (its own dates to come), a variant of the base. */
export async function variantOffer(ctx: ServiceContext, uuid: string): Promise<OfferOut> {
  const created = await duplicate(ctx, uuid, async (source) => ({
    name: source.name, editionUuid: source.editionUuid, variantBaseUuid: source.variantBaseUuid ?? source.uuid,
  }));
  return writtenOffer(ctx, created);
}

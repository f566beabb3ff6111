import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { assertAliasFree, deriveAlias, retryDerivedAlias } from '../../platform/db/aliases.js';
import { inSchema, sql } from '../../platform/db/sql.js';
import { tenantDb } from '../../platform/db/tenant.js';
import { newUuid } from '../../platform/http/ids.js';
import { assertPatchNotEmpty, sentKeys, wasSent } from '../../platform/http/patch.js';
import { conflict, invalid, violation } from '../../domain/errors.js';
import { assertMayHost } from '../../engines/access/index.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { refillAfterCapacityChange } from '../../engines/participant-list/index.js';
import { Offer, OfferDate } from './entity.js';
import { writtenOffer } from './list.js';
import type { CreateOfferInput, OfferOut, UpdateOfferInput } from './schema.js';
import {
  BOOLEAN_DEFAULTS, loadForWrite, questionsOf, replaceDates, replaceLinks, resolveRef, resolveRefs, SIMPLE_FIELDS,
} from './store.js';
import { recordOfferChanges, syncVariants } from './variants.js';

// Writes of offers (spec 2.3, 4.2; D5, D10): create, update, delete, each in one transaction through the
// entities. Reads are list.ts, transitions workflow.ts, copies and variants variants.ts.

/** The offer's stored `media`, or null when there is no such offer. */
export async function storedMedia(ctx: ServiceContext, uuid: string): Promise<string[] | null> {
  const row = await tenantDb(ctx).selectFrom('offers').select('media').where('uuid', '=', uuid).executeTakeFirst();
  return row ? (row.media as string[] | null) ?? [] : null;
}

export async function createOffer(ctx: ServiceContext, input: CreateOfferInput): Promise<OfferOut> {
  const uuid = newUuid();
  await retryDerivedAlias('offers', !input.alias, () => ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const editionUuid = await resolveRef(ctx, db, 'editions', input.edition, 'edition', 'edition');
    let hosts = input.hosts ? await resolveRefs(ctx, db, 'organisers', input.hosts, 'hosts', 'organiser') : [];
    // An organiser's offer is its own organisers' unless it names its hosts.
    if (ctx.viewer.kind === 'organiser' && !input.hosts) hosts = [...ctx.viewer.organiserIds];
    assertMayHost(ctx.viewer, hosts);
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
  return writtenOffer(ctx, uuid);
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
      assertMayHost(ctx.viewer, hosts);
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
      const apps = await inSchema(db, ctx.tenant.schema).selectFrom('attendances').select('uuid').where('offer_uuid', '=', offer.uuid).execute();
      await syncCharges(db, ctx.tenant.schema, apps.map((r) => r.uuid));
    }
  });
  return writtenOffer(ctx, input.uuid);
}

export async function deleteOffer(ctx: ServiceContext, uuid: string): Promise<void> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const { offer } = await loadForWrite(ctx, em, uuid);
    // D5: 409 while applications exist.
    const tx = inSchema(db, ctx.tenant.schema);
    const { n } = await tx.selectFrom('attendances').select(sql<number>`count(*)::int`.as('n')).where('offer_uuid', '=', uuid).executeTakeFirstOrThrow();
    if (n > 0) throw conflict(`The offer ${uuid} has ${n} applications and cannot be deleted.`);
    await tx.updateTable('offers').set({ variant_base_uuid: null }).where('variant_base_uuid', '=', uuid).execute();
    em.remove(offer);
    await em.flush();
  });
}


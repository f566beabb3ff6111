import { applyOfferTransition, normalizePlaces, type OfferPlace, type OfferTransition } from '../../domain/offer-workflow.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, type Executor } from '../../platform/db/sql.js';
import { recordEvent } from '../../platform/events/events.js';
import { DomainError } from '../../domain/errors.js';
import { queueMail } from '../../platform/mail/outbox.js';
import { offerCancelledMail, offerRelaunchedMail } from '../../platform/mail/templates/de.js';
import { offerNotFound, offerStanding } from '../../engines/access/index.js';
import { syncCharges } from '../../engines/ledger/index.js';
import { lockOffer } from '../../engines/participant-list/index.js';
import { Offer } from './entity.js';
import { writtenOffer } from './list.js';
import type { OfferOut, TransitionOfferInput } from './schema.js';
import { hostsOf } from './store.js';

// The offer's workflow (spec 4.2, D5): the transitions between its places, their events, what they do to the
// applications' charges, and the families' e-mail on cancel and relaunch. The rules are domain/offer-workflow.ts.

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

/**
 * E-mail addresses of the families with a confirmed place on the offer that they were told of: a held-back
 * confirmation (the lot, `commit: false`) has not been told (spec 2.2), so neither is the offer's fate.
 */
async function confirmedFamilies(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<string[]> {
  const rows = await inSchema(db, ctx.tenant.schema).selectFrom('attendances as a')
    .innerJoin('participants as p', 'p.uuid', 'a.participant_uuid')
    .leftJoin('accounts as acc', 'acc.uuid', 'p.account_uuid')
    .select((eb) => eb.fn.coalesce('acc.email', 'p.email').as('email')).distinct()
    .where('a.offer_uuid', '=', offerUuid).where('a.status', '=', 'confirmed').where('a.held_back', '=', false)
    .where((eb) => eb(eb.fn.coalesce('acc.email', 'p.email'), 'is not', null))
    .execute();
  return rows.map((r) => r.email!);
}

export async function transitionOffer(ctx: ServiceContext, input: TransitionOfferInput): Promise<OfferOut> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    // The participant-list lock (like every write to the offer's applications): cancel and relaunch change
    // what its applications owe.
    await lockOffer(ctx, db, input.uuid);
    const offer = await em.findOne(Offer, { uuid: input.uuid });
    if (!offer) throw offerNotFound(input.uuid);
    const hosts = await hostsOf(ctx, db, offer.uuid);
    // Who may apply which transition is the workflow's rule (by role and own offer); seeing the offer, access's.
    const standing = offerStanding(ctx.viewer, { hosts, published: offer.places.includes('published') });
    if (standing === 'hidden') throw offerNotFound(input.uuid);
    const tx = inSchema(db, ctx.tenant.schema);
    const first = await tx.selectFrom('offer_dates').select((eb) => eb.fn.min('begin').as('b')).where('offer_uuid', '=', offer.uuid).executeTakeFirst();
    const firstDateBegin = first?.b ? new Date(first.b) : null;
    const result = applyOfferTransition({
      role: standing === 'admin' ? 'admin' : 'organiser', ownOffer: standing === 'own', firstDateBegin, now: new Date(),
      places: offer.places as OfferPlace[], transition: input.transition,
    });
    if (!result.ok) throw new DomainError(result.code, result.detail);
    offer.places = result.to;
    if (result.to.includes('published')) offer.wasPublished = true;
    offer.modifiedAt = new Date();
    await em.flush();
    await recordOfferTransition(ctx, db, offer, result.transition, !!input.notify);
    // D5: while the offer is called off none of its applications is payable; cancel cancels the unpaid charges,
    // relaunch charges them again as they were (paid ones stay paid). Unpublishing a cancelled offer leaves it
    // called off (its charges stay cancelled, issue 22); publishing it again is a relaunch. The reconciler
    // decides from `called_off`.
    const calledOff = result.transition === 'cancel' ? true : result.transition === 'relaunch' || result.transition === 'publish' ? false : null;
    if (calledOff !== null) await tx.updateTable('offers').set({ called_off: calledOff }).where('uuid', '=', offer.uuid).execute();
    if (result.transition === 'cancel' || result.transition === 'relaunch' || result.transition === 'publish') {
      const apps = await tx.selectFrom('attendances').select('uuid').where('offer_uuid', '=', offer.uuid).execute();
      await syncCharges(db, ctx.tenant.schema, apps.map((r) => r.uuid));
    }
    if (input.notify && (result.transition === 'cancel' || result.transition === 'relaunch')) {
      const cancel = result.transition === 'cancel';
      for (const email of await confirmedFamilies(ctx, db, offer.uuid)) {
        await queueMail(ctx, db, {
          kind: cancel ? 'offer_cancelled' : 'offer_relaunched',
          recipient: email,
          ...(cancel ? offerCancelledMail(offer.name) : offerRelaunchedMail(offer.name)),
          payload: { offer: offer.uuid, transition: result.transition },
        });
      }
    }
  });
  return writtenOffer(ctx, input.uuid);
}


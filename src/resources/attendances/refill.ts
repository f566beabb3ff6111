import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { getOffer } from '../offers/service.js';
import type { OfferOut } from '../offers/schema.js';
import { offerNotFound } from './access.js';
import type { RefillOfferInput } from './schema.js';
import { lockOffer, refillLocked } from './writes.js';

// Spec 4.2 `POST /offers/{uuid}/refill`, D5 (body `{notify?}`, default true; 202): fills the offer's free
// places from its waiting list in participant-list order and e-mails the families moved up. The work is
// the job's body (`refillLocked`, idempotent: a second run finds no free place or no one waiting); it runs
// within the request, under the offer's lock, so the 202 response already shows the refilled offer.

export async function refillOffer(ctx: ServiceContext, input: RefillOfferInput): Promise<OfferOut> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const offer = await lockOffer(ctx, db, input.uuid);
    if (!offer) throw offerNotFound(input.uuid);
    await refillLocked(ctx, db, offer, input.notify !== false);
  });
  return getOffer(ctx, input.uuid);
}

import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { getOffer } from './list.js';
import type { OfferOut, RefillOfferInput } from './schema.js';
import { offerNotFound } from '../../engines/access/index.js';
import { lockOffer, requestRefill } from '../../engines/participant-list/index.js';

// Spec 4.2 `POST /offers/{uuid}/refill`, D5 (body `{notify?}`, default true), spec 1.11: a background action,
// 202 with the offer as it is now. The request only asks for the `offer-refill` job (deduplicated per offer);
// the job fills the free places from the waiting list under the offer's lock and e-mails the families moved
// up. Idempotent: a second run finds no free place or no one waiting.

export async function refillOffer(ctx: ServiceContext, input: RefillOfferInput): Promise<OfferOut> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const offer = await lockOffer(ctx, db, input.uuid);
    if (!offer) throw offerNotFound(input.uuid);
    await requestRefill(ctx, db, offer.uuid, input.notify !== false);
  });
  return getOffer(ctx, input.uuid);
}

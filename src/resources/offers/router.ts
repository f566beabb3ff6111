import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import {
  copyOfferInput, createOfferInput, listOffersInput, offerIdInput, offerListResponse, offerResponse, transitionOfferInput,
  refillOfferInput, updateOfferInput,
} from './schema.js';
import { assertMediaImages } from './media.js';
import { refillOffer } from './refill.js';
import { getOffer, listOffers } from './list.js';
import { createOffer, deleteOffer, storedMedia, updateOffer } from './service.js';
import { copyOffer, variantOffer } from './variants.js';
import { transitionOffer } from './workflow.js';

const tags = ['offers'];

// Spec 4.2, D5. Reads are public (anonymous while publicAccess is on, legacy tokens too); the services
// narrow what each caller sees (src/engines/access/). Organisers write only their own organisers' offers.
export const offersRouter = router({
  list: procedure
    .meta({ access: 'public', openapi: { method: 'GET', path: '/offers', tags, summary: 'List offers' } })
    .input(listOffersInput).output(offerListResponse)
    .query(({ ctx, input }) => listOffers(ctx, input)),
  get: procedure
    .meta({ access: 'public', openapi: { method: 'GET', path: '/offers/{uuid}', tags, summary: 'One offer' } })
    .input(offerIdInput).output(offerResponse)
    .query(({ ctx, input }) => getOffer(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], successStatus: 201, openapi: { method: 'POST', path: '/offers', tags, summary: 'Create an offer' } })
    .input(createOfferInput).output(offerResponse)
    .mutation(async ({ ctx, input }) => {
      // Spec 2.3, 8: each image at most 3000 x 3000 pixels, read from the image (offers/media.ts).
      if (input.media?.length) await assertMediaImages(input.media);
      return createOffer(ctx, input);
    }),
  update: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], openapi: { method: 'PATCH', path: '/offers/{uuid}', tags, summary: 'Change an offer' } })
    .input(updateOfferInput).output(offerResponse)
    .mutation(async ({ ctx, input }) => {
      if (input.media?.length) {
        const stored = await storedMedia(ctx, input.uuid);
        // An unknown offer gets its 404 from the service; images it already has are not fetched again.
        if (stored) await assertMediaImages(input.media, new Set(stored));
      }
      return updateOffer(ctx, input);
    }),
  delete: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 204, openapi: { method: 'DELETE', path: '/offers/{uuid}', tags, summary: 'Delete an offer' } })
    .input(offerIdInput).output(z.void())
    .mutation(({ ctx, input }) => deleteOffer(ctx, input.uuid)),
  transition: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], openapi: { method: 'POST', path: '/offers/{uuid}/transition', tags, summary: 'Apply an offer transition' } })
    .input(transitionOfferInput).output(offerResponse)
    .mutation(({ ctx, input }) => transitionOffer(ctx, input)),
  copy: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], successStatus: 201, openapi: { method: 'POST', path: '/offers/{uuid}/copy', tags, summary: 'Copy an offer as a draft' } })
    .input(copyOfferInput).output(offerResponse)
    .mutation(({ ctx, input }) => copyOffer(ctx, input)),
  variant: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], successStatus: 201, openapi: { method: 'POST', path: '/offers/{uuid}/variant', tags, summary: 'Make a variant of an offer' } })
    .input(offerIdInput).output(offerResponse)
    .mutation(({ ctx, input }) => variantOffer(ctx, input.uuid)),
  // Published first among the participant list's operations: its operation id and tags stay.
  refill: procedure
    .meta({
      access: 'write', roles: ['admin'], successStatus: 202,
      openapi: { method: 'POST', path: '/offers/{uuid}/refill', operationId: 'attendances-refill', tags: ['offers', 'attendances'], summary: 'Refill free places from the waiting list' },
    })
    .input(refillOfferInput).output(offerResponse)
    .mutation(({ ctx, input }) => refillOffer(ctx, input)),
});

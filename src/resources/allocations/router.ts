import { procedure, router } from '../../platform/http/trpc.js';
import { editionResponse } from '../editions/schema.js';
import { allocateEditionInput, commitEditionInput } from './schema.js';
import * as service from './service.js';

const tags = ['editions'];

// D7: the lot and the commit of an edition, admin-only background actions (spec 1.11: 202 with the edition
// as it is now). Their own folder because they work on the applications (attendances/writes.ts imports the
// editions service, so the editions folder cannot import the applications' writes without a cycle).
export const allocationsRouter = router({
  allocate: procedure
    .meta({
      access: 'write', roles: ['admin'], successStatus: 202,
      openapi: { method: 'POST', path: '/editions/{uuid}/allocate', tags, summary: 'Allocate the waiting applications by lot (background)' },
    })
    .input(allocateEditionInput).output(editionResponse)
    .mutation(({ ctx, input }) => service.allocateEdition(ctx, input)),
  commit: procedure
    .meta({
      access: 'write', roles: ['admin'], successStatus: 202,
      openapi: { method: 'POST', path: '/editions/{uuid}/commit', tags, summary: 'Release the held-back decisions and tell the families (background)' },
    })
    .input(commitEditionInput).output(editionResponse)
    .mutation(({ ctx, input }) => service.commitEdition(ctx, input)),
});

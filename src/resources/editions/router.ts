import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import * as allocation from './allocation.js';
import {
  allocateEditionInput, commitEditionInput, createEditionInput, editionIdInput, editionListResponse, editionResponse, listEditionsInput, updateEditionInput,
} from './schema.js';
import * as service from './service.js';

const tags = ['editions'];

// D4: reads for admin and organiser tokens; writes for admins.
export const editionsRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin', 'organiser'], openapi: { method: 'GET', path: '/editions', tags, summary: 'List editions' } })
    .input(listEditionsInput).output(editionListResponse)
    .query(({ ctx, input }) => service.listEditions(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin', 'organiser'], openapi: { method: 'GET', path: '/editions/{uuid}', tags, summary: 'One edition' } })
    .input(editionIdInput).output(editionResponse)
    .query(({ ctx, input }) => service.getEdition(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 201, openapi: { method: 'POST', path: '/editions', tags, summary: 'Create an edition' } })
    .input(createEditionInput).output(editionResponse)
    .mutation(({ ctx, input }) => service.createEdition(ctx, input)),
  update: procedure
    .meta({ access: 'write', roles: ['admin'], openapi: { method: 'PATCH', path: '/editions/{uuid}', tags, summary: 'Change an edition (an empty body returns it unchanged)' } })
    .input(updateEditionInput).output(editionResponse)
    .mutation(({ ctx, input }) => service.updateEdition(ctx, input)),
  delete: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 204, openapi: { method: 'DELETE', path: '/editions/{uuid}', tags, summary: 'Delete an edition' } })
    .input(editionIdInput).output(z.void())
    .mutation(({ ctx, input }) => service.deleteEdition(ctx, input.uuid)),
  // D7: the lot and the commit, admin-only background actions (spec 1.11: 202 with the edition as it is now).
  // Their operation ids are those they were published with.
  allocate: procedure
    .meta({
      access: 'write', roles: ['admin'], successStatus: 202,
      openapi: { method: 'POST', path: '/editions/{uuid}/allocate', operationId: 'allocations-allocate', tags, summary: 'Allocate the waiting applications by lot (background)' },
    })
    .input(allocateEditionInput).output(editionResponse)
    .mutation(({ ctx, input }) => allocation.allocateEdition(ctx, input)),
  commit: procedure
    .meta({
      access: 'write', roles: ['admin'], successStatus: 202,
      openapi: { method: 'POST', path: '/editions/{uuid}/commit', operationId: 'allocations-commit', tags, summary: 'Release the held-back decisions and tell the families (background)' },
    })
    .input(commitEditionInput).output(editionResponse)
    .mutation(({ ctx, input }) => allocation.commitEdition(ctx, input)),
});

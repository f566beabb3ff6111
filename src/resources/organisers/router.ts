import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import {
  createOrganiserInput, listOrganisersInput, organiserIdInput, organiserListResponse, organiserResponse, updateOrganiserInput,
} from './schema.js';
import * as service from './service.js';

const tags = ['organisers'];

// Organiser tokens may read organisers (D6: they are bound to them); writes are for admins.
export const organisersRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin', 'organiser'], openapi: { method: 'GET', path: '/organisers', tags, summary: 'List organisers' } })
    .input(listOrganisersInput).output(organiserListResponse)
    .query(({ ctx, input }) => service.listOrganisers(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin', 'organiser'], openapi: { method: 'GET', path: '/organisers/{uuid}', tags, summary: 'One organiser' } })
    .input(organiserIdInput).output(organiserResponse)
    .query(({ ctx, input }) => service.getOrganiser(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 201, openapi: { method: 'POST', path: '/organisers', tags, summary: 'Create an organiser' } })
    .input(createOrganiserInput).output(organiserResponse)
    .mutation(({ ctx, input }) => service.createOrganiser(ctx, input)),
  update: procedure
    .meta({ access: 'write', roles: ['admin'], openapi: { method: 'PATCH', path: '/organisers/{uuid}', tags, summary: 'Change an organiser' } })
    .input(updateOrganiserInput).output(organiserResponse)
    .mutation(({ ctx, input }) => service.updateOrganiser(ctx, input)),
  delete: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 204, openapi: { method: 'DELETE', path: '/organisers/{uuid}', tags, summary: 'Delete an organiser' } })
    .input(organiserIdInput).output(z.void())
    .mutation(({ ctx, input }) => service.deleteOrganiser(ctx, input.uuid)),
});

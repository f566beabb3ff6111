import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import {
  createParticipantInput, listParticipantsInput, participantIdInput, participantListResponse, participantResponse, updateParticipantInput,
} from './schema.js';
import * as service from './service.js';

const tags = ['participants'];

// D6/D10: participants are admin-only, reading included (`GET /participants` is 403 for organisers).
export const participantsRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/participants', tags, summary: 'List participants' } })
    .input(listParticipantsInput).output(participantListResponse)
    .query(({ ctx, input }) => service.listParticipants(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/participants/{uuid}', tags, summary: 'One participant' } })
    .input(participantIdInput).output(participantResponse)
    .query(({ ctx, input }) => service.getParticipant(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 201, openapi: { method: 'POST', path: '/participants', tags, summary: 'Create a participant' } })
    .input(createParticipantInput).output(participantResponse)
    .mutation(({ ctx, input }) => service.createParticipant(ctx, input)),
  update: procedure
    .meta({ access: 'write', roles: ['admin'], openapi: { method: 'PATCH', path: '/participants/{uuid}', tags, summary: 'Change a participant' } })
    .input(updateParticipantInput).output(participantResponse)
    .mutation(({ ctx, input }) => service.updateParticipant(ctx, input)),
  delete: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 204, openapi: { method: 'DELETE', path: '/participants/{uuid}', tags, summary: 'Delete a participant (409 with paid applications)' } })
    .input(participantIdInput).output(z.void())
    .mutation(({ ctx, input }) => service.deleteParticipant(ctx, input.uuid)),
});

import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import {
  attendanceIdInput, attendanceListResponse, attendanceResponse, createAttendanceInput, listAttendancesInput,
  offerAttendancesInput, transferAttendanceInput, transitionAttendanceInput, updateAttendanceInput,
} from './schema.js';
import * as service from './service.js';

const tags = ['attendances'];

// Spec 4.3 (and the participant list of 4.2). Create and delete are admin-only; organisers read
// their released lists and, where the installation lets them, change or transfer (checked in the services).
export const attendancesRouter = router({
  list: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/attendances', tags, summary: 'List applications, newest first' } })
    .input(listAttendancesInput).output(attendanceListResponse)
    .query(({ ctx, input }) => service.listAttendances(ctx, input)),
  listOfOffer: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/offers/{uuid}/attendances', tags: ['offers', ...tags], summary: 'Participant list of an offer' } })
    .input(offerAttendancesInput).output(attendanceListResponse)
    .query(({ ctx, input }) => service.listOfferAttendances(ctx, input)),
  get: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/attendances/{uuid}', tags, summary: 'One application' } })
    .input(attendanceIdInput).output(attendanceResponse)
    .query(({ ctx, input }) => service.getAttendance(ctx, input.uuid)),
  create: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 201, openapi: { method: 'POST', path: '/attendances', tags, summary: 'Create an application' } })
    .input(createAttendanceInput).output(attendanceResponse)
    .mutation(({ ctx, input }) => service.createAttendance(ctx, input)),
  update: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], openapi: { method: 'PATCH', path: '/attendances/{uuid}', tags, summary: 'Change an application\'s details' } })
    .input(updateAttendanceInput).output(attendanceResponse)
    .mutation(({ ctx, input }) => service.updateAttendance(ctx, input)),
  transition: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], openapi: { method: 'POST', path: '/attendances/{uuid}/transition', tags, summary: 'Apply a transition' } })
    .input(transitionAttendanceInput).output(attendanceResponse)
    .mutation(({ ctx, input }) => service.transitionAttendance(ctx, input)),
  transfer: procedure
    .meta({ access: 'write', roles: ['admin', 'organiser'], successStatus: 201, openapi: { method: 'POST', path: '/attendances/{uuid}/transfer', tags, summary: 'Move an application to another offer' } })
    .input(transferAttendanceInput).output(attendanceResponse)
    .mutation(({ ctx, input }) => service.transferAttendance(ctx, input)),
  delete: procedure
    .meta({ access: 'write', roles: ['admin'], successStatus: 204, openapi: { method: 'DELETE', path: '/attendances/{uuid}', tags, summary: 'Delete an application' } })
    .input(attendanceIdInput).output(z.void())
    .mutation(({ ctx, input }) => service.deleteAttendance(ctx, input.uuid)),
});

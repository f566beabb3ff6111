import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import { bookingIdInput, bookingListResponse, bookingResponse, listBookingsInput } from './schema.js';
import { refuseChange } from '../../engines/ledger/index.js';
import * as service from './service.js';

const tags = ['money'];

// D8, D10: bookings are read-only and admin-only. PATCH and DELETE exist only to answer 405 (an unknown path
// or method would otherwise be a 404 from the adapter); they never change anything.
export const bookingsRouter = router({
  list: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/bookings', tags, summary: 'List bookings, in posting order' } })
    .input(listBookingsInput).output(bookingListResponse)
    .query(({ ctx, input }) => service.listBookings(ctx, input)),
  get: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'GET', path: '/bookings/{uuid}', tags, summary: 'One booking' } })
    .input(bookingIdInput).output(bookingResponse)
    .query(({ ctx, input }) => service.getBooking(ctx, input.uuid)),
  update: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'PATCH', path: '/bookings/{uuid}', tags, summary: 'Not allowed: bookings are never changed (405)' } })
    .input(bookingIdInput).output(z.void())
    .mutation(({ ctx, input }) => refuseChange(ctx, 'bookings', input.uuid, 'PATCH')),
  delete: procedure
    .meta({ access: 'read', roles: ['admin'], openapi: { method: 'DELETE', path: '/bookings/{uuid}', tags, summary: 'Not allowed: bookings are never deleted (405)' } })
    .input(bookingIdInput).output(z.void())
    .mutation(({ ctx, input }) => refuseChange(ctx, 'bookings', input.uuid, 'DELETE')),
});

import { procedure, router } from '../../platform/http/trpc.js';
import { eventIdInput, eventPageResponse, eventResponse, listEventsInput } from './schema.js';
import * as service from './service.js';

// Issue 14: the event feed; any admin token (read or read-write), like the other money and family data.
export const eventsRouter = router({
  list: procedure
    .meta({
      access: 'read', roles: ['admin'],
      openapi: {
        method: 'GET', path: '/events', tags: ['events'], summary: 'The event feed',
        description: 'The municipality\'s events in the order they happened, after the cursor `after`, kept for 30 days. '
          + 'Poll with the `next` of the previous answer: an integration that was down catches up without webhooks. '
          + 'An event appears once every database transaction older than its own has ended, so none is ever skipped.',
      },
    })
    .input(listEventsInput).output(eventPageResponse)
    .query(({ ctx, input }) => service.listEvents(ctx, input)),
  get: procedure
    .meta({
      access: 'read', roles: ['admin'],
      openapi: {
        method: 'GET', path: '/events/{uuid}', tags: ['events'], summary: 'One event',
        description: 'An event by its `id` (the webhook delivery\'s event id), as the feed lists it; 404 once it is older than 30 days.',
      },
    })
    .input(eventIdInput).output(eventResponse)
    .query(({ ctx, input }) => service.getEvent(ctx, input.uuid)),
});

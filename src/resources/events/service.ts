import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { readEvent, readEvents, toEnvelope } from '../../platform/events/events.js';
import { DEFAULT_ITEMS_PER_PAGE } from '../../platform/http/fields.js';
import { notFound } from '../../domain/errors.js';
import type { EventPageOut, ListEventsInput } from './schema.js';

type EventOut = EventPageOut['events'][number];

// Issue 14: `GET /events`, the municipality's events after a cursor, in order (the visibility rule and the
// cursor are src/platform/events/events.ts's). One indexed query per page.
export async function listEvents(ctx: ServiceContext, input: ListEventsInput): Promise<EventPageOut> {
  const page = await readEvents(dbOf(ctx.em), ctx.tenant.schema, {
    after: input.after ?? null,
    types: input.types,
    limit: input.itemsPerPage ?? DEFAULT_ITEMS_PER_PAGE,
  });
  return { events: page.events.map(toEnvelope) as EventPageOut['events'], next: page.next ?? undefined };
}

/** `GET /events/{uuid}`: one event as the feed and the webhooks show it (an integration checking a delivery). */
export async function getEvent(ctx: ServiceContext, uuid: string): Promise<EventOut> {
  const e = await readEvent(dbOf(ctx.em), ctx.tenant.schema, uuid);
  if (!e) throw notFound(`No event with the identifier ${uuid} exists (events are kept 30 days).`);
  return toEnvelope(e) as EventOut;
}

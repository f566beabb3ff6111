import { z } from 'zod';
import { EVENT_TYPES, type EventType } from '../../platform/events/events.js';
import { EVENT_PAYLOADS } from '../../platform/events/payloads.js';
import { paginationQuery, pathId, query } from '../../platform/http/fields.js';
import { response, timestampOut } from '../../platform/http/response.js';

// Issue 14: the event feed (`GET /events`, admin tokens). An event is the envelope webhooks send as their body
// (Standard Webhooks style): `id` (the event's uuid), `type`, `timestamp`, `data` (references and states only,
// src/platform/events/payloads.ts). One named schema per type, a union discriminated on `type`, so the OpenAPI
// document shows each payload. The page is an object rather than the plain array of other lists: it carries
// the cursor to continue with (`next`).

const pascal = (type: EventType) => type.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');

function envelope<T extends EventType>(type: T) {
  return z.object({
    id: z.string().meta({ format: 'uuid', description: 'the event\'s uuid; the same in the feed and in a webhook delivery (deduplicate by it)' }),
    type: z.literal(type),
    timestamp: timestampOut().meta({ description: 'when the change happened (its transaction), Europe/Berlin with offset' }),
    data: EVENT_PAYLOADS[type],
  }).meta({ id: `${pascal(type)}Event`, description: EVENT_PAYLOADS[type].meta()?.description ?? type });
}

const envelopes = EVENT_TYPES.map((t) => envelope(t)) as unknown as [ReturnType<typeof envelope<EventType>>, ...ReturnType<typeof envelope<EventType>>[]];

export const eventOut = z.discriminatedUnion('type', envelopes).meta({
  id: 'Event',
  description: 'An event of the municipality: what changed (`type`), when (`timestamp`) and the references and states of the records concerned (`data`); never names or contact data.',
});

export const eventPageOut = z.object({
  events: z.array(eventOut).meta({ description: 'in the order they happened; fewer than `itemsPerPage`: the feed is read to its end for now' }),
  next: z.string().optional().meta({
    description: 'the cursor to send as `after` next time (the last event\'s; the one sent when nothing is new). Absent only when the feed is empty and no cursor was sent.',
  }),
}).meta({ id: 'EventPage', description: 'A page of the event feed and the cursor to continue after it.' });
export type EventPageOut = z.infer<typeof eventPageOut>;
export const eventPageResponse = response(eventPageOut);

export const listEventsInput = z.object({
  after: query.string().meta({
    description: 'the `next` cursor of an earlier answer: only events after it; absent: from the oldest event kept (30 days). A value that is not a cursor of this feed gives 400.',
  }),
  types: query.oneOf(EVENT_TYPES),
  itemsPerPage: paginationQuery.itemsPerPage,
});
export type ListEventsInput = z.output<typeof listEventsInput>;

export const eventResponse = response(eventOut);
export const eventIdInput = z.object({ uuid: pathId() });

import { z } from 'zod';
import { EVENT_TYPES } from '../../platform/events/events.js';
import { listQuery, paginationQuery, pathId } from '../../platform/http/fields.js';
import { response, timestampOut } from '../../platform/http/response.js';

// Issue 14: webhook subscriptions of a municipality (admin only) and their delivery attempts.
export const ALL_EVENTS = '*';

const url = z.string().trim().min(1).max(2000).meta({
  description: 'Where the events are POSTed: https, a host that resolves to public addresses only (checked at subscription and at every delivery).',
  example: 'https://integration.example.org/hooks/ferienprogramm',
});
const events = z.array(z.enum([ALL_EVENTS, ...EVENT_TYPES])).min(1).max(EVENT_TYPES.length + 1).meta({
  description: `Event types to deliver; ["${ALL_EVENTS}"] (the default) means every type, also types added later.`,
});
const description = z.string().trim().max(500).transform((v) => (v === '' ? null : v));

const webhookFields = {
  uuid: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  description: z.string().optional(),
  failingSince: timestampOut().optional().meta({ description: 'Since when deliveries fail (the first failure after the last 2xx); absent while they succeed.' }),
  disabledAt: timestampOut().optional(),
  disabledReason: z.enum(['failing']).optional().meta({ description: '`failing`: disabled by the service after 24 hours of failed deliveries (the admin was e-mailed).' }),
  previousSecretValidUntil: timestampOut().optional().meta({ description: 'After a rotation, deliveries are signed with the previous secret too until then.' }),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
};

export const webhookOut = z.object(webhookFields).meta({
  id: 'Webhook',
  description: 'A webhook subscription: events of the municipality are POSTed to `url`, signed as Standard Webhooks specifies.',
});
export type WebhookOut = z.infer<typeof webhookOut>;

export const webhookWithSecretOut = z.object({
  ...webhookFields,
  secret: z.string().meta({ description: 'The signing secret (`whsec_` + base64). Shown only in this answer: keep it.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
}).meta({ id: 'WebhookWithSecret', description: 'A webhook subscription with its new signing secret, shown once (creation, rotation).' });
export type WebhookWithSecretOut = z.infer<typeof webhookWithSecretOut>;

export const webhookResponse = response(webhookOut);
export const webhookWithSecretResponse = response(webhookWithSecretOut);
export const webhookListResponse = response(z.array(webhookOut));

export const listWebhooksInput = z.object({ ...listQuery });
export type ListWebhooksInput = z.output<typeof listWebhooksInput>;

export const webhookIdInput = z.object({ uuid: pathId() });

export const createWebhookInput = z.object({
  url,
  events: events.optional(),
  enabled: z.boolean().optional(),
  description: description.nullish(),
});
export type CreateWebhookInput = z.output<typeof createWebhookInput>;

/** PATCH: only keys sent apply; null clears `description` and is ignored elsewhere (spec 1.12). */
export const updateWebhookInput = z.object({
  uuid: pathId(),
  url: url.nullish(),
  events: events.nullish(),
  enabled: z.boolean().nullish(),
  description: description.nullish(),
});
export type UpdateWebhookInput = z.output<typeof updateWebhookInput>;

export const deliveryOut = z.object({
  uuid: z.string(),
  event: z.string().meta({ description: 'The event\'s id: the `webhook-id` header and the `id` of the payload.' }),
  eventType: z.string(),
  attempt: z.number().int().meta({ description: 'The attempt\'s number for this event (1 for the first).' }),
  redelivery: z.boolean().meta({ description: 'Asked for by POST …/redeliver (tried once, outside the order of the subscription).' }),
  state: z.enum(['pending', 'succeeded', 'failed']),
  responseStatus: z.number().int().optional().meta({ description: 'The receiver\'s HTTP status, when it answered.' }),
  latencyMs: z.number().int().optional().meta({ description: 'From sending the request to the end of the answer (at most 5 s).' }),
  error: z.string().optional().meta({ description: 'Why the attempt failed (no answer within 5 s, connection refused, HTTP 500, …).' }),
  createdAt: timestampOut(),
}).meta({ id: 'WebhookDelivery', description: 'One delivery attempt of an event to a webhook.' });
export type DeliveryOut = z.infer<typeof deliveryOut>;

export const deliveryResponse = response(deliveryOut);
export const deliveryListResponse = response(z.array(deliveryOut));

export const listDeliveriesInput = z.object({ uuid: pathId(), ...paginationQuery });
export type ListDeliveriesInput = z.output<typeof listDeliveriesInput>;

export const redeliverInput = z.object({ uuid: pathId(), id: pathId() });

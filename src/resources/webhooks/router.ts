import { z } from 'zod';
import { procedure, router } from '../../platform/http/trpc.js';
import {
  createWebhookInput, deliveryListResponse, deliveryResponse, listDeliveriesInput, listWebhooksInput, redeliverInput,
  updateWebhookInput, webhookIdInput, webhookListResponse, webhookResponse, webhookWithSecretResponse,
} from './schema.js';
import * as service from './service.js';

const tags = ['webhooks'];
import type { Meta } from '../../platform/http/trpc.js';

const read: Meta = { access: 'read', roles: ['admin'] };
const write: Meta = { access: 'write', roles: ['admin'] };

export const webhooksRouter = router({
  list: procedure
    .meta({ ...read, openapi: { method: 'GET', path: '/webhooks', tags, summary: 'List webhook subscriptions' } })
    .input(listWebhooksInput).output(webhookListResponse)
    .query(({ ctx, input }) => service.listWebhooks(ctx, input)),
  get: procedure
    .meta({ ...read, openapi: { method: 'GET', path: '/webhooks/{uuid}', tags, summary: 'One webhook subscription' } })
    .input(webhookIdInput).output(webhookResponse)
    .query(({ ctx, input }) => service.getWebhook(ctx, input.uuid)),
  create: procedure
    .meta({ ...write, successStatus: 201, openapi: { method: 'POST', path: '/webhooks', tags, summary: 'Subscribe to events (the answer shows the signing secret once)' } })
    .input(createWebhookInput).output(webhookWithSecretResponse)
    .mutation(({ ctx, input }) => service.createWebhook(ctx, input)),
  update: procedure
    .meta({ ...write, openapi: { method: 'PATCH', path: '/webhooks/{uuid}', tags, summary: 'Change a webhook subscription' } })
    .input(updateWebhookInput).output(webhookResponse)
    .mutation(({ ctx, input }) => service.updateWebhook(ctx, input)),
  delete: procedure
    .meta({ ...write, successStatus: 204, openapi: { method: 'DELETE', path: '/webhooks/{uuid}', tags, summary: 'Delete a webhook subscription' } })
    .input(webhookIdInput).output(z.void())
    .mutation(({ ctx, input }) => service.deleteWebhook(ctx, input.uuid)),
  rotateSecret: procedure
    .meta({ ...write, openapi: { method: 'POST', path: '/webhooks/{uuid}/rotate-secret', tags, summary: 'A new signing secret (the previous one signs too for 24 hours)' } })
    .input(webhookIdInput).output(webhookWithSecretResponse)
    .mutation(({ ctx, input }) => service.rotateSecret(ctx, input.uuid)),
  deliveries: procedure
    .meta({ ...read, openapi: { method: 'GET', path: '/webhooks/{uuid}/deliveries', tags, summary: 'Delivery attempts of a webhook, newest first' } })
    .input(listDeliveriesInput).output(deliveryListResponse)
    .query(({ ctx, input }) => service.listDeliveries(ctx, input)),
  redeliver: procedure
    .meta({ ...write, successStatus: 202, openapi: { method: 'POST', path: '/webhooks/{uuid}/deliveries/{id}/redeliver', tags, summary: 'Send a delivery\'s event again' } })
    .input(redeliverInput).output(deliveryResponse)
    .mutation(({ ctx, input }) => service.redeliver(ctx, input.uuid, input.id)),
});

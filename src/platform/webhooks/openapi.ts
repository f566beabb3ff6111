// The webhook payload in the OpenAPI document (issue 14): OpenAPI 3.1's top-level `webhooks`, one entry per
// event type, each a POST the service sends to a subscription's URL with the Standard Webhooks headers and the
// event's envelope (the same schema as in the event feed, `#/components/schemas/<Type>Event`).
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the OpenAPI document is walked and patched as free-form JSON
type Json = Record<string, any>;

const SIGNING = [
  'Signed as the Standard Webhooks specification says (https://www.standardwebhooks.com): the signed content is',
  '`<webhook-id>.<webhook-timestamp>.<body>`, the signature base64 of its HMAC-SHA256 under the subscription\'s secret',
  '(`whsec_` + base64: the key is the base64 part, decoded). Verify with any Standard Webhooks library, compare in constant',
  'time, refuse timestamps more than 5 minutes off, and deduplicate by `webhook-id` (delivery is at least once).',
  '',
  'Answer 2xx within 5 seconds; anything else (also a redirect, which is not followed) is a failed attempt, retried with',
  'exponential backoff (5 s doubling up to 1 h) for 24 hours, after which the subscription is disabled and the admin',
  'e-mailed. Events of one subscription arrive in order: the next waits until the previous was answered 2xx.',
].join('\n');

const header = (name: string, description: string, example: string) =>
  ({ name, in: 'header', required: true, description, schema: { type: 'string' }, example });

/** The `webhooks` object for the envelope schemas listed by `Event` (oneOf) in `schemas`. */
export function webhookOperations(schemas: Json): Json {
  const out: Json = {};
  for (const ref of (schemas.Event?.oneOf ?? []) as { $ref: string }[]) {
    const name = ref.$ref.split('/').pop()!;
    const type: string | undefined = schemas[name]?.properties?.type?.const;
    if (!type) continue;
    out[type] = {
      post: {
        operationId: `webhook-${type.replace(/\W/g, '-')}`,
        tags: ['webhooks'],
        summary: `Event ${type}`,
        description: `${schemas[name].description ?? ''}\n\n${SIGNING}`.trim(),
        parameters: [
          header('webhook-id', 'The event\'s id (the `id` of the body): the same on every attempt.', '3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f'),
          header('webhook-timestamp', 'When this attempt was signed, Unix seconds.', '1814515200'),
          header('webhook-signature', 'Space-separated `v1,<base64>` signatures: one per valid secret (two for 24 hours after a rotation).', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='),
        ],
        requestBody: { required: true, content: { 'application/json': { schema: ref } } },
        responses: {
          '2XX': { description: 'Accepted: the subscription\'s cursor moves past this event.' },
          default: { description: 'Any other status, a redirect, or no answer within 5 seconds: the attempt failed and is retried.' },
        },
        security: [],
      },
    };
  }
  return out;
}

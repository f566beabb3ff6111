import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (https://www.standardwebhooks.com, "Signature scheme"): the secret is `whsec_` followed by
// base64 of 24-64 random bytes; the signed content is `<webhook-id>.<webhook-timestamp>.<body>`; the signature is
// base64 of its HMAC-SHA256 under the decoded secret, sent as `v1,<signature>`. Several signatures are separated
// by spaces (a rotation: the new and the previous secret sign side by side, and a receiver accepts either).
export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature of a message. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers of one attempt, signed with every given secret. */
export function webhookHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' '),
  };
}

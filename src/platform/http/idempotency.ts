import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import { type Answer, headerOf } from './answer.js';
import type { Logger } from '../logging/logger.js';
import { inSchema, sql, type Executor, type TenantExecutor } from '../db/sql.js';
import { badRequest, Problem } from './problem.js';
import { rawUploadOf } from './raw.js';

// Idempotency-Key on every POST (issue 13; as Stripe and pretix do), once for every route:
// - A POST with an `Idempotency-Key` header (1-255 visible ASCII characters) and a valid token claims the key
//   for that token (table `idempotency_keys` in the tenant's schema, so per token and per tenant) before any
//   work. Its answer (status, body, `Content-Type`, `Location`, `Allow`, `WWW-Authenticate`) is stored when it
//   is sent; a 5xx, or an answer with Retry-After (a conflict's 409), is not stored (the key is released, so a
//   retry does the work).
// - A retry with the same key, the same method, path and body gets the stored answer again, with
//   `Idempotent-Replayed: true`, and nothing is done twice.
// - The same key with another method, path or body: 422 (the key belongs to another request).
// - A duplicate arriving while the first is still running waits for its answer (polling, up to
//   `WAIT_MS`), then replays it; still running after that: 409 (retry later).
// - Keys are kept 24 hours from their first use; older ones are forgotten (deleted when the token uses a key,
//   and by the daily retention job for tokens that never come back: a stored answer can hold a child's data).
// - Requests without a token, and methods other than POST, ignore the header.
export const IDEMPOTENCY_TTL_HOURS = 24;
const WAIT_MS = 10_000;
const POLL_MS = 50;
const REPLAYED_HEADERS = ['content-type', 'location', 'allow', 'www-authenticate'] as const;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** Older than this a key is forgotten. */
const expired = () => sql<string>`now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`;

/** Deletes every key older than the TTL in one tenant's schema (the daily retention job); returns how many. */
export async function purgeIdempotencyKeys(db: Executor, schema: string): Promise<number> {
  const res = await inSchema(db, schema).deleteFrom('idempotency_keys').where('created_at', '<', expired()).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${url}\n${JSON.stringify(body ?? null)}`).digest('base64url');
}

/** What the Idempotency-Key of a request decided: the stored answer to send again, or the key claimed for this request. */
export type IdempotencyOutcome = { replay: Answer } | { claim: Claim };

/**
 * Handles the Idempotency-Key of a POST: the stored answer (`replay`, sent instead of doing the work), or the
 * claimed key (`claim`: the request goes on and its answer is recorded by `recordAnswer`), or null when the
 * header does not apply. Throws a Problem for a malformed key (400), a key used for another request (422) or
 * one still in progress (409).
 */
export async function idempotency(
  req: Request, opts: { db: Executor; schema: string; tokenId: string | null; log: Logger },
): Promise<IdempotencyOutcome | null> {
  const header = req.headers['idempotency-key'];
  if (req.method !== 'POST' || header === undefined || !opts.tokenId) return null;
  const key = Array.isArray(header) ? header[0] : header;
  if (!KEY_RE.test(key)) throw badRequest('Idempotency-Key: expected 1 to 255 visible ASCII characters, for example a UUID.');
  const { tokenId } = opts;
  const db = inSchema(opts.db, opts.schema);
  // A file body (raw.ts) counts by its bytes' hash.
  const fingerprint = requestFingerprint(req.method, req.url, rawUploadOf(req)?.digest ?? req.body);

  await db.deleteFrom('idempotency_keys').where('token_uuid', '=', tokenId).where('created_at', '<', expired()).execute();
  const claimed = await db.insertInto('idempotency_keys').values({ token_uuid: tokenId, key, fingerprint })
    .onConflict((oc) => oc.doNothing()).returning('key').execute();
  if (claimed.length > 0) return { claim: { db, tokenId, key, log: opts.log, done: false } };

  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const row = await db.selectFrom('idempotency_keys').select(['fingerprint', 'status', 'headers', 'body'])
      .where('token_uuid', '=', tokenId).where('key', '=', key).where('created_at', '>=', expired())
      .$narrowType<{ headers: Record<string, string> }>().executeTakeFirst();
    if (!row) {
      // Released (the first answer was a 5xx) or expired meanwhile: claim it now.
      return idempotency(req, opts);
    }
    if (row.fingerprint !== fingerprint) {
      throw new Problem(422, 'Idempotency-Key: this key was already used for another request (method, path or body) in the last 24 hours; send a new key.');
    }
    if (row.status !== null) {
      const headers = { ...(row.headers ?? {}), 'Idempotent-Replayed': 'true' };
      return { replay: row.status === 204 || row.body === null ? { status: row.status, headers } : { status: row.status, headers, body: row.body } };
    }
    if (Date.now() >= deadline) {
      throw new Problem(409, 'Idempotency-Key: a request with this key is still in progress; retry later with the same key.');
    }
    await sleep(POLL_MS);
  }
}

/** A key claimed by the request now running; `done` once its answer was recorded or the key released. */
export type Claim = { db: TenantExecutor; tokenId: string; key: string; log: Logger; done: boolean };

/**
 * Releases a claimed key that holds no answer, so a retry does the work; tried again for a few seconds when the
 * database does not answer at once (issue 22: a key left "in progress" would answer every retry 409 for 24 h).
 */
async function release(o: Claim, why: string): Promise<void> {
  let last: unknown;
  for (const wait of [0, 250, 1000, 5000]) {
    if (wait) await sleep(wait);
    try {
      await o.db.deleteFrom('idempotency_keys').where('token_uuid', '=', o.tokenId).where('key', '=', o.key).where('status', 'is', null).execute();
      return;
    } catch (err) {
      last = err;
    }
  }
  o.log.error({ err: last }, `idempotency: could not release the key ${why}; retries get 409 until it expires`);
}

/**
 * Stores the answer of the request that claimed the key as it is sent (`sent`: the answer and the response it
 * goes out on, whose earlier headers count too); a 5xx releases the key, and so does a failed store (issue 22),
 * and so does an answer with Retry-After (issue 23); `null`: the connection closed before any answer, the key is
 * released. Only the first call counts: the key is finished or released whatever happens.
 */
export function recordAnswer(o: Claim, sent: { answer: Answer; res: ServerResponse } | null): void {
  if (o.done) return;
  o.done = true;
  if (!sent) {
    void release(o, 'of a request closed without an answer');
    return;
  }
  const { answer, res } = sent;
  const { status } = answer;
  const body = typeof answer.body === 'string' ? answer.body : Buffer.isBuffer(answer.body) ? answer.body.toString('utf8') : null;
  const headers: Record<string, string> = {};
  for (const h of REPLAYED_HEADERS) {
    const v = headerOf(res, answer, h);
    if (v !== undefined) headers[h] = v;
  }
  // An answer that asks to be sent again (a 409 of a conflict with a concurrent change, issue 23) did nothing.
  if (status >= 500 || headerOf(res, answer, 'Retry-After') !== undefined) void release(o, 'after an answer that did nothing');
  else {
    o.db.updateTable('idempotency_keys').set({ status, headers: JSON.stringify(headers), body, completed_at: sql`now()` })
      .where('token_uuid', '=', o.tokenId).where('key', '=', o.key).execute()
      .catch((err: unknown) => {
        o.log.error({ err }, 'idempotency: could not record the answer; releasing the key');
        return release(o, 'after a failed record');
      });
  }
}

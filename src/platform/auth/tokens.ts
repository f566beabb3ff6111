import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import bs58 from 'bs58';
import { parse as parseArray } from 'postgres-array';
import { base58ToUuid, newUuid, uuidToBase58 } from '../http/ids.js';
import type { Selectable } from 'kysely';
import { inSchema, sql, tablesOf, type Executor, type TenantDB } from '../db/sql.js';
import { prepared } from '../db/prepared.js';

// D3: opaque tokens with a recognisable prefix, stored only as a hash, compared in constant time.
// Shape: `hpt_` + the token's id in base58 (22) + a 256-bit secret in base58. The id finds the row; the
// secret's SHA-256 is compared with timingSafeEqual.
export const TOKEN_PREFIX = 'hpt_';

/** D3's roles and D11's `website` (the municipality's public website: public reads, family applications). */
export type TokenRole = 'admin' | 'organiser' | 'website';
export type TokenAccess = 'legacy' | 'read' | 'read-write';

export type Actor = {
  tokenId: string;
  name: string;
  role: TokenRole;
  access: TokenAccess;
  ownerKind: 'person' | 'service';
  organiserIds: string[];
  /** Its own rate limit (requests refilled per minute, issue 21); null or absent: D3's default. */
  ratePerMinute?: number | null;
};

export type TokenRecord = {
  uuid: string;
  name: string;
  role: TokenRole;
  access: TokenAccess;
  ownerKind: 'person' | 'service';
  organiserIds: string[];
  ratePerMinute: number | null;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /** The hour of the token's last use (issue 24), null before its first. */
  lastUsedAt: string | null;
  /** The organisers the token is bound to, as they are now (a deleted one is left out). */
  organisers: { uuid: string; name: string; alias: string }[];
};

/** The `api_tokens` text columns with a check constraint, narrowed to their values. */
type TokenRow = { role: TokenRole; access: TokenAccess; owner_kind: 'person' | 'service' };

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function mintToken(): { uuid: string; token: string; secretHash: Buffer } {
  const uuid = newUuid();
  const secret = bs58.encode(randomBytes(32));
  return { uuid, token: `${TOKEN_PREFIX}${uuidToBase58(uuid)}${secret}`, secretHash: hashSecret(secret) };
}

export function splitToken(token: string): { uuid: string; secret: string } | null {
  if (!token.startsWith(TOKEN_PREFIX) || token.length < TOKEN_PREFIX.length + 22 + 20 || token.length > 200) return null;
  const uuid = base58ToUuid(token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + 22));
  if (!uuid) return null;
  return { uuid, secret: token.slice(TOKEN_PREFIX.length + 22) };
}

/**
 * Issue 25: every request with a token asked PostgreSQL for it (a statement per request, the same again and again
 * under a rush). A token found valid is kept per process for at most `TOKEN_CACHE_MS`: a revocation, or an expiry
 * written later, reaches every other process within that second; this process forgets a token it revokes at once
 * (`revokeToken`). The key is the tenant's schema and a SHA-256 of the whole token, never the token; unknown, wrong
 * and revoked tokens are never kept (each asks the database). The expiry is compared on every use, so a token
 * expiring within the second is refused on time. Bounded (the oldest entries go first); concurrent first uses of
 * one token wait for one look-up.
 */
export const TOKEN_CACHE_MS = 1000;
const TOKEN_CACHE_MAX = 2000;
type CachedToken = { actor: Actor; uuid: string; schema: string; expiresAt: number | null; until: number };
const tokenCache = new Map<string, CachedToken>();
type FoundToken = Omit<CachedToken, 'until'>;
const tokenLookups = new Map<string, Promise<FoundToken | null>>();

function tokenCacheKey(schema: string, token: string): string {
  return `${schema}\u0000${createHash('sha256').update(token).digest('base64url')}`;
}

/** Forgets this process's cached tokens with this id (a revocation here answers 401 at once). */
function forgetToken(schema: string, uuid: string): void {
  for (const [key, entry] of tokenCache) if (entry.uuid === uuid && entry.schema === schema) tokenCache.delete(key);
}

/** The actor behind a bearer token on this tenant, or null for unknown, revoked, expired or foreign tokens. */
export async function verifyToken(db: Executor, schema: string, token: string, now = new Date()): Promise<Actor | null> {
  const key = tokenCacheKey(schema, token);
  const hit = tokenCache.get(key);
  if (hit && hit.until > Date.now()) return hit.expiresAt !== null && hit.expiresAt <= now.getTime() ? null : hit.actor;
  let lookup = tokenLookups.get(key);
  if (!lookup) {
    const started = Date.now();
    const running = lookUpToken(db, schema, token, now).finally(() => tokenLookups.delete(key));
    tokenLookups.set(key, running);
    lookup = running;
    void running.then((found) => {
      tokenCache.delete(key);
      if (!found) return;
      tokenCache.set(key, { ...found, until: started + TOKEN_CACHE_MS });
      if (tokenCache.size > TOKEN_CACHE_MAX) tokenCache.delete(tokenCache.keys().next().value!);
    }, () => {});
  }
  const found = await lookup;
  if (!found) return null;
  return found.expiresAt !== null && found.expiresAt <= now.getTime() ? null : found.actor;
}

/** The look-up itself: the token's row, its secret compared in constant time; null when it is not valid now. */
async function lookUpToken(db: Executor, schema: string, token: string, now: Date): Promise<FoundToken | null> {
  const parts = splitToken(token);
  if (!parts) return null;
  // Every request with a token runs this: a named statement (platform/db/prepared.ts), so it stays a raw template.
  const res = await prepared(sql<Pick<Selectable<TenantDB['api_tokens']>, 'uuid' | 'name' | 'organiser_ids' | 'secret_hash' | 'revoked_at' | 'rate_per_minute'> & TokenRow & { expired: boolean; expires_ms: number | null; use_unrecorded: boolean }>`
     select uuid, name, role, access, owner_kind, organiser_ids, secret_hash, revoked_at, rate_per_minute,
       (expires_at is not null and expires_at <= ${now}::timestamptz) as expired,
       (extract(epoch from expires_at) * 1000)::float8 as expires_ms,
       (last_used_at is null or last_used_at < date_trunc('hour', ${now}::timestamptz)) as use_unrecorded
     from ${tablesOf(schema)('api_tokens')} where uuid = ${parts.uuid}`).execute(db);
  const row = res.rows[0];
  const presented = hashSecret(parts.secret);
  // Compare even when no row exists, so timing does not tell unknown ids from wrong secrets.
  const stored = row?.secret_hash ?? Buffer.alloc(32);
  const matches = stored.length === presented.length && timingSafeEqual(stored, presented);
  if (!row || !matches) return null;
  if (row.revoked_at) return null;
  // Compared in SQL: timestamptz comes back as PostgreSQL text (`…+00`), which `new Date` cannot read.
  if (row.expired) return null;
  if (row.use_unrecorded) recordUse(db, schema, row.uuid, now);
  const actor: Actor = Object.freeze({
    tokenId: row.uuid,
    name: row.name,
    role: row.role,
    access: row.access,
    ownerKind: row.owner_kind,
    organiserIds: Object.freeze(parsePgArray(row.organiser_ids)) as string[],
    ratePerMinute: row.rate_per_minute,
  });
  return { actor, uuid: row.uuid, schema, expiresAt: row.expires_ms === null ? null : Number(row.expires_ms) };
}

/**
 * Issue 24: when a token was last used, kept to the hour (`token list`), so a busy token costs one write an hour,
 * not one per request: the check above reads whether this hour is recorded, and only then is it written, beside the
 * request and without waiting for it (a failed write is only a missed note). Concurrent first requests of an
 * hour write the same value; the condition makes the later ones no-ops.
 */
function recordUse(db: Executor, schema: string, uuid: string, now: Date): void {
  void inSchema(db, schema).updateTable('api_tokens')
    .set({ last_used_at: sql`date_trunc('hour', ${now}::timestamptz)` })
    .where('uuid', '=', uuid)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<string>`date_trunc('hour', ${now}::timestamptz)`)]))
    .execute().catch(() => {});
}

/**
 * Issues a token. A person's token belongs to a user of the tenant (admin or organiser user, found by name
 * and role, created on first use; an organiser user collects the organisers of its tokens); a service
 * account's token stands alone.
 */
export async function insertToken(
  db: Executor,
  schema: string,
  input: {
    name: string; role: TokenRole; access: TokenAccess; ownerKind: 'person' | 'service'; organiserIds: string[]; expiresAt: Date | null;
    ratePerMinute?: number | null;
  },
): Promise<{ uuid: string; token: string }> {
  const minted = mintToken();
  // A website is no person: its token always belongs to a service account (D11).
  const ownerKind = input.role === 'website' ? 'service' : input.ownerKind;
  const write = async (trx: Executor) => {
    const tx = inSchema(trx, schema);
    let userUuid: string | null = null;
    if (ownerKind === 'person' && input.role !== 'website') {
      const existing = await tx.selectFrom('users').select('uuid')
        .where('name', '=', input.name).where('role', '=', input.role).orderBy('created_at').limit(1).forUpdate()
        .executeTakeFirst();
      userUuid = existing?.uuid ?? newUuid();
      await tx.insertInto('users').values({ uuid: userUuid, name: input.name, role: input.role, organiser_ids: input.organiserIds })
        .onConflict((oc) => oc.column('uuid').doUpdateSet((eb) => ({
          organiser_ids: sql<string[]>`(select coalesce(array_agg(distinct o), '{}') from unnest(${eb.ref('users.organiser_ids')} || excluded.organiser_ids) o)`,
        })))
        .execute();
    }
    await tx.insertInto('api_tokens').values({
      uuid: minted.uuid, name: input.name, role: input.role, access: input.access, owner_kind: ownerKind, user_uuid: userUuid,
      organiser_ids: input.organiserIds, secret_hash: minted.secretHash, expires_at: input.expiresAt, rate_per_minute: input.ratePerMinute ?? null,
    }).execute();
  };
  // A service account's token is one insert, which may run in the caller's transaction (the demo's seeding).
  if (ownerKind === 'service') await write(db);
  else await db.transaction().execute(write);
  return { uuid: minted.uuid, token: minted.token };
}

export async function listTokens(db: Executor, schema: string): Promise<TokenRecord[]> {
  const rows = await inSchema(db, schema).selectFrom('api_tokens as t')
    .select(['t.uuid', 't.name', 't.role', 't.access', 't.owner_kind', 't.organiser_ids', 't.rate_per_minute', 't.created_at', 't.expires_at', 't.revoked_at', 't.last_used_at'])
    .select((eb) => eb.selectFrom('organisers as o')
      .select(sql<{ uuid: string; name: string; alias: string }[]>`coalesce(json_agg(json_build_object('uuid', o.uuid, 'name', o.name, 'alias', o.alias) order by o.alias), '[]'::json)`.as('list'))
      .where('o.uuid', '=', sql<string>`any(t.organiser_ids)`).as('organisers'))
    .orderBy('t.created_at').orderBy('t.uuid')
    .$narrowType<TokenRow>().execute();
  return rows.map((r) => ({
    uuid: r.uuid, name: r.name, role: r.role, access: r.access, ownerKind: r.owner_kind,
    organiserIds: parsePgArray(r.organiser_ids), ratePerMinute: r.rate_per_minute, createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at, organisers: r.organisers ?? [],
  }));
}

export async function revokeToken(db: Executor, schema: string, uuid: string): Promise<boolean> {
  forgetToken(schema, uuid);
  const res = await inSchema(db, schema).updateTable('api_tokens')
    .set({ revoked_at: sql`coalesce(revoked_at, now())` })
    .where('uuid', '=', uuid).executeTakeFirst();
  // Again after the write: a look-up that ran meanwhile may have cached it as it was.
  forgetToken(schema, uuid);
  return Number(res.numUpdatedRows) > 0;
}

/** MikroORM's pg setup may hand arrays back as PostgreSQL's `{a,b}` text: read by postgres-array (quotes, NULLs). */
export function parsePgArray(value: string[] | string | null): string[] {
  if (value == null) return [];
  if (Array.isArray(value)) return value;
  // NULL elements come back as null whatever the declared type says; an organiser id is never NULL.
  return (parseArray(value) as (string | null)[]).filter((v): v is string => v !== null);
}

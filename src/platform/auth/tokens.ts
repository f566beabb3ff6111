import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import bs58 from 'bs58';
import { base58ToUuid, newUuid, uuidToBase58 } from '../http/ids.js';
import { qualified, sql, type Executor } from '../db/sql.js';
import { prepared } from '../db/prepared.js';

// D3: opaque tokens with a recognisable prefix, stored only as a hash, compared in constant time.
// Shape: `hpt_` + the token's id in base58 (22) + a 256-bit secret in base58. The id finds the row; the
// secret's SHA-256 is compared with timingSafeEqual.
export const TOKEN_PREFIX = 'hpt_';

export type TokenRole = 'admin' | 'organiser';
export type TokenAccess = 'legacy' | 'read' | 'read-write';

export type Actor = {
  tokenId: string;
  name: string;
  role: TokenRole;
  access: TokenAccess;
  ownerKind: 'person' | 'service';
  organiserIds: string[];
};

export type TokenRecord = {
  uuid: string;
  name: string;
  role: TokenRole;
  access: TokenAccess;
  ownerKind: 'person' | 'service';
  organiserIds: string[];
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
};

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

/** The actor behind a bearer token on this tenant, or null for unknown, revoked, expired or foreign tokens. */
export async function verifyToken(db: Executor, schema: string, token: string, now = new Date()): Promise<Actor | null> {
  const parts = splitToken(token);
  if (!parts) return null;
  // Every request with a token runs this: a named statement (platform/db/prepared.ts).
  const res = await prepared(sql<{
    uuid: string; name: string; role: TokenRole; access: TokenAccess; owner_kind: 'person' | 'service';
    organiser_ids: string[] | string; secret_hash: Buffer; expired: boolean; revoked_at: string | null;
  }>`select uuid, name, role, access, owner_kind, organiser_ids, secret_hash, revoked_at,
       (expires_at is not null and expires_at <= ${now}::timestamptz) as expired
     from ${qualified(schema, 'api_tokens')} where uuid = ${parts.uuid}`).execute(db);
  const row = res.rows[0];
  const presented = hashSecret(parts.secret);
  // Compare even when no row exists, so timing does not tell unknown ids from wrong secrets.
  const stored = row?.secret_hash ?? Buffer.alloc(32);
  const matches = stored.length === presented.length && timingSafeEqual(stored, presented);
  if (!row || !matches) return null;
  if (row.revoked_at) return null;
  // Compared in SQL: timestamptz comes back as PostgreSQL text (`…+00`), which `new Date` cannot read.
  if (row.expired) return null;
  return {
    tokenId: row.uuid,
    name: row.name,
    role: row.role,
    access: row.access,
    ownerKind: row.owner_kind,
    organiserIds: parsePgArray(row.organiser_ids),
  };
}

/**
 * Issues a token. A person's token belongs to a user of the tenant (admin or organiser user, found by name
 * and role, created on first use; an organiser user collects the organisers of its tokens); a service
 * account's token stands alone.
 */
export async function insertToken(
  db: Executor,
  schema: string,
  input: { name: string; role: TokenRole; access: TokenAccess; ownerKind: 'person' | 'service'; organiserIds: string[]; expiresAt: Date | null },
): Promise<{ uuid: string; token: string }> {
  const minted = mintToken();
  await db.transaction().execute(async (tx) => {
    let userUuid: string | null = null;
    if (input.ownerKind === 'person') {
      const existing = await sql<{ uuid: string }>`select uuid from ${qualified(schema, 'users')}
        where name = ${input.name} and role = ${input.role} order by created_at limit 1 for update`.execute(tx);
      userUuid = existing.rows[0]?.uuid ?? newUuid();
      await sql`insert into ${qualified(schema, 'users')} (uuid, name, role, organiser_ids)
        values (${userUuid}, ${input.name}, ${input.role}, ${input.organiserIds}::uuid[])
        on conflict (uuid) do update set organiser_ids = (
          select coalesce(array_agg(distinct o), '{}') from unnest(${qualified(schema, 'users')}.organiser_ids || excluded.organiser_ids) o)`.execute(tx);
    }
    await sql`insert into ${qualified(schema, 'api_tokens')}
      (uuid, name, role, access, owner_kind, user_uuid, organiser_ids, secret_hash, expires_at)
      values (${minted.uuid}, ${input.name}, ${input.role}, ${input.access}, ${input.ownerKind}, ${userUuid},
        ${input.organiserIds}::uuid[], ${minted.secretHash}, ${input.expiresAt})`.execute(tx);
  });
  return { uuid: minted.uuid, token: minted.token };
}

export async function listTokens(db: Executor, schema: string): Promise<TokenRecord[]> {
  const res = await sql<{
    uuid: string; name: string; role: TokenRole; access: TokenAccess; owner_kind: 'person' | 'service';
    organiser_ids: string[] | string; created_at: string; expires_at: string | null; revoked_at: string | null;
  }>`select uuid, name, role, access, owner_kind, organiser_ids, created_at, expires_at, revoked_at
     from ${qualified(schema, 'api_tokens')} order by created_at, uuid`.execute(db);
  return res.rows.map((r) => ({
    uuid: r.uuid, name: r.name, role: r.role, access: r.access, ownerKind: r.owner_kind,
    organiserIds: parsePgArray(r.organiser_ids), createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at,
  }));
}

export async function revokeToken(db: Executor, schema: string, uuid: string): Promise<boolean> {
  const res = await sql`update ${qualified(schema, 'api_tokens')} set revoked_at = coalesce(revoked_at, now())
    where uuid = ${uuid}`.execute(db);
  return Number(res.numAffectedRows ?? 0) > 0;
}

/** MikroORM's pg setup may hand arrays back as `{a,b}` text. */
export function parsePgArray(value: string[] | string | null): string[] {
  if (value == null) return [];
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner ? inner.split(',') : [];
}

import pg from 'pg';
import { poolSize } from '../src/platform/db/orm.js';
import { newUuid } from '../src/platform/http/ids.js';

// What the bare-SQL baselines share (issue 25: every baseline uses the service's pool size). A baseline that
// opened more connections than the service may would measure a different database load, not the service's
// overhead: with 64 connections where the service has 10, PostgreSQL switches between 64 backends.

/** The connections of one service process's pool, read as the service reads it (`PG_POOL_SIZE`, platform/config.ts). */
export function servicePoolSize(): number {
  return poolSize();
}

/** The words a baseline's row uses to say so. */
export function poolLabel(): string {
  return `pool of ${servicePoolSize()} = the service's PG_POOL_SIZE`;
}

/** A pool for a baseline: the service's size, errors after the scratch database is dropped ignored. */
export function baselinePool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: servicePoolSize() });
  pool.on('error', () => {});
  return pool;
}

/**
 * One first-come application as bare SQL, in one short transaction: lock the offer's row, count its confirmed
 * places, insert the application (confirmed while a place is free, else waitlisted) at the end of its list.
 * The floor under `POST /attendances` (bench/rush.ts, bench/morning.ts).
 */
export async function bareApplication(pool: pg.Pool, schema: string, offer: string, participant: string): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query('begin');
    const max = await c.query<{ max: number | null }>(`select max_participants as max from "${schema}".offers where uuid = $1 for no key update`, [offer]);
    const n = await c.query<{ n: number }>(`select count(*)::int as n from "${schema}".attendances where offer_uuid = $1 and status = 'confirmed'`, [offer]);
    const places = max.rows[0]?.max;
    const status = places === null || places === undefined || n.rows[0]!.n < places ? 'confirmed' : 'waitlisted';
    await c.query(`insert into "${schema}".attendances (uuid, offer_uuid, participant_uuid, status, sorting, fee)
      values ($1, $2, $3, $4, (select coalesce(max(sorting), 0) + 1 from "${schema}".attendances where offer_uuid = $2), 500)`, [newUuid(), offer, participant, status]);
    await c.query('commit');
  } catch (err) {
    await c.query('rollback').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

import type { Procedure } from '../../domain/edition-phases.js';
import type { ServiceContext } from '../../platform/context.js';
import { qualified, sql, type Executor } from '../../platform/db/sql.js';
import { notFound } from '../../domain/errors.js';
import { editionProcedureSql } from '../edition-phases/index.js';

// SQL shared by the request side (service.ts) and the jobs (draw.ts, release.ts) of the lot and the commit.

export const table = (ctx: ServiceContext, name: string) => qualified(ctx.tenant.schema, name);

export const editionNotFound = (uuid: string) => notFound(`No edition with the identifier ${uuid} exists.`);

export type EditionHead = { uuid: string; name: string; procedure: Procedure };

/** The edition with its effective procedure now (D4), or null. */
export async function readEdition(ctx: ServiceContext, db: Executor, uuid: string): Promise<EditionHead | null> {
  const res = await sql<EditionHead>`
    select e.uuid, e.name, ${editionProcedureSql(ctx.tenant.schema, 'e')} as procedure
    from ${table(ctx, 'editions')} e where e.uuid = ${uuid}::uuid`.execute(db);
  return res.rows[0] ?? null;
}

/**
 * Locks the edition's row for the rest of the transaction (`for no key update`): lottery runs and commits of
 * one edition take turns. Offers referencing the edition only take key-share locks, which this does not block.
 */
export async function lockEdition(ctx: ServiceContext, db: Executor, uuid: string): Promise<{ uuid: string; name: string } | null> {
  const res = await sql<{ uuid: string; name: string }>`
    select e.uuid, e.name from ${table(ctx, 'editions')} e where e.uuid = ${uuid}::uuid for no key update`.execute(db);
  return res.rows[0] ?? null;
}

/**
 * Locks every offer of the edition in uuid order, the order every participant-list writer locks offers in
 * (src/resources/attendances/writes.ts), so the lot and the commit take turns with them without deadlocks.
 * Rows are locked as the sorted result is produced.
 */
export async function lockEditionOffers(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<string[]> {
  const res = await sql<{ uuid: string }>`
    select o.uuid from ${table(ctx, 'offers')} o where o.edition_uuid = ${editionUuid}::uuid
    order by o.uuid for no key update of o`.execute(db);
  return res.rows.map((r) => r.uuid);
}

export type PendingRun = { uuid: string; seq: number; seed: number; waitlist: boolean };

/** The edition's runs not yet drawn, up to `upToSeq`, in the order they were requested. */
export async function pendingRuns(ctx: ServiceContext, db: Executor, editionUuid: string, upToSeq: number): Promise<PendingRun[]> {
  const res = await sql<PendingRun>`
    select uuid, seq::float8 as seq, seed::float8 as seed, waitlist from ${table(ctx, 'edition_allocations')}
    where edition_uuid = ${editionUuid}::uuid and finished_at is null and seq <= ${upToSeq}
    order by seq`.execute(db);
  return res.rows;
}

import type { Procedure } from '../../domain/edition-phases.js';
import type { ServiceContext } from '../../platform/context.js';
import { inSchema, sql, type Executor } from '../../platform/db/sql.js';
import { notFound } from '../../domain/errors.js';
import { editionProcedureSql } from '../edition-phases/index.js';

// SQL shared by the request side (service.ts) and the jobs (draw.ts, release.ts) of the lot and the commit.

export const editionNotFound = (uuid: string) => notFound(`No edition with the identifier ${uuid} exists.`);

export type EditionHead = { uuid: string; name: string; procedure: Procedure };

/** The edition with its effective procedure now (D4), or null. */
export async function readEdition(ctx: ServiceContext, db: Executor, uuid: string): Promise<EditionHead | null> {
  const row = await inSchema(db, ctx.tenant.schema).selectFrom('editions as e')
    .select(['e.uuid', 'e.name', editionProcedureSql(ctx.tenant.schema, 'e').as('procedure')])
    .where('e.uuid', '=', uuid).executeTakeFirst();
  return row ?? null;
}

/**
 * Locks the edition's row for the rest of the transaction (`for no key update`): lottery runs and commits of
 * one edition take turns. Offers referencing the edition only take key-share locks, which this does not block.
 */
export async function lockEdition(ctx: ServiceContext, db: Executor, uuid: string): Promise<{ uuid: string; name: string } | null> {
  const row = await inSchema(db, ctx.tenant.schema).selectFrom('editions as e').select(['e.uuid', 'e.name'])
    .where('e.uuid', '=', uuid).forNoKeyUpdate().executeTakeFirst();
  return row ?? null;
}

/**
 * Locks every offer of the edition in uuid order, the order every participant-list writer locks offers in
 * (src/engines/participant-list), so the lot and the commit take turns with them without deadlocks.
 * Rows are locked as the sorted result is produced.
 */
export async function lockEditionOffers(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<string[]> {
  const rows = await inSchema(db, ctx.tenant.schema).selectFrom('offers as o').select('o.uuid')
    .where('o.edition_uuid', '=', editionUuid).orderBy('o.uuid').forNoKeyUpdate('o').execute();
  return rows.map((r) => r.uuid);
}

export type PendingRun = { uuid: string; seq: number; seed: number; waitlist: boolean };

/** The edition's runs not yet drawn, up to `upToSeq`, in the order they were requested (bigints travel as text). */
export async function pendingRuns(ctx: ServiceContext, db: Executor, editionUuid: string, upToSeq: number): Promise<PendingRun[]> {
  return inSchema(db, ctx.tenant.schema).selectFrom('edition_allocations')
    .select(['uuid', sql<number>`seq::float8`.as('seq'), sql<number>`seed::float8`.as('seed'), 'waitlist'])
    .where('edition_uuid', '=', editionUuid).where('finished_at', 'is', null).where('seq', '<=', String(upToSeq))
    .orderBy('seq').execute();
}

import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql } from '../../platform/db/sql.js';
import type { TenantJobData } from '../../platform/jobs/queue.js';
import { settlePendingRuns } from './draw.js';
import { releaseHeldBack } from './release.js';
import { lockEdition } from './store.js';

// The jobs of D7's allocate and commit (src/jobs.ts registers them; src/resources/editions/allocation.ts sends
// them). Both work under the edition's row lock and are idempotent.

export type AllocateJob = { tenant: string; edition: string; allocation: string };
export type CommitJob = { tenant: string; edition: string; notify: boolean; upToRun: number };


const text = (data: TenantJobData, key: string): string => {
  const v = data[key];
  if (typeof v !== 'string') throw new Error(`job data: ${key} missing`);
  return v;
};

/** `edition-allocate`: draws the run (and any run of the edition requested before it still pending). */
export async function runAllocationJob(ctx: ServiceContext, data: TenantJobData): Promise<void> {
  const editionUuid = text(data, 'edition');
  const allocation = text(data, 'allocation');
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    // The edition was deleted meanwhile (its runs with it): nothing to do.
    if (!(await lockEdition(ctx, db, editionUuid))) return;
    const run = await inSchema(db, ctx.tenant.schema).selectFrom('edition_allocations')
      .select([sql<number>`seq::float8`.as('seq'), sql<boolean>`commit_requested_at is not null`.as('commitRequested')])
      .where('uuid', '=', allocation).where('edition_uuid', '=', editionUuid).executeTakeFirst();
    if (!run) return;
    // A commit was requested after this run: the commit's job draws it (and every run before it).
    if (run.commitRequested) {
      ctx.log.info({ edition: editionUuid, allocation }, 'lottery run left to the commit requested after it');
      return;
    }
    await settlePendingRuns(ctx, db, editionUuid, run.seq);
  });
}

/** `edition-commit`: draws the runs requested before the commit that are still pending, then releases. */
export async function runCommitJob(ctx: ServiceContext, data: TenantJobData): Promise<void> {
  const editionUuid = text(data, 'edition');
  const upToRun = typeof data.upToRun === 'number' ? data.upToRun : 0;
  const notify = data.notify !== false;
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const edition = await lockEdition(ctx, db, editionUuid);
    if (!edition) return;
    const decided = await settlePendingRuns(ctx, db, editionUuid, upToRun, { final: true });
    await releaseHeldBack(ctx, db, edition, notify, decided);
  });
}

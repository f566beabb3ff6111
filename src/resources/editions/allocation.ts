import { randomInt } from 'node:crypto';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { inSchema, sql } from '../../platform/db/sql.js';
import { newUuid } from '../../platform/http/ids.js';
import { conflict } from '../../domain/errors.js';
import { QUEUES, type JobSender } from '../../platform/jobs/queue.js';
import { editionNotFound, readEdition, type AllocateJob, type CommitJob } from '../../engines/allocation/index.js';
import type { AllocateEditionInput, CommitEditionInput, EditionOut } from './schema.js';
import { getEdition } from './service.js';

// D7 `POST /editions/{uuid}/allocate` and `/commit`: background actions (spec 1.11: 202 with the edition as it
// is now). The request checks, records what was asked (a lottery run with its seed) and enqueues the job in
// the same transaction (pg-boss through the request's connection), so a job exists exactly when the request
// succeeded. The jobs (below) do the work under the edition's row lock; both are idempotent.

function jobsOf(ctx: ServiceContext): JobSender {
  if (!ctx.jobs) throw new Error('no job queue is configured for this process (createApp deps.jobs)');
  return ctx.jobs;
}

/** A seed when none was sent (D10: drawn and recorded): a non-negative 31-bit integer, easy to copy. */
const drawSeed = () => randomInt(0, 2 ** 31);

export async function allocateEdition(ctx: ServiceContext, input: AllocateEditionInput): Promise<EditionOut> {
  const jobs = jobsOf(ctx);
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const edition = await readEdition(ctx, db, input.uuid);
    if (!edition) throw editionNotFound(input.uuid);
    // D10: allocating by lot on a first-come-first-served edition (its effective procedure now, D4) is 409.
    if (edition.procedure !== 'lot') {
      throw conflict('This edition allocates places first come first served; only an edition with the lot procedure can allocate by lot.');
    }
    const uuid = newUuid();
    await inSchema(db, ctx.tenant.schema).insertInto('edition_allocations')
      .values({ uuid, edition_uuid: edition.uuid, seed: input.seed ?? drawSeed(), waitlist: input.waitlist !== false }).execute();
    const job: AllocateJob = { tenant: ctx.tenant.slug, edition: edition.uuid, allocation: uuid };
    await jobs.send(QUEUES.editionAllocate, job, { db });
  });
  return getEdition(ctx, input.uuid);
}

export async function commitEdition(ctx: ServiceContext, input: CommitEditionInput): Promise<EditionOut> {
  const jobs = jobsOf(ctx);
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const tx = inSchema(db, ctx.tenant.schema);
    const edition = await tx.selectFrom('editions as e')
      .select(({ exists, selectFrom, fn, cast }) => [
        'e.uuid',
        exists(selectFrom('attendances as a').innerJoin('offers as o', 'o.uuid', 'a.offer_uuid').select(sql`1`.as('one'))
          .whereRef('o.edition_uuid', '=', 'e.uuid').where((a) => a.ref('a.held_back'))).as('heldBack'),
        exists(selectFrom('edition_allocations as r').select(sql`1`.as('one'))
          .whereRef('r.edition_uuid', '=', 'e.uuid').where('r.finished_at', 'is', null)).as('pending'),
        cast<number>(fn.coalesce(selectFrom('edition_allocations as r').select((r) => r.fn.max('r.seq').as('seq')).whereRef('r.edition_uuid', '=', 'e.uuid'), sql`0`), 'float8').as('upToRun'),
      ])
      .where('e.uuid', '=', input.uuid).executeTakeFirst();
    if (!edition) throw editionNotFound(input.uuid);
    // The commit covers every run requested before it: marked, so a refill no longer waits for them (issue 22),
    // and a run still pending is left by its own allocate job to this commit's job, which draws it and writes
    // its decisions released at once (issue 10: one write of each application instead of two).
    await tx.updateTable('edition_allocations').set({ commit_requested_at: sql`now()` })
      .where('edition_uuid', '=', edition.uuid).where('commit_requested_at', 'is', null).where('seq', '<=', String(edition.upToRun)).execute();
    // D10: nothing held back (and no run still being drawn whose decisions it would release): nothing happens.
    if (!edition.heldBack && !edition.pending) return;
    const job: CommitJob = { tenant: ctx.tenant.slug, edition: edition.uuid, notify: input.notify !== false, upToRun: edition.upToRun };
    await jobs.send(QUEUES.editionCommit, job, { db });
  });
  return getEdition(ctx, input.uuid);
}

import { ForeignKeyConstraintViolationException, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { assertAliasFree, deriveAlias, isAliasRace, retryDerivedAlias } from '../../platform/db/aliases.js';
import { GERMAN, likePattern } from '../../platform/db/search.js';
import { effectiveEditionState, type Procedure, type TaskType } from '../../domain/edition-phases.js';
import { formatTimestamp } from '../../platform/http/dates.js';
import { pageOf } from '../../platform/http/fields.js';
import { LIST_TOTAL, reportTotal } from '../../platform/http/paging.js';
import { newUuid } from '../../platform/http/ids.js';
import { sentKeys, wasSent } from '../../platform/http/patch.js';
import { invalid, notFound, stillReferenced, violation } from '../../domain/errors.js';
import { Edition, EditionTask } from './entity.js';
import type { Selectable } from 'kysely';
import { inSchema, sql, tablesOf, type Executor, type RawBuilder, type TenantDB } from '../../platform/db/sql.js';
import type { CreateEditionInput, EditionOut, ListEditionsInput, TaskIn, TaskOut, UpdateEditionInput } from './schema.js';

// Editions (D4): reads are projections (one query with the phases aggregated), writes go through the
// entities. Responses show the EFFECTIVE `online`, `releaseParticipantLists` and `procedure` at the time
// of the request, as the phases govern them (src/domain/edition-phases.ts); the stored flags are what a
// write sets, and they apply wherever no governing phase exists.

type TaskRow = {
  uuid: string; type: TaskType; title: string | null; begin: string | null; end: string | null;
  applicationSystem: Procedure | null; maxApplications: number | null;
};
type AllocationRow = {
  uuid: string; seed: number; startedAt: string; finishedAt: string | null; confirmed: number; waitlisted: number; unfulfilled: number;
};
type Row = Pick<Selectable<TenantDB['editions']>, 'uuid' | 'name' | 'alias' | 'online' | 'release_participant_lists' | 'created_at' | 'modified_at'>
  & { procedure: Procedure; tasks: TaskRow[]; allocations: AllocationRow[]; listTotal: number };

function toOut(r: Row, now: Date): EditionOut {
  const state = effectiveEditionState(
    {
      online: r.online,
      releaseParticipantLists: r.release_participant_lists,
      procedure: r.procedure,
      tasks: r.tasks.map((t) => ({
        type: t.type,
        begin: t.begin === null ? null : new Date(t.begin),
        end: t.end === null ? null : new Date(t.end),
        applicationSystem: t.applicationSystem,
      })),
    },
    now,
  );
  const tasks: TaskOut[] = r.tasks.map((t) => ({
    uuid: t.uuid,
    type: t.type,
    title: t.title,
    begin: formatTimestamp(t.begin) ?? null,
    end: formatTimestamp(t.end) ?? null,
    applicationSystem: t.applicationSystem,
    maxApplications: t.maxApplications,
  }));
  return {
    uuid: r.uuid,
    name: r.name,
    alias: r.alias,
    ...state,
    tasks,
    // The lottery's runs (D10 "Lot and commit"), oldest first; a run still being drawn has no finishedAt.
    allocations: r.allocations.map((a) => ({
      uuid: a.uuid,
      seed: Number(a.seed),
      startedAt: formatTimestamp(a.startedAt)!,
      ...(a.finishedAt === null ? {} : { finishedAt: formatTimestamp(a.finishedAt)! }),
      confirmed: a.confirmed,
      waitlisted: a.waitlisted,
      unfulfilled: a.unfulfilled,
    })),
    createdAt: formatTimestamp(r.created_at)!,
    modifiedAt: formatTimestamp(r.modified_at)!,
  };
}

/** Raw: the phases and the lottery's runs aggregated as json per edition, one statement per page. */
function selectEditions(schema: string, where: RawBuilder<unknown>, tail: RawBuilder<unknown> = sql``) {
  const t = tablesOf(schema);
  const [editions, tasks, allocations] = [t('editions'), t('edition_tasks'), t('edition_allocations')];
  return sql<Row>`
    select e.uuid, ${LIST_TOTAL}, e.name, e.alias, e.procedure, e.online, e.release_participant_lists, e.created_at, e.modified_at,
      coalesce((
        select json_agg(json_build_object(
          'uuid', t.uuid, 'type', t.type, 'title', t.title, 'begin', t.begin_at, 'end', t.end_at,
          'applicationSystem', t.application_system, 'maxApplications', t.max_applications) order by t.position)
        from ${tasks} t where t.edition_uuid = e.uuid), '[]'::json) as tasks,
      coalesce((
        select json_agg(json_build_object(
          'uuid', a.uuid, 'seed', a.seed, 'startedAt', a.started_at, 'finishedAt', a.finished_at,
          'confirmed', a.confirmed, 'waitlisted', a.waitlisted, 'unfulfilled', a.unfulfilled) order by a.seq)
        from ${allocations} a where a.edition_uuid = e.uuid), '[]'::json) as allocations
    from ${editions} e
    where ${where}
    ${tail}`;
}

export async function listEditions(ctx: ServiceContext, input: ListEditionsInput): Promise<EditionOut[]> {
  const { limit, offset } = pageOf(input);
  const q = input.q ? likePattern(input.q) : null;
  const since = input.modifiedSince?.instant ?? null;
  const now = new Date();
  const where = sql`(${q}::text is null or e.name ilike ${q}) and (${since}::timestamptz is null or e.modified_at >= ${since})`;
  const page = (l: number, o: number) => selectEditions(ctx.tenant.schema, where, sql`order by e.name ${GERMAN}, e.uuid limit ${l} offset ${o}`).execute(dbOf(ctx.em));
  const res = await page(limit, offset);
  await reportTotal(ctx, { limit, offset }, res.rows, async () => (await page(1, 0)).rows);
  return res.rows.map((r) => toOut(r, now));
}

export async function getEdition(ctx: ServiceContext, uuid: string): Promise<EditionOut> {
  const res = await selectEditions(ctx.tenant.schema, sql`e.uuid = ${uuid}`).execute(dbOf(ctx.em));
  if (!res.rows[0]) throw notFound(`No edition with the identifier ${uuid} exists.`);
  return toOut(res.rows[0], new Date());
}

async function findOrThrow(ctx: ServiceContext, uuid: string): Promise<Edition> {
  const e = await ctx.em.findOne(Edition, { uuid });
  if (!e) throw notFound(`No edition with the identifier ${uuid} exists.`);
  return e;
}

/** Task UUIDs sent that belong to another edition: a task keeps its UUID only within its edition. */
async function assertTaskUuidsFree(db: Executor, schema: string, tasks: TaskIn[], editionUuid: string): Promise<void> {
  const sent = tasks.map((t) => t.uuid).filter((u): u is string => !!u);
  if (sent.length === 0) return;
  const rows = await inSchema(db, schema).selectFrom('edition_tasks').select('uuid')
    .where('uuid', 'in', sent).where('edition_uuid', '<>', editionUuid).execute();
  const taken = new Set(rows.map((r) => r.uuid));
  const violations = tasks.flatMap((t, i) =>
    t.uuid && taken.has(t.uuid) ? [violation(`tasks[${i}].uuid`, 'This task belongs to another edition.', 'unique')] : []);
  if (violations.length > 0) throw invalid(violations);
}

/** Replaces the edition's phases with `tasks`: kept UUIDs are updated in place, new ones created, the rest removed. */
async function replaceTasks(ctx: ServiceContext, edition: Edition, tasks: TaskIn[], existing: EditionTask[]): Promise<void> {
  await assertTaskUuidsFree(dbOf(ctx.em), ctx.tenant.schema, tasks, edition.uuid);
  const byUuid = new Map(existing.map((t) => [t.uuid, t]));
  const kept = new Set<string>();
  tasks.forEach((t, position) => {
    const fields = {
      position,
      type: t.type,
      title: t.title ?? null,
      begin: t.begin ?? null,
      end: t.end ?? null,
      applicationSystem: t.applicationSystem ?? null,
      maxApplications: t.maxApplications ?? null,
    };
    const current = t.uuid ? byUuid.get(t.uuid) : undefined;
    if (current) {
      Object.assign(current, fields);
      kept.add(current.uuid);
    } else {
      ctx.em.create(EditionTask, { uuid: t.uuid ?? newUuid(), edition, ...fields });
    }
  });
  for (const t of existing) if (!kept.has(t.uuid)) ctx.em.remove(t);
}

/** A concurrent write may take the alias (or a task UUID) between our check and the insert: still 422. */
function uniqueAsInvalid(err: unknown): unknown {
  if (err instanceof UniqueConstraintViolationException) {
    const onTask = /edition_tasks/.test(String((err as Error).message));
    return invalid([violation(onTask ? 'tasks' : 'alias', 'This value is already used.', 'unique')]);
  }
  return err;
}

async function flush(ctx: ServiceContext): Promise<void> {
  try {
    await ctx.em.flush();
  } catch (err) {
    throw uniqueAsInvalid(err);
  }
}

export async function createEdition(ctx: ServiceContext, input: CreateEditionInput): Promise<EditionOut> {
  const uuid = newUuid();
  // A derived alias is unique under concurrency too (platform/db/aliases.ts): one transaction, retried when it
  // lost the race for a derived alias; any other duplicate is 422.
  await retryDerivedAlias('editions', !input.alias, async () => {
    try {
      await ctx.em.transactional(async (em) => {
        const tx: ServiceContext = { ...ctx, em };
        const db = dbOf(em);
        const alias = input.alias ?? (await deriveAlias(db, ctx.tenant.schema, 'editions', input.name));
        if (input.alias) await assertAliasFree(db, ctx.tenant.schema, 'editions', input.alias);
        const e = em.create(Edition, {
          uuid,
          name: input.name,
          alias,
          procedure: input.procedure ?? 'firstcome',
          online: input.online ?? true,
          releaseParticipantLists: input.releaseParticipantLists ?? false,
        });
        await replaceTasks(tx, e, input.tasks ?? [], []);
        await em.flush();
      });
    } catch (err) {
      if (!input.alias && isAliasRace(err, 'editions')) throw err;
      throw uniqueAsInvalid(err);
    }
  });
  return getEdition(ctx, uuid);
}

export async function updateEdition(ctx: ServiceContext, input: UpdateEditionInput): Promise<EditionOut> {
  // Spec 1.12: an empty body returns the edition unchanged (the editions exception).
  if (sentKeys(input).length === 0) return getEdition(ctx, input.uuid);
  const e = await findOrThrow(ctx, input.uuid);
  const db = dbOf(ctx.em);
  if (input.name != null) e.name = input.name;
  if (input.alias != null && input.alias !== e.alias) {
    await assertAliasFree(db, ctx.tenant.schema, 'editions', input.alias, e.uuid);
    e.alias = input.alias;
  } else if (wasSent(input, 'alias') && input.alias === null) {
    e.alias = await deriveAlias(db, ctx.tenant.schema, 'editions', e.name, e.uuid);
  }
  if (input.procedure != null) e.procedure = input.procedure;
  if (input.online != null) e.online = input.online;
  if (input.releaseParticipantLists != null) e.releaseParticipantLists = input.releaseParticipantLists;
  if (wasSent(input, 'tasks')) {
    const existing = await ctx.em.find(EditionTask, { edition: e.uuid });
    await replaceTasks(ctx, e, input.tasks ?? [], existing);
  }
  e.modifiedAt = new Date();
  await flush(ctx);
  return getEdition(ctx, e.uuid);
}

export async function deleteEdition(ctx: ServiceContext, uuid: string): Promise<void> {
  const e = await findOrThrow(ctx, uuid);
  try {
    await ctx.em.remove(e).flush();
  } catch (err) {
    // Records of other resources that reference the edition (offers) keep it.
    if (err instanceof ForeignKeyConstraintViolationException) throw stillReferenced('The edition still has records that refer to it (for example offers); delete or move them first.');
    throw err;
  }
}

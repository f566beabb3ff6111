import type { EditionWithTasks, Procedure, TaskType } from '../../domain/edition-phases.js';
import { firstComePhaseRunning } from '../../domain/participant-list-access.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type Executor, type RawBuilder } from '../../platform/db/sql.js';

// The phase rule of an edition (D4, src/domain/edition-phases.ts) where the database applies it: as SQL
// expressions inside other projections, and as the edition with its phases for the pure rules.

// SQL forms of the phase rule (D4), for other resources' projections (offers filter by the effective
// online state). `e` names the outer query's `editions` row; `now` defaults to the statement's time.
// They mirror `effectiveEditionState` exactly; the editions tests compare both.
function running(now: RawBuilder<unknown>) {
  return sql`(gt.begin_at is null or gt.begin_at <= ${now}) and (gt.end_at is null or gt.end_at >= ${now})`;
}

// The task type is written as a literal (one of TaskType's constants): a statement without parameters is
// planned once and its plan kept (offers/public-page.ts).
function windowFlagSql(schema: string, e: string, type: TaskType, flag: string, now: Date | null) {
  const tasks = tablesOf(schema)('edition_tasks');
  const at = now ? sql`${now}::timestamptz` : sql`now()`;
  const edition = sql.ref(`${e}.uuid`);
  return sql<boolean>`(case
    when exists (select 1 from ${tasks} gt where gt.edition_uuid = ${edition} and gt.type = ${sql.lit(type)})
    then exists (select 1 from ${tasks} gt where gt.edition_uuid = ${edition} and gt.type = ${sql.lit(type)} and ${running(at)})
    else ${sql.ref(`${e}.${flag}`)} end)`;
}

/** The edition's effective `online` (D4) as a SQL expression. */
export function editionOnlineSql(schema: string, e = 'e', now: Date | null = null): RawBuilder<boolean> {
  return windowFlagSql(schema, e, 'show_offers', 'online', now);
}

/** The edition's effective `releaseParticipantLists` (D4) as a SQL expression. */
export function editionListsReleasedSql(schema: string, e = 'e', now: Date | null = null): RawBuilder<boolean> {
  return windowFlagSql(schema, e, 'publish_lists', 'release_participant_lists', now);
}

/** The edition's effective `procedure` (D4) as a SQL expression. */
export function editionProcedureSql(schema: string, e = 'e', now: Date | null = null): RawBuilder<Procedure> {
  const tasks = tablesOf(schema)('edition_tasks');
  const at = now ? sql`${now}::timestamptz` : sql`now()`;
  const isRunning = running(at);
  return sql<Procedure>`coalesce((
    select gt.application_system from ${tasks} gt
    where gt.edition_uuid = ${sql.ref(`${e}.uuid`)} and gt.type = 'application_system'
    order by (${isRunning}) desc,
      case when ${isRunning} then coalesce(gt.begin_at, '-infinity') end desc nulls last,
      case when gt.end_at < ${at} then gt.end_at end desc nulls last,
      coalesce(gt.begin_at, '-infinity') asc,
      gt.position desc
    limit 1), ${sql.ref(`${e}.procedure`)})`;
}

/**
 * The end of the edition's last task in epoch milliseconds (null without tasks): the horizon of an open RRULE
 * (D10, `expandOccurrences`). `edition` names the outer query's edition uuid column.
 */
export function editionHorizonSql(schema: string, edition: string): RawBuilder<number | null> {
  return sql<number | null>`(select extract(epoch from max(hz.end_at)) * 1000 from ${tablesOf(schema)('edition_tasks')} hz
    where hz.edition_uuid = ${sql.ref(edition)})::float8`;
}

/** The edition with its phases, for the phase rules (D4). */
export async function editionWithTasks(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<EditionWithTasks | null> {
  const t = tablesOf(ctx.tenant.schema);
  // Raw: the phases as one json array in the edition's row.
  const res = await sql<{
    procedure: Procedure; online: boolean; releaseParticipantLists: boolean;
    tasks: { type: TaskType; begin: number | null; end: number | null; applicationSystem: Procedure | null }[];
  }>`select e.procedure, e.online, e.release_participant_lists as "releaseParticipantLists",
      coalesce((select json_agg(json_build_object('type', t.type, 'begin', extract(epoch from t.begin_at) * 1000,
        'end', extract(epoch from t.end_at) * 1000, 'applicationSystem', t.application_system))
        from ${t('edition_tasks')} t where t.edition_uuid = e.uuid), '[]'::json) as tasks
    from ${t('editions')} e where e.uuid = ${editionUuid}::uuid`.execute(db);
  const r = res.rows[0];
  if (!r) return null;
  return {
    procedure: r.procedure, online: r.online, releaseParticipantLists: r.releaseParticipantLists,
    tasks: r.tasks.map((t) => ({
      type: t.type, applicationSystem: t.applicationSystem,
      begin: t.begin === null ? null : new Date(t.begin), end: t.end === null ? null : new Date(t.end),
    })),
  };
}

export async function firstComeRunning(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<boolean> {
  const edition = await editionWithTasks(ctx, db, editionUuid);
  return !!edition && firstComePhaseRunning(edition, new Date());
}

import type { AttendanceState } from '../../domain/attendance-states.js';
import { allocateByLot, type LotApplication, type LotInput, type LotInterval, type LotOffer, type LotResult } from '../../domain/lottery.js';
import { sortAfterDecisions, type SortableApplication } from '../../domain/participant-list.js';
import { expandOccurrences } from '../../domain/recurrence.js';
import type { ServiceContext } from '../../platform/context.js';
import type { Selectable } from 'kysely';
import { anyOf, inSchema, sql, tablesOf, type Executor, type TenantDB } from '../../platform/db/sql.js';
import { statusChanged } from '../participant-list/index.js';
import { recordEvent, recordEvents } from '../../platform/events/events.js';
import { lockEditionOffers, pendingRuns, type PendingRun } from './store.js';
import { editionHorizonSql } from '../edition-phases/index.js';

// The lottery run (D7, D10 "Lot and commit"), the work of the `edition-allocate` job, inside the job's
// transaction holding the edition's row lock. It loads the edition's `waiting` applications, the offers'
// places, age limits and dates, and the children's confirmed places in any edition; `allocateByLot`
// (src/domain/lottery.ts, pure, in memory) decides. Only then are the edition's offers locked (the lock every
// participant-list writer takes), so applications can still be made and changed while the lot is drawn
// (issue 10: the offers stay locked only for the writes). Under the lock a fingerprint of what the draw read
// is compared with the one taken before reading; if a writer got in between, the draw is read and made
// again under the lock. The decisions are written held back with their reasons, the participant lists
// renumbered (the decided ones at the end of their new group, in draw order) and the run marked finished,
// each in one statement for all applications, in the same transaction. A worker dying mid-run loses
// nothing: the transaction rolls back, the job runs again and finds the run still pending; a finished run
// is never drawn twice.


type DateRow = { begin: number; end: number; recurrence: string | null };

/** An offer's dates with recurrences expanded (D10: an open RRULE runs to the edition's last task end, or a year). */
function intervals(dates: DateRow[], horizonMs: number | null): LotInterval[] {
  return dates.flatMap((d) =>
    expandOccurrences({
      begin: new Date(d.begin), end: new Date(d.end), recurrence: d.recurrence, horizon: horizonMs === null ? null : new Date(horizonMs),
    }).map((o) => ({ begin: o.begin.toISOString(), end: o.end.toISOString() })),
  );
}

/**
 * Draws the edition's pending runs up to `upToSeq`, oldest first, and returns the applications decided. Call
 * inside a transaction holding the edition's row lock (store.ts `lockEdition`). `final`: the caller (the
 * commit job) releases the decisions in this same transaction, so they are written released at once instead
 * of held back and then released (one write of each application instead of two; no one can see the
 * difference, as nothing outside the transaction sees the held-back state in between).
 */
export async function settlePendingRuns(
  ctx: ServiceContext, db: Executor, editionUuid: string, upToSeq: number, opts: { final?: boolean } = {},
): Promise<string[]> {
  const decided: string[] = [];
  for (const run of await pendingRuns(ctx, db, editionUuid, upToSeq)) {
    const result = await drawRun(ctx, db, editionUuid, run, opts.final === true);
    for (const d of result.decisions) decided.push(d.id);
    ctx.log.info({ edition: editionUuid, allocation: run.uuid, ...result.counts }, 'lottery run drawn');
  }
  return decided;
}

/** What the draw of one run reads, as the pure function takes it. */
export type LotDrawInput = LotInput & { offerOf: Map<string, string> };

/**
 * The inputs of a draw of the edition now (the edition's `waiting` applications, their offers, the
 * children's confirmed places). Exported for the benchmark, which times `allocateByLot` on them alone.
 */
export async function loadLotInput(
  ctx: ServiceContext, db: Executor, editionUuid: string, run: { seed: number; waitlist: boolean },
): Promise<LotDrawInput> {
  // D10: the draw depends on the seed and the creation order, never on UUIDs. The rank of creation among the
  // applications drawn (not the table-wide serial) makes an identical scenario draw identically, also in a
  // second edition of the same municipality. Raw: the rank is a window function.
  const t = tablesOf(ctx.tenant.schema);
  const apps = await sql<LotApplication & { account: string | null }>`
    select a.uuid as id, p.account_uuid as account, a.participant_uuid as "participantId", a.offer_uuid as "offerId", a.user_priority as "userPriority",
      (row_number() over (order by a.seq))::int as "createdOrder", to_char(p.date_of_birth, 'YYYY-MM-DD') as "dateOfBirth"
    from ${t('attendances')} a
    join ${t('offers')} o on o.uuid = a.offer_uuid
    join ${t('participants')} p on p.uuid = a.participant_uuid
    where o.edition_uuid = ${editionUuid}::uuid and a.status = 'waiting'
    order by a.seq`.execute(db);
  const applications = apps.rows;
  const offerOf = new Map(applications.map((a) => [a.id, a.offerId]));
  const base = { seed: run.seed, waitlist: run.waitlist, applications, offerOf };
  if (applications.length === 0) return { ...base, offers: [], existingConfirmed: [] };
  const offerIds = [...new Set(applications.map((a) => a.offerId))];
  const participantIds = [...new Set(applications.map((a) => a.participantId))];
  const [offers, existingConfirmed] = [await loadOffers(ctx, db, offerIds), await loadConfirmedPlaces(ctx, db, participantIds)];
  return { ...base, offers, existingConfirmed };
}

/**
 * What a writer holding an offer's lock can change that the draw reads: the edition's offers (places, age
 * limits, dates) and their applications (state, priority). Equal before the reads and under the lock: nothing
 * the draw read changed in between.
 */
async function drawFingerprint(ctx: ServiceContext, db: Executor, editionUuid: string): Promise<string> {
  const t = tablesOf(ctx.tenant.schema);
  // Raw: one md5 over ordered aggregates of both tables.
  const res = await sql<{ f: string }>`
    select md5(
      coalesce((select string_agg(format('%s:%s:%s:%s:%s:%s', o.uuid, o.max_participants, o.min_age, o.max_age, o.modified_at,
          (select string_agg(format('%s/%s/%s', d."begin", d."end", d.recurrence), ',' order by d."begin", d.uuid)
            from ${t('offer_dates')} d where d.offer_uuid = o.uuid)), ';' order by o.uuid)
        from ${t('offers')} o where o.edition_uuid = ${editionUuid}::uuid), '') || '|' ||
      coalesce((select string_agg(format('%s:%s:%s:%s', a.uuid, a.status, a.user_priority, a.modified_at), ';' order by a.seq)
        from ${t('attendances')} a join ${t('offers')} o on o.uuid = a.offer_uuid
        where o.edition_uuid = ${editionUuid}::uuid), '')) as f`.execute(db);
  return res.rows[0]!.f;
}

/** The draw of one run as read before the lock: its inputs, its decisions and the lists it reorders. */
async function readAndDraw(ctx: ServiceContext, db: Executor, editionUuid: string, run: PendingRun) {
  const input = await loadLotInput(ctx, db, editionUuid, run);
  const result = allocateByLot(input);
  const offerUuids = [...new Set(result.decisions.map((d) => input.offerOf.get(d.id)!))].sort();
  const lists = await loadLists(ctx, db, offerUuids);
  return { input, result, lists };
}

async function drawRun(ctx: ServiceContext, db: Executor, editionUuid: string, run: PendingRun, final: boolean): Promise<LotResult> {
  const before = await drawFingerprint(ctx, db, editionUuid);
  let drawn = await readAndDraw(ctx, db, editionUuid, run);
  await lockEditionOffers(ctx, db, editionUuid);
  if ((await drawFingerprint(ctx, db, editionUuid)) !== before) {
    // A writer changed the edition's applications or offers while the lot was read: draw again under the lock.
    ctx.log.info({ edition: editionUuid, allocation: run.uuid }, 'lottery inputs changed while drawing; drawn again under the lock');
    drawn = await readAndDraw(ctx, db, editionUuid, run);
  }
  const { result, lists } = drawn;
  // D8: no charge reconciliation here. A decision held back is never payable, and neither is the `waiting`
  // application it decides, so no charge target changes (a paid one stays charged either way); the commit
  // reconciles every application it releases (release.ts), including these when `final`.
  if (result.decisions.length > 0) {
    const written = await writeDecisions(ctx, db, result, lists, !final);
    // Issue 14: every decision written is a status change (held back, or final when the commit draws), in bulk.
    const byId = new Map((drawn.input.applications as (LotApplication & { account: string | null })[]).map((a) => [a.id, a]));
    await recordEvents(ctx, db, result.decisions.filter((d) => written.has(d.id)).map((d) => {
      const app = byId.get(d.id)!;
      return statusChanged(
        { attendance: d.id, offer: app.offerId, edition: editionUuid, participant: app.participantId, account: app.account },
        { from: 'waiting', to: d.status, heldBack: !final, decisionReason: d.reason, cause: 'allocation' },
      );
    }));
  }
  await inSchema(db, ctx.tenant.schema).updateTable('edition_allocations')
    .set({ finished_at: sql`now()`, confirmed: result.counts.confirmed, waitlisted: result.counts.waitlisted, unfulfilled: result.counts.unfulfilled })
    .where('uuid', '=', run.uuid).execute();
  await recordEvent(ctx, db, 'edition.allocated', { edition: editionUuid, allocation: run.uuid, seed: run.seed, ...result.counts });
  return result;
}

/** The offers' places (D10: held-back confirmations hold a place too), age limits and expanded dates. */
async function loadOffers(ctx: ServiceContext, db: Executor, offerIds: string[]): Promise<LotOffer[]> {
  const t = tablesOf(ctx.tenant.schema);
  // Raw: each offer's dates as one json array, its confirmed count and horizon as subqueries.
  type O = Selectable<TenantDB['offers']>;
  const res = await sql<{
    id: string; capacity: O['max_participants']; minAge: O['min_age']; maxAge: O['max_age']; confirmedCount: number;
    dates: DateRow[]; horizon: number | null;
  }>`
    select o.uuid as id, o.max_participants as capacity, o.min_age as "minAge", o.max_age as "maxAge",
      (select count(*) from ${t('attendances')} c where c.offer_uuid = o.uuid and c.status = 'confirmed')::int as "confirmedCount",
      coalesce((select json_agg(json_build_object('begin', extract(epoch from d."begin") * 1000,
          'end', extract(epoch from d."end") * 1000, 'recurrence', d.recurrence) order by d."begin")
        from ${t('offer_dates')} d where d.offer_uuid = o.uuid), '[]'::json) as dates,
      ${editionHorizonSql(ctx.tenant.schema, 'o.edition_uuid')} as horizon
    from ${t('offers')} o where o.uuid = any(${offerIds}::uuid[])`.execute(db);
  return res.rows.map((o) => {
    const dates = intervals(o.dates, o.horizon);
    // D10: age is taken at the offer's first date (the earliest begin; recurrences start there).
    const first = o.dates.length > 0 ? new Date(Math.min(...o.dates.map((d) => d.begin))).toISOString() : null;
    return {
      id: o.id, capacity: o.capacity, confirmedCount: o.confirmedCount, minAge: o.minAge, maxAge: o.maxAge, firstDate: first, dates,
    };
  });
}

/** D10: a child's confirmed places in any edition count as overlaps. */
async function loadConfirmedPlaces(ctx: ServiceContext, db: Executor, participantIds: string[]): Promise<LotApplicationPlaces> {
  const t = tablesOf(ctx.tenant.schema);
  // Raw: each place's dates as one json array.
  const res = await sql<{ participantId: string; dates: DateRow[]; horizon: number | null }>`
    select a.participant_uuid as "participantId",
      coalesce((select json_agg(json_build_object('begin', extract(epoch from d."begin") * 1000,
          'end', extract(epoch from d."end") * 1000, 'recurrence', d.recurrence))
        from ${t('offer_dates')} d where d.offer_uuid = a.offer_uuid), '[]'::json) as dates,
      ${editionHorizonSql(ctx.tenant.schema, 'o.edition_uuid')} as horizon
    from ${t('attendances')} a
    join ${t('offers')} o on o.uuid = a.offer_uuid
    where a.status = 'confirmed' and a.participant_uuid = any(${participantIds}::uuid[])`.execute(db);
  return res.rows.map((r) => ({ participantId: r.participantId, dates: intervals(r.dates, r.horizon) }));
}
type LotApplicationPlaces = Array<{ participantId: string; dates: LotInterval[] }>;

/** The participant lists of these offers (every application, any state), in one statement. */
async function loadLists(ctx: ServiceContext, db: Executor, offerUuids: string[]): Promise<Map<string, SortableApplication[]>> {
  const lists = new Map<string, SortableApplication[]>(offerUuids.map((o) => [o, []]));
  if (offerUuids.length === 0) return lists;
  const rows = await inSchema(db, ctx.tenant.schema).selectFrom('attendances')
    .select(['uuid as id', 'offer_uuid as offer', 'status', 'sorting', sql<number>`(extract(epoch from created_at) * 1000)::float8`.as('createdMs')])
    .where('offer_uuid', '=', anyOf(offerUuids))
    .$narrowType<{ status: AttendanceState }>()
    .execute();
  for (const r of rows) lists.get(r.offer)!.push({ id: r.id, status: r.status, sorting: r.sorting, createdAt: new Date(r.createdMs) });
  return lists;
}

/**
 * Writes the run in one statement: every decision with its reason, held back (D7; unless the commit releases
 * it in the same transaction), and the participant lists
 * the run touched renumbered (D10 `sorting`): the decided applications go to the end of their new group in
 * draw order (D7: the waiting list follows the draw), everyone else keeps their place; only changed rows are
 * written. A decision is written on a `waiting` application only.
 */
async function writeDecisions(
  ctx: ServiceContext, db: Executor, result: LotResult, lists: Map<string, SortableApplication[]>, heldBack: boolean,
): Promise<Set<string>> {
  const decided = new Map(result.decisions.map((d) => [d.id, d]));
  const ids: string[] = [];
  const statuses: (string | null)[] = [];
  const reasons: (string | null)[] = [];
  const sortings: number[] = [];
  for (const rows of lists.values()) {
    const after = rows.map((r) => (decided.has(r.id) ? { ...r, status: decided.get(r.id)!.status } : r));
    const ranks = new Map(after.filter((r) => decided.has(r.id)).map((r) => [r.id, decided.get(r.id)!.drawPosition]));
    const stored = new Map(rows.map((r) => [r.id, r.sorting]));
    for (const r of sortAfterDecisions(after, ranks)) {
      const d = decided.get(r.id);
      if (!d && stored.get(r.id) === r.sorting) continue;
      ids.push(r.id);
      statuses.push(d?.status ?? null);
      reasons.push(d?.reason ?? null);
      sortings.push(r.sorting);
    }
  }
  if (ids.length === 0) return new Set();
  // Raw: one `update … from unnest(arrays)` for every decision and position of the run.
  const res = await sql<{ uuid: string | null }>`update ${tablesOf(ctx.tenant.schema)('attendances')} a
    set status = coalesce(v.status, a.status),
      held_back = case when v.status is null then a.held_back else ${heldBack} end,
      decision_reason = case when v.status is null then a.decision_reason else v.reason end,
      status_changed_at = case when v.status is null then a.status_changed_at else now() end,
      confirmed_at = case when v.status = 'confirmed' then now() else a.confirmed_at end,
      sorting = v.sorting, modified_at = now()
    from unnest(${ids}::uuid[], ${statuses}::text[], ${reasons}::text[], ${sortings}::int[]) as v(id, status, reason, sorting)
    where a.uuid = v.id and (v.status is null or a.status = 'waiting')
    returning case when v.status is not null then a.uuid end as uuid`.execute(db);
  // The decisions written (a waiting application only: a concurrent change wins).
  return new Set(res.rows.flatMap((r) => (r.uuid ? [r.uuid] : [])));
}

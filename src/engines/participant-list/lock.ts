import type { AttendanceState } from '../../domain/attendance-states.js';
import type { Procedure } from '../../domain/edition-phases.js';
import { sortParticipantList } from '../../domain/participant-list.js';
import type { ServiceContext } from '../../platform/context.js';
import { inSchema, sql, tablesOf, type Executor } from '../../platform/db/sql.js';
import { claimOfferShare } from '../../platform/db/attempts.js';
import type { ApplicationQuestion } from '../../resources/offers/entity.js';
import { editionProcedureSql } from '../edition-phases/index.js';

// Shared steps of every write to a participant list. Each write runs in one transaction that first locks
// the offer's row (`for no key update`): writers of one offer take turns in the database, so places are
// never overbooked and `sorting` stays 1..n, across processes. Inserts referencing the offer only take a
// key-share lock, which `for no key update` does not block. Two offers (transfer) are locked in uuid order.
// A new application takes the same lock inside one statement of its own (`appendApplication` below).
// Issue 23: before an offer's lock, a writer takes a place of the offer's share of the pool (platform/db/attempts.ts),
// so the writers of one offer whose row is held for long never hold more than that share of the connections.

export type LockedOffer = {
  uuid: string;
  name: string;
  editionUuid: string;
  maxParticipants: number | null;
  fee: number | null;
  applicationQuestions: ApplicationQuestion[];
  /** The edition's effective procedure now (D4). */
  procedure: Procedure;
  /** D5: called off (nothing of it is payable). */
  cancelled: boolean;
};

/** Locks the offers (in uuid order) for the rest of the transaction; returns those that exist. */
export async function lockOffers(ctx: ServiceContext, db: Executor, uuids: string[]): Promise<Map<string, LockedOffer>> {
  const out = new Map<string, LockedOffer>();
  const tx = inSchema(db, ctx.tenant.schema);
  for (const uuid of [...new Set(uuids)].sort()) {
    claimOfferShare(ctx.tenant.schema, uuid);
    const row = await tx.selectFrom('offers as o').innerJoin('editions as e', 'e.uuid', 'o.edition_uuid')
      .select([
        'o.uuid', 'o.name', 'o.edition_uuid as editionUuid', 'o.max_participants as maxParticipants', 'o.fee',
        'o.application_questions as applicationQuestions', editionProcedureSql(ctx.tenant.schema, 'e').as('procedure'),
        'o.called_off as cancelled',
      ])
      .where('o.uuid', '=', uuid)
      .forNoKeyUpdate('o')
      .$castTo<LockedOffer>()
      .executeTakeFirst();
    if (row) out.set(uuid, row);
  }
  return out;
}

export async function lockOffer(ctx: ServiceContext, db: Executor, uuid: string): Promise<LockedOffer | null> {
  return (await lockOffers(ctx, db, [uuid])).get(uuid) ?? null;
}

/** One row of a participant list, as the ordering rule needs it. */
export type ListRow = { id: string; participant: string; status: AttendanceState; sorting: number | null; createdAt: Date };

/** The offer's participant list (unordered). Call with the offer locked. */
export async function loadList(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<ListRow[]> {
  const rows = await inSchema(db, ctx.tenant.schema).selectFrom('attendances')
    .select(['uuid as id', 'participant_uuid as participant', 'status', 'sorting', sql<number>`(extract(epoch from created_at) * 1000)::float8`.as('createdMs')])
    .where('offer_uuid', '=', offerUuid)
    .$narrowType<{ status: AttendanceState }>()
    .execute();
  return rows.map((r) => ({ id: r.id, participant: r.participant, status: r.status, sorting: r.sorting, createdAt: new Date(r.createdMs) }));
}

/**
 * Stores the positions `sortParticipantList` gives `rows` (D10 `sorting`: 1..n, groups by state, each keeping
 * its previous order, new ones last in their group). Rows whose position changed count as modified
 * (`modifiedSince`); `skip` names a row its caller writes itself. Returns the new positions.
 */
export async function saveOrder(ctx: ServiceContext, db: Executor, rows: ListRow[], skip: string | null = null): Promise<Map<string, number>> {
  const before = new Map(rows.map((r) => [r.id, r.sorting]));
  const sorted = sortParticipantList(rows);
  const changed = sorted.filter((a) => a.id !== skip && before.get(a.id) !== a.sorting);
  if (changed.length > 0) {
    // Raw: every changed position in one `update … from unnest(arrays)`.
    await sql`update ${tablesOf(ctx.tenant.schema)('attendances')} a set sorting = v.s, modified_at = now()
      from unnest(${changed.map((c) => c.id)}::uuid[], ${changed.map((c) => c.sorting)}::int[]) as v(id, s)
      where a.uuid = v.id`.execute(db);
  }
  return new Map(sorted.map((a) => [a.id, a.sorting]));
}

/** Renumbers the offer's participant list. Call with the offer locked, after the change is flushed. */
export async function reorderList(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<void> {
  await saveOrder(ctx, db, await loadList(ctx, db, offerUuid));
}


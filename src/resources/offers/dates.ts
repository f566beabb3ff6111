import { expandOccurrences, touchesDays } from '../../domain/recurrence.js';
import type { ServiceContext } from '../../platform/context.js';
import { inSchema, type Executor } from '../../platform/db/sql.js';
import { berlinDayBounds } from '../../platform/http/dates.js';
import { editionHorizonSql } from '../../engines/edition-phases/index.js';

// The offers' dates as the list's `from`/`until` filters read them (D5, D10): a date with a recurrence counts
// on each of its occurrences, expanded by the pure rules (domain/recurrence.ts).

/** Offers with an occurrence on the Berlin days (D5, D10): coarse SQL pre-filter, exact check with the rules. */
export async function offersTouchingDays(ctx: ServiceContext, db: Executor, fromDay: string | null, untilDay: string | null): Promise<string[]> {
  const rangeStart = fromDay ? berlinDayBounds(fromDay).start.toISOString() : null;
  const rangeEnd = untilDay ? berlinDayBounds(untilDay).end.toISOString() : null;
  const rows = await inSchema(db, ctx.tenant.schema).selectFrom('offer_dates as d').innerJoin('offers as o', 'o.uuid', 'd.offer_uuid')
    .select((eb) => ['d.offer_uuid as offerUuid', 'd.begin', 'd.end', 'd.recurrence',
      eb.case().when('d.recurrence', 'is not', null).then(editionHorizonSql(ctx.tenant.schema, 'o.edition_uuid')).end().as('horizon')])
    .$if(rangeEnd !== null, (qb) => qb.where('d.begin', '<', rangeEnd!))
    .$if(rangeStart !== null, (qb) => qb.where((eb) => eb.or([
      eb('d.recurrence', 'is not', null), eb('d.end', '>', rangeStart!), eb('d.begin', '>=', rangeStart!)])))
    .execute();
  const hits = new Set<string>();
  for (const r of rows) {
    if (hits.has(r.offerUuid)) continue;
    const begin = new Date(r.begin);
    const horizon = r.horizon === null ? null : new Date(r.horizon);
    const occurrences = expandOccurrences({ begin, end: new Date(r.end), recurrence: r.recurrence, horizon });
    if (touchesDays(occurrences, fromDay, untilDay)) hits.add(r.offerUuid);
  }
  return [...hits];
}

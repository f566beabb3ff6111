import { expandOccurrences, touchesDays } from '../../domain/recurrence.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, type Executor } from '../../platform/db/sql.js';
import { berlinDayBounds } from '../../platform/http/dates.js';
import { tableOf } from './projection.js';

// The offers' dates as the list's `from`/`until` filters read them (D5, D10): a date with a recurrence counts
// on each of its occurrences, expanded by the pure rules (domain/recurrence.ts).

const ONE_YEAR_MS = 366 * 86_400_000;

/** Offers with an occurrence on the Berlin days (D5, D10): coarse SQL pre-filter, exact check with the rules. */
export async function offersTouchingDays(ctx: ServiceContext, db: Executor, fromDay: string | null, untilDay: string | null): Promise<string[]> {
  const rangeStart = fromDay ? berlinDayBounds(fromDay).start : null;
  const rangeEnd = untilDay ? berlinDayBounds(untilDay).end : null;
  const rows = await sql<{ offerUuid: string; horizon: Date | null; begin: Date; end: Date; recurrence: string | null }>`
    select d.offer_uuid as "offerUuid", d."begin", d."end", d.recurrence,
      case when d.recurrence is not null then (select max(t.end_at) from ${tableOf(ctx, 'edition_tasks')} t
        where t.edition_uuid = o.edition_uuid) end as horizon
    from ${tableOf(ctx, 'offer_dates')} d join ${tableOf(ctx, 'offers')} o on o.uuid = d.offer_uuid
    where (${rangeEnd}::timestamptz is null or d."begin" < ${rangeEnd})
      and (${rangeStart}::timestamptz is null or d.recurrence is not null or d."end" > ${rangeStart} or d."begin" >= ${rangeStart})`.execute(db);
  const hits = new Set<string>();
  for (const r of rows.rows) {
    if (hits.has(r.offerUuid)) continue;
    const begin = new Date(r.begin);
    const horizon = r.horizon ? new Date(r.horizon) : new Date(begin.getTime() + ONE_YEAR_MS);
    const occurrences = expandOccurrences({ begin, end: new Date(r.end), recurrence: r.recurrence, horizon });
    if (touchesDays(occurrences, fromDay, untilDay)) hits.add(r.offerUuid);
  }
  return [...hits];
}

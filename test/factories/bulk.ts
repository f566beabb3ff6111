import type { Executor } from '../../src/platform/db/sql.js';
import { qualified, sql } from '../../src/platform/db/sql.js';

// Volume for the job tests and the benchmarks: many families in one statement each (the API or the services
// make the edition and the offers). Family i: an account `family<i>@bulk.example` with one child who applies
// (waiting) for offer i mod n, in creation order.
export async function bulkFamilies(db: Executor, tenant: { slug: string; schema: string }, opts: { families: number; offers: string[] }): Promise<void> {
  const q = (name: string) => qualified(tenant.schema, name);
  const salt = tenant.slug;
  await db.transaction().execute(async (tx) => {
    await sql`insert into ${q('accounts')} (uuid, email, firstname, lastname)
      select md5('a' || i || ${salt})::uuid, 'family' || i || '@bulk.example', 'Eltern', 'Familie ' || i
      from generate_series(1, ${opts.families}) i`.execute(tx);
    await sql`insert into ${q('participants')} (uuid, account_uuid, firstname, lastname, date_of_birth)
      select md5('p' || i || ${salt})::uuid, md5('a' || i || ${salt})::uuid, 'Kind' || i, 'Familie ' || i, date '2016-05-01'
      from generate_series(1, ${opts.families}) i`.execute(tx);
    await sql`insert into ${q('attendances')} (uuid, offer_uuid, participant_uuid, status, sorting, fee)
      select md5('x' || i || ${salt})::uuid, o.uuid, md5('p' || i || ${salt})::uuid, 'waiting',
        row_number() over (partition by o.uuid order by i), o.fee
      from generate_series(1, ${opts.families}) i
      join ${q('offers')} o on o.uuid = (${opts.offers}::uuid[])[1 + (i - 1) % ${opts.offers.length}]
      order by i`.execute(tx);
  });
}

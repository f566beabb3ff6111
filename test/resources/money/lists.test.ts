import { beforeAll, describe, expect, inject, it } from 'vitest';
import { useHarness, at } from '../../harness/harness.js';
import { spyOnQueries } from '../../harness/queries.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { createEdition } from './helpers.js';

// The money lists (debtors, ledgers, bookings, receipts) are one SQL statement per page: 200 records take as
// many round trips to the database as 2.

// Directly connected also under TEST_VIA_PGBOUNCER: a named statement a pooler loses is sent again (one more
// round trip, once per process), which is not what this counts.
const { h, t } = useHarness({ databaseUrl: inject('directDatabaseUrl') });
beforeAll(async () => {
  const edition = await createEdition(t, { procedure: 'firstcome' });
  const db = executorOf(h.orm);
  const q = (name: string) => qualified(t.tenant.schema, name);
  // 200 families, each a debtor with a ledger, two bookings and a receipt with one line.
  await sql`insert into ${q('accounts')} (uuid, email, lastname) select gen_random_uuid(), 'f' || i || '@example.org', 'Familie ' || i
    from generate_series(1, 200) i`.execute(db);
  await sql`insert into ${q('debtors')} (uuid, account_uuid) select gen_random_uuid(), uuid from ${q('accounts')}`.execute(db);
  await sql`insert into ${q('ledgers')} (uuid, debtor_uuid, edition_uuid) select gen_random_uuid(), uuid, ${edition.uuid}::uuid
    from ${q('debtors')}`.execute(db);
  await sql`insert into ${q('receipts')} (uuid, number, debtor_uuid, total, paid_at)
    select gen_random_uuid(), 'X-' || row_number() over (order by uuid), uuid, 100, now() from ${q('debtors')}`.execute(db);
  await sql`insert into ${q('receipt_items')} (receipt_uuid, position, attendance_uuid, ledger_uuid, amount)
    select r.uuid, 1, gen_random_uuid(), l.uuid, 100 from ${q('receipts')} r join ${q('ledgers')} l on l.debtor_uuid = r.debtor_uuid`.execute(db);
  await sql`insert into ${q('bookings')} (uuid, ledger_uuid, type, amount, text, receipt_uuid)
    select gen_random_uuid(), l.uuid, x.type, x.amount, 'Test', case when x.type = 'payment' then r.uuid end
    from ${q('ledgers')} l join ${q('receipts')} r on r.debtor_uuid = l.debtor_uuid
    cross join (values ('charge', 100), ('payment', -100)) as x(type, amount)`.execute(db);
});

describe('money lists', () => {
  it('one SQL statement per page: 200 records take as many round trips as 2', async () => {
    const queries = spyOnQueries();
    const measure = async (path: string) => {
      queries.count = 0;
      const res = await t.get(path);
      expect(res.status, res.text).toBe(200);
      return { n: queries.count, len: at(res.body, 'length') };
    };
    try {
      for (const base of ['/debtors?', '/ledgers?', '/bookings?', '/receipts?', '/receipts?edition=x&', '/ledgers?account=f1@example.org&']) {
        const small = await measure(`${base}itemsPerPage=2`);
        const large = await measure(`${base}itemsPerPage=200`);
        if (base.includes('edition=x')) expect([small.len, large.len]).toEqual([0, 0]);
        else if (base.includes('account=')) expect([small.len, large.len]).toEqual([1, 1]);
        else expect([small.len, large.len], base).toEqual([2, 200]);
        expect(large.n, base).toBe(small.n);
      }
    } finally {
      queries.restore();
    }
    const [ledger] = (await t.get('/ledgers?account=f7@example.org')).body;
    expect(ledger.balance).toBe(0);
    expect(ledger.bookEntries.map((e) => e.amount)).toEqual([100, -100]);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { pgClient as client, useHarness } from '../../harness/harness.js';
import { applyFor, createAccount, createEdition, createOffer, getOk, ledgerOfAccount, pay } from '../money/helpers.js';

// Issue 13 item 4 (the reversal's part): a receipt reversal took the lock of a further offer while holding
// other offers and the receipt's row, out of uuid order, so it could deadlock with a transfer (a 5xx). Every
// offer lock is now taken first, in uuid order. The race is staged with two extra connections holding
// the locks a transfer holds, in the order a transfer takes them (offers, then the receipt's row).
let schema: string;

// The staged race needs the transfer and the reversal both waiting in PostgreSQL for one offer's lock: the
// offer's share of the pool (issue 23) would otherwise hold the second back in the service, before any lock.
const { h, t } = useHarness({ shares: { offer: 1 } });
beforeAll(async () => {
  schema = t.tenant.schema;
});

/** Waits until `n` backends of this database wait for a lock. */
async function waitersAtLeast(probe: pg.Client, n: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const r = await probe.query(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
    if (r.rows[0].n >= n) return;
    await sleep(10);
  }
  // What the database's backends were doing instead (a flake seen once in CI: no waiter after the transfer).
  const r = await probe.query(`select pid, state, wait_event_type, wait_event, left(query, 120) as query from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() order by pid`);
  throw new Error(`fewer than ${n} backends waiting for a lock; the backends: ${JSON.stringify(r.rows)}`);
}

const lockOffer = (c: pg.Client, uuid: string) => c.query(`select uuid from "${schema}".offers where uuid = $1 for no key update`, [uuid]);

describe('receipt reversal against a concurrent transfer', () => {
  it('takes every offer lock in uuid order first: no deadlock, no 5xx (staged race)', async () => {
    const acc = await createAccount(t);
    const edition = (await createEdition(t, { procedure: 'firstcome' })).uuid;
    const offers = await Promise.all([0, 1].map(() => createOffer(t, { edition, fee: 700, maxParticipants: null })));
    const [low, high] = offers.map((o) => o.uuid).sort();
    const a = await applyFor(t, high, acc.uuid);
    const receipt = await pay(t, [{ attendance: a.uuid }]);

    const c1 = await client();
    const c2 = await client();
    const probe = await client();
    // The holder of the locks a transfer holds must not detect the deadlock itself: the service's side would.
    await c2.query(`set deadlock_timeout = '20s'`);
    try {
      // 1. Someone writes to the receipt's offer (`high`).
      await c1.query('begin');
      await lockOffer(c1, high);
      // 2. A transfer of the receipt's application to `low` locks `low`, then waits for `high`.
      const transfer = t.post(`/attendances/${a.uuid}/transfer`, { offer: low, status: 'confirmed' });
      await waitersAtLeast(probe, 1);
      // 3. The reversal reads the lines (offer `high`) and waits for `high` too.
      const reversal = t.post(`/receipts/${receipt.uuid}/reverse`, {});
      await waitersAtLeast(probe, 2);
      // 4. Another writer (c2) queues for `low`; it gets it when the transfer commits.
      await c2.query('begin');
      const c2Low = lockOffer(c2, low);
      await waitersAtLeast(probe, 3);
      await c1.query('commit');
      // The transfer runs and commits (the line moved to an application of `low`); c2 holds `low`.
      const moved = await transfer;
      expect(moved.status, moved.text).toBe(201);
      await c2Low;
      // 5. The reversal now finds its line on `low`, which c2 holds: it waits for it.
      await waitersAtLeast(probe, 1).catch(async (err: Error) => {
        const answered = await Promise.race([reversal.then((r) => `answered ${r.status} ${r.text.slice(0, 300)}`), sleep(50).then(() => 'not answered yet')]);
        throw new Error(`${err.message}; the reversal: ${answered}`);
      });
      // 6. c2, like a transfer, goes on to the receipt's row. Before the fix the reversal held that row
      //    while waiting for `low`: a deadlock, answered 500.
      await c2.query(`update "${schema}".receipts set modified_at = now() where uuid = $1`, [receipt.uuid]);
      await c2.query('commit');
      const res = await reversal;
      expect(res.status, res.text).toBe(200);
      expect(res.body.reversedBy).toBeDefined();
    } finally {
      await c1.query('rollback').catch(() => {});
      await c2.query('rollback').catch(() => {});
      await Promise.all([c1.end(), c2.end(), probe.end()]);
    }
    // The moved application is unpaid and due again; the ledger balances.
    const moved = await getOk(t, `/attendances?offer=${low}`);
    expect(moved).toHaveLength(1);
    expect(moved[0]).toMatchObject({ paid: false, payable: true, receipts: [] });
    expect((await ledgerOfAccount(t, acc.uuid)).balance).toBe(700);
  });

  it('concurrent reversals and transfers of one receipt\'s applications never answer 5xx', async () => {
    const acc = await createAccount(t);
    const edition = (await createEdition(t, { procedure: 'firstcome' })).uuid;
    const offers = await Promise.all([0, 1, 2, 3].map(() => createOffer(t, { edition, fee: 400, maxParticipants: null })));
    for (let round = 0; round < 4; round++) {
      const apps = [await applyFor(t, offers[0].uuid, acc.uuid), await applyFor(t, offers[1].uuid, acc.uuid)];
      const receipt = await pay(t, apps.map((x) => ({ attendance: x.uuid })));
      const results = await Promise.all([
        t.post(`/attendances/${apps[0].uuid}/transfer`, { offer: offers[2 + (round % 2)].uuid, status: 'confirmed' }),
        t.post(`/receipts/${receipt.uuid}/reverse`, {}),
        t.post(`/attendances/${apps[1].uuid}/transfer`, { offer: offers[3 - (round % 2)].uuid, status: 'confirmed' }),
      ]);
      for (const r of results) expect(r.status, r.text).toBeLessThan(500);
      expect(results[1].status, results[1].text).toBe(200);
    }
  });
});

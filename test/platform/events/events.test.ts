import { describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { pgClient as client, useHarness } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import {
  decodeCursor, encodeCursor, EVENT_TYPES, readEvents, recordEvent, recordEvents, toEnvelope, type StoredEvent,
} from '../../../src/platform/events/events.js';
import { Problem } from '../../../src/platform/http/problem.js';
import { newUuid } from '../../../src/platform/http/ids.js';

// Issue 14: the event log itself, against the real database: written in the caller's transaction, read in
// (tx, id) order after a cursor, and only once every older transaction has ended (the visibility rule).
// An event shows once every older writing transaction of the server has ended (`settled` waits up to 90 s).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const { h, t } = useHarness();

const db = () => executorOf(h.orm);
const ctx = () => ({ tenant: t.tenant });
const deleted = (attendance = newUuid()) =>
  ({ attendance, offer: newUuid(), edition: newUuid(), participant: newUuid(), status: 'waiting' as const });

async function insertRaw(c: pg.Client, schema: string, data: object): Promise<void> {
  await c.query(`insert into ${schema}.event (uuid, type, data) values ($1, 'attendance.deleted', $2)`, [newUuid(), JSON.stringify(data)]);
}

/** Reads the whole feed from `after` in pages of `limit`. */
async function readAll(after: string | null, limit = 100, schema = t.tenant.schema): Promise<{ events: StoredEvent[]; next: string | null }> {
  const events: StoredEvent[] = [];
  let cursor = after;
  for (;;) {
    const page = await readEvents(db(), schema, { after: cursor, limit });
    events.push(...page.events);
    cursor = page.next;
    if (page.events.length < limit) return { events, next: cursor };
  }
}

/**
 * The whole feed once every event written so far is visible. Transaction ids are shared by the whole database
 * cluster, so another session's open transaction (a parallel test file) may hold the feed back for a moment.
 */
async function settled(count: (events: StoredEvent[]) => boolean, schema = t.tenant.schema): Promise<StoredEvent[]> {
  const until = Date.now() + 90_000;
  for (;;) {
    const { events } = await readAll(null, 100, schema);
    if (count(events) || Date.now() > until) return events;
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ofAttendance = (events: StoredEvent[], ids: string[]) => events.filter((e) => ids.includes(e.data.attendance as string));

describe('recording events', () => {
  it('writes an event in the caller\'s transaction: none for a rolled-back change, one for a committed one', async () => {
    const kept = newUuid();
    const lost = newUuid();
    await expect(db().transaction().execute(async (tx) => {
      await recordEvent(ctx(), tx, 'attendance.deleted', deleted(lost));
      throw new Error('change failed');
    })).rejects.toThrow('change failed');
    const id = await db().transaction().execute((tx) => recordEvent(ctx(), tx, 'attendance.deleted', deleted(kept)));

    const events = await settled((es) => ofAttendance(es, [kept]).length > 0);
    expect(ofAttendance(events, [lost])).toEqual([]);
    const [e] = ofAttendance(events, [kept]);
    expect(e).toMatchObject({ uuid: id, type: 'attendance.deleted', data: { attendance: kept, status: 'waiting' } });
    expect(e!.occurredAt).toBeInstanceOf(Date);
    expect(e!.id).toMatch(/^\d+$/);
  });

  it('records many events in one statement, in the order given, and leaves out null references', async () => {
    const ids = Array.from({ length: 500 }, () => newUuid());
    const uuids = await recordEvents(ctx(), db(), ids.map((attendance) => ({
      type: 'attendance.status_changed' as const,
      data: { ...deleted(attendance), account: null as unknown as undefined, from: 'confirmed' as const, to: 'confirmed' as const, heldBack: false, cause: 'commit' as const },
    })));
    expect(uuids).toHaveLength(500);
    expect(new Set(uuids).size).toBe(500);
    const got = ofAttendance(await settled((es) => ofAttendance(es, ids).length === 500), ids);
    expect(got.map((e) => e.data.attendance)).toEqual(ids);
    expect(got.map((e) => e.uuid)).toEqual(uuids);
    expect(got[0]!.data).not.toHaveProperty('account');
    expect(await recordEvents(ctx(), db(), [])).toEqual([]);
  });

  it('keeps each municipality\'s events in its own schema', async () => {
    const other = await h.tenant();
    const mine = newUuid();
    await recordEvent({ tenant: other.tenant }, db(), 'attendance.deleted', deleted(mine));
    expect(ofAttendance(await settled((es) => ofAttendance(es, [mine]).length > 0, other.tenant.schema), [mine])).toHaveLength(1);
    expect(ofAttendance((await readAll(null)).events, [mine])).toEqual([]);
  });

  it('shapes the envelope Standard Webhooks style, with the API\'s Berlin timestamp', () => {
    const env = toEnvelope({ uuid: 'e', type: 'offer.published', occurredAt: new Date('2027-07-01T08:00:00.600Z'), data: { offer: 'o' } });
    expect(env).toEqual({ id: 'e', type: 'offer.published', timestamp: '2027-07-01T10:00:00+02:00', data: { offer: 'o' } });
    expect(EVENT_TYPES).toHaveLength(13);
  });
});

describe('reading the feed', () => {
  it('pages through the events in order after a cursor, and filters by type', async () => {
    const fresh = await h.tenant();
    const c = { tenant: fresh.tenant };
    const ids = Array.from({ length: 7 }, () => newUuid());
    for (const [i, attendance] of ids.entries()) {
      if (i === 3) await recordEvent(c, db(), 'offer.published', { offer: newUuid(), edition: newUuid(), status: ['published'] });
      await recordEvent(c, db(), 'attendance.deleted', deleted(attendance));
    }
    expect(await settled((es) => es.length === 8, fresh.tenant.schema)).toHaveLength(8);
    const p1 = await readEvents(db(), fresh.tenant.schema, { after: null, limit: 3 });
    expect(p1.events.map((e) => e.data.attendance)).toEqual(ids.slice(0, 3));
    const p2 = await readEvents(db(), fresh.tenant.schema, { after: p1.next, limit: 3 });
    expect(p2.events.map((e) => e.type)).toEqual(['offer.published', 'attendance.deleted', 'attendance.deleted']);
    const rest = await readEvents(db(), fresh.tenant.schema, { after: p2.next, limit: 3 });
    expect(rest.events.map((e) => e.data.attendance)).toEqual(ids.slice(5));
    // Nothing new: the cursor stays where it was, so a poller keeps it.
    const none = await readEvents(db(), fresh.tenant.schema, { after: rest.next, limit: 3 });
    expect(none).toEqual({ events: [], next: rest.next });
    expect(await readEvents(db(), fresh.tenant.schema, { after: null, limit: 3, types: ['offer.published'] }))
      .toMatchObject({ events: [{ type: 'offer.published' }] });
    expect((await readEvents(db(), fresh.tenant.schema, { after: null, limit: 100, types: ['attendance.deleted', 'receipt.created'] })).events)
      .toHaveLength(7);
  });

  it('round-trips cursors and refuses anything else with a 400 problem', async () => {
    expect(decodeCursor(encodeCursor({ tx: '18446744073709551615', id: '9223372036854775807' })))
      .toEqual({ tx: '18446744073709551615', id: '9223372036854775807' });
    for (const bad of ['', 'abc0', 'Ol', encodeCursor({ tx: '1', id: '0' }), encodeCursor({ tx: '18446744073709551616', id: '1' }),
      Buffer.from('1.2').toString('base64'), 'x'.repeat(200)]) {
      expect(decodeCursor(bad), bad).toBeNull();
    }
    const err = await readEvents(db(), t.tenant.schema, { after: 'not-a-cursor', limit: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Problem);
    expect((err as Problem).status).toBe(400);
  });
});

describe('the visibility rule', () => {
  it('delivers the event of a transaction that took its id first but committed after a later one', async () => {
    const fresh = await h.tenant();
    const schema = fresh.tenant.schema;
    await recordEvent({ tenant: fresh.tenant }, db(), 'attendance.deleted', deleted());
    expect(await settled((es) => es.length === 1, schema)).toHaveLength(1);
    const start = await readEvents(db(), schema, { after: null, limit: 100 });

    const a = await client();
    const b = await client();
    try {
      // A starts first and takes the lower id; B starts later, takes a higher id and commits first.
      const early = newUuid();
      const late = newUuid();
      await a.query('begin');
      await insertRaw(a, schema, deleted(early));
      await b.query('begin');
      await insertRaw(b, schema, deleted(late));
      await b.query('commit');
      // A reader paging by id alone would now read B's event and move past A's id for good.
      const naive = await sql<{ id: string }>`select id::text as id from ${qualified(schema, 'event')} where data->>'attendance' = ${late}`.execute(db());
      expect(naive.rows).toHaveLength(1);
      // The feed holds B's event back while A runs; the cursor stays.
      const during = await readEvents(db(), schema, { after: start.next, limit: 100 });
      expect(during).toEqual({ events: [], next: start.next });
      await a.query('commit');
      await settled((es) => es.length === 3, schema);
      const after = await readEvents(db(), schema, { after: during.next, limit: 100 });
      expect(after.events.map((e) => e.data.attendance)).toEqual([early, late]);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('orders by transaction, so an event written late by an early transaction comes first and none is skipped', async () => {
    const fresh = await h.tenant();
    const schema = fresh.tenant.schema;
    const a = await client();
    const b = await client();
    try {
      const early = newUuid();
      const late = newUuid();
      await a.query('begin');
      await a.query('select pg_current_xact_id()'); // A's transaction id is taken now...
      await b.query('begin');
      await insertRaw(b, schema, deleted(late)); // ...B's later one with the lower event id...
      await b.query('commit');
      await insertRaw(a, schema, deleted(early)); // ...and A's event gets the higher id.
      expect((await readEvents(db(), schema, { after: null, limit: 100 })).events).toEqual([]);
      await a.query('commit');
      await settled((es) => es.length === 2, schema);
      const all = await readEvents(db(), schema, { after: null, limit: 100 });
      expect(all.events.map((e) => e.data.attendance)).toEqual([early, late]);
      expect(Number(all.events[0]!.id)).toBeGreaterThan(Number(all.events[1]!.id));
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('gives a polling reader every event exactly once, in order, under concurrent writers', async () => {
    const fresh = await h.tenant();
    const schema = fresh.tenant.schema;
    const written: string[] = [];
    const writers = 6;
    const perWriter = 25;
    const write = async (w: number) => {
      for (let i = 0; i < perWriter; i++) {
        const attendance = newUuid();
        await db().transaction().execute(async (tx) => {
          await recordEvent({ tenant: fresh.tenant }, tx, 'attendance.deleted', deleted(attendance));
          // Hold some transactions open for a moment, so commits interleave out of id order.
          if ((w + i) % 3 === 0) await sql`select pg_sleep(${Math.random() * 0.03})`.execute(tx);
        });
        written.push(attendance);
      }
    };
    const seen: StoredEvent[] = [];
    let cursor: string | null = null;
    let writing = true;
    const reader = (async () => {
      while (writing || seen.length < writers * perWriter) {
        const page = await readEvents(db(), schema, { after: cursor, limit: 7 });
        seen.push(...page.events);
        cursor = page.next;
        if (page.events.length === 0) await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.all(Array.from({ length: writers }, (_, w) => write(w)));
    writing = false;
    await reader;

    const ids = seen.map((e) => e.data.attendance as string);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(written));
    // The reader's order is the table's (tx, id) order.
    const table = await sql<{ a: string }>`select data->>'attendance' as a from ${qualified(schema, 'event')} order by tx, id`.execute(db());
    expect(ids).toEqual(table.rows.map((r) => r.a));
  });
});

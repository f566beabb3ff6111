import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { executorOf } from '../../../src/platform/db/orm.js';
import { loadOrder, schemaTables, type Table } from '../../../src/platform/db/schema-copy.js';
import { sql, type Executor } from '../../../src/platform/db/sql.js';
import { parseLine, type ArchiveLine } from '../../../src/platform/tenancy/archive.js';
import { schemaLines } from '../../../src/platform/tenancy/archive-export.js';
import { loadRows } from '../../../src/platform/tenancy/archive-import.js';
import { useHarness } from '../../harness/harness.js';

// Issue 24 (3): `tenant export` / `tenant import` copy every table of a schema without knowing it: tables another
// engineer adds later (uploaded files as bytea, confirmation tokens) go along as they are. Here on tables made
// for the test with what a later migration might bring: a bytea column, arrays, jsonb, numeric, interval, an
// identity and a generated column, a transaction id, a table referring to itself (1500 rows, each child read
// before its parent), two tables referring to each other, and an insert trigger that must stay quiet while loading.
const { h } = useHarness({ tenant: false });
const db = () => executorOf(h.orm);
const suffix = `${process.pid}_${Date.now().toString(36)}`;
const SRC = `gen_src_${suffix}`;
const DST = `gen_dst_${suffix}`;

afterAll(async () => {
  for (const s of [SRC, DST]) await sql`drop schema if exists ${sql.id(s)} cascade`.execute(db());
});

/** `treeKey`: the self-reference of `tree` at once (the source gets it after its rows, so they can lie children first). */
async function createSchema(schema: string, treeKey: boolean): Promise<void> {
  const s = sql.id(schema);
  await db().transaction().execute(async (tx) => {
    await sql`create schema ${s}`.execute(tx);
    await sql`set local search_path to ${s}`.execute(tx);
    await sql`create table parent (id uuid primary key, name text not null)`.execute(tx);
    await sql`create table child (id uuid primary key, parent_id uuid not null references parent (id), tags text[] not null default '{}',
      meta jsonb, amount numeric(12, 2), took interval, at timestamptz)`.execute(tx);
    await sql`create table files (id uuid primary key, child_id uuid not null references child (id) on delete cascade, data bytea not null)`.execute(tx);
    await sql`create table tree (id int primary key, up int)`.execute(tx);
    if (treeKey) await sql`alter table tree add foreign key (up) references tree (id)`.execute(tx);
    await sql`create table ring_a (id int primary key, b_id int)`.execute(tx);
    await sql`create table ring_b (id int primary key, a_id int not null references ring_a (id))`.execute(tx);
    await sql`alter table ring_a add foreign key (b_id) references ring_b (id)`.execute(tx);
    await sql`create table counted (id bigint generated always as identity primary key, label text,
      doubled bigint generated always as (id * 2) stored, tx xid8 not null default pg_current_xact_id())`.execute(tx);
    await sql`create function no_inserts() returns trigger language plpgsql as $$ begin raise exception 'no inserts into counted'; end $$`.execute(tx);
  });
}

const q = (schema: string, table: string) => sql.table(`${schema}.${table}`);

async function contents(schema: string, tables: Table[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const cols = t.columns.filter((c) => c.type !== 'xid8').map((c) => sql.id(c.name));
    out[t.name] = (await sql<{ j: string }>`select json_build_array(${sql.join(cols)})::text as j from ${q(schema, t.name)} order by 1`.execute(db())).rows.map((r) => r.j);
  }
  return out;
}

/** The export's lines of one schema, read back as the import reads an archive. */
async function* linesOf(tx: Executor, schema: string): AsyncGenerator<ArchiveLine> {
  const summary = { tables: 0, rows: 0 };
  let n = 0;
  for await (const text of schemaLines(tx, schema, summary)) for (const line of text.split('\n')) if (line) yield parseLine(line, ++n);
  yield { kind: 'done', tables: summary.tables, rows: summary.rows };
}

describe('copying a schema the code does not know', () => {
  it('orders tables parents first and loads tables that refer to each other together', () => {
    const t = (name: string, references: string[] = []): Table => ({ name, columns: [], references });
    const order = loadOrder([t('child', ['parent']), t('parent'), t('ring_a', ['ring_b']), t('ring_b', ['ring_a']), t('tree', ['tree']), t('files', ['child'])]);
    const names = order.map((g) => g.tables.join('+'));
    expect(names.indexOf('parent')).toBeLessThan(names.indexOf('child'));
    expect(names.indexOf('child')).toBeLessThan(names.indexOf('files'));
    expect(order.find((g) => g.tables.includes('ring_a'))).toEqual({ tables: ['ring_a', 'ring_b'], cyclic: true });
    expect(order.find((g) => g.tables.includes('tree'))).toEqual({ tables: ['tree'], cyclic: true });
    expect(order.find((g) => g.tables.includes('parent'))).toEqual({ tables: ['parent'], cyclic: false });
  });

  it('copies every row of every table, bytes, arrays, json, numbers and times exactly; numbering goes on; triggers stay quiet', async () => {
    await createSchema(SRC, false);
    await createSchema(DST, true);
    const s = (t: string) => q(SRC, t);
    const parent = '0d8a3f5e-1b2c-4d3e-8f4a-5b6c7d8e9f01';
    const kids = ['1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d', '2b3c4d5e-6f7a-4b2c-9d3e-4f5a6b7c8d9e'];
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n\0\xff'), randomBytes(2 * 1024 * 1024)]);
    await sql`insert into ${s('parent')} values (${parent}, 'Eltern "Müller"\\ mit Tab\tund Zeilen\numbruch')`.execute(db());
    await sql`insert into ${s('child')} values (${kids[0]}, ${parent}, ${['a,b', 'c "d"', '']}, ${JSON.stringify({ ä: [1, 2.5, null], s: 'x\ny' })}::jsonb, 1234.50, '1 day 02:03:04', '2027-07-05T10:00:00.123456+02:00'),
      (${kids[1]}, ${parent}, '{}', null, null, null, null)`.execute(db());
    await sql`insert into ${s('files')} values ('3c4d5e6f-7a8b-4c3d-8e4f-5a6b7c8d9e0f', ${kids[0]}, ${pdf})`.execute(db());
    // A chain of 1500, each row before its parent: a scan (and the archive) has children first, across load batches.
    await sql`insert into ${s('tree')} select g, case when g < 1500 then g + 1 end from generate_series(1, 1500) g`.execute(db());
    await sql`alter table ${s('tree')} add foreign key (up) references ${s('tree')} (id)`.execute(db());
    await sql`insert into ${s('ring_a')} values (1, null)`.execute(db());
    await sql`insert into ${s('ring_b')} values (1, 1)`.execute(db());
    await sql`update ${s('ring_a')} set b_id = 1 where id = 1`.execute(db());
    await sql`insert into ${s('counted')} (label) select 'n' || g from generate_series(1, 2500) g`.execute(db());
    await sql`delete from ${s('counted')} where id > 2400`.execute(db());
    await sql`create trigger counted_no_inserts before insert on ${q(DST, 'counted')} for each row execute function ${sql.id(DST)}.no_inserts()`.execute(db());

    const tables = await schemaTables(db(), SRC);
    expect(tables.map((t) => t.name).sort()).toEqual(['child', 'counted', 'files', 'parent', 'ring_a', 'ring_b', 'tree']);
    const counts = await db().transaction().setIsolationLevel('repeatable read').execute((src) =>
      db().transaction().execute((dst) => loadRows(dst, DST, linesOf(src, SRC))));
    expect(counts).toEqual({ tables: 7, rows: 1 + 2 + 1 + 1500 + 1 + 1 + 2400 });

    expect(await contents(DST, tables)).toEqual(await contents(SRC, tables));
    const file = await sql<{ data: Buffer }>`select data from ${q(DST, 'files')}`.execute(db());
    expect(Buffer.compare(file.rows[0]!.data, pdf)).toBe(0);
    // The identity's sequence goes on where the source's stood (2500, not 2400); the trigger works again.
    const next = await sql<{ n: string }>`select nextval(pg_get_serial_sequence(${`${DST}.counted`}, 'id'))::text as n`.execute(db());
    expect(next.rows[0]!.n).toBe('2501');
    await expect(sql`insert into ${q(DST, 'counted')} (label) values ('after')`.execute(db())).rejects.toThrow(/no inserts into counted/);
    // Transaction ids are the importing transaction's own, one for every row.
    const txs = await sql<{ n: number }>`select count(distinct tx)::int as n from ${q(DST, 'counted')}`.execute(db());
    expect(txs.rows[0]!.n).toBe(1);
  }, 120_000);
});

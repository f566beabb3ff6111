import { assertSchemaName, qualified, sql, type Executor, type RawBuilder } from './sql.js';

// Issue 24 (`tenant export` / `tenant import`): every row of every table of one schema, copied out and back in
// without knowing the tables in advance. The catalog says which tables exist, their columns and their foreign
// keys; tables are loaded parents first, and tables that reference each other (a cycle, or a table referring to
// itself: offers' variants, receipts' reversals) are loaded by ONE statement, since PostgreSQL checks a foreign
// key at the end of the statement. Rows travel as `row_to_json` text and come back through
// `json_populate_recordset` with the table's own row type, so every column type (arrays, jsonb, bytea, timestamps)
// converts the way PostgreSQL reads its own JSON. A table added by a later migration is included as it is.

export type Column = {
  name: string;
  /** `format_type` of the column, e.g. `uuid[]`, `timestamp with time zone`. */
  type: string;
  /** False for generated columns (`generated always as (…) stored`), which PostgreSQL computes itself. */
  insertable: boolean;
  /** `generated always as identity`: an insert of its value needs `overriding system value`. */
  identityAlways: boolean;
};

export type Table = { name: string; columns: Column[]; references: string[] };

/** Bookkeeping of the migrator: an import creates it by migrating, never by copying. */
const NOT_COPIED = new Set(['mikro_orm_migrations']);

/** The tables of `schema` (partitions aside) with their columns and the tables of the schema they reference. */
export async function schemaTables(db: Executor, schema: string): Promise<Table[]> {
  assertSchemaName(schema);
  const rows = await sql<{ table: string; columns: { name: string; type: string; generated: string; identity: string }[]; refs: string[] | null }>`
    select c.relname as "table",
      (select json_agg(json_build_object('name', a.attname, 'type', pg_catalog.format_type(a.atttypid, a.atttypmod),
          'generated', a.attgenerated, 'identity', a.attidentity) order by a.attnum)
        from pg_catalog.pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns,
      (select json_agg(distinct r.relname) from pg_catalog.pg_constraint k
        join pg_catalog.pg_class r on r.oid = k.confrelid
        where k.conrelid = c.oid and k.contype = 'f' and r.relnamespace = n.oid) as refs
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname`.execute(db);
  return rows.rows
    .filter((r) => !NOT_COPIED.has(r.table))
    .map((r) => ({
      name: r.table,
      columns: r.columns.map((c) => ({ name: c.name, type: c.type, insertable: c.generated === '', identityAlways: c.identity === 'a' })),
      references: (r.refs ?? []).filter((t) => !NOT_COPIED.has(t)),
    }));
}

/**
 * The order to load tables in: groups of tables, each group's references lying in earlier groups or in the group
 * itself. A group is `cyclic` when its tables reference each other or one references itself; such a group is
 * loaded by one statement. (Tarjan's strongly connected components: a component comes after every component it
 * reaches, so parents come first.) Ties keep the tables' names in order, so the order is the same on every run.
 */
export function loadOrder(tables: Table[]): { tables: string[]; cyclic: boolean }[] {
  const refs = new Map(tables.map((t) => [t.name, t.references.filter((r) => r !== t.name && tables.some((x) => x.name === r))]));
  const selfRef = new Set(tables.filter((t) => t.references.includes(t.name)).map((t) => t.name));
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], onStack = new Set<string>();
  const groups: { tables: string[]; cyclic: boolean }[] = [];
  const visit = (v: string) => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of [...refs.get(v)!].sort()) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); group.push(w); } while (w !== v);
      group.sort();
      groups.push({ tables: group, cyclic: group.length > 1 || selfRef.has(v) });
    }
  };
  for (const t of [...refs.keys()].sort()) if (!index.has(t)) visit(t);
  return groups;
}

/** The schema's sequences (identity and serial columns) with their position, so numbering goes on after an import. */
export async function schemaSequences(db: Executor, schema: string): Promise<{ name: string; lastValue: string | null }[]> {
  const res = await sql<{ name: string; last_value: string | null }>`
    select sequencename as name, last_value::text as last_value from pg_catalog.pg_sequences
    where schemaname = ${assertSchemaName(schema)} order by sequencename`.execute(db);
  return res.rows.map((r) => ({ name: r.name, lastValue: r.last_value }));
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

export async function restoreSequences(db: Executor, schema: string, sequences: { name: string; lastValue: string | null }[]): Promise<void> {
  for (const s of sequences) {
    if (s.lastValue === null) continue;
    await sql`select pg_catalog.setval(${`${quoteIdent(schema)}.${quoteIdent(s.name)}`}::regclass, ${s.lastValue}::bigint, true)`.execute(db);
  }
}

/**
 * Every row of `table` as JSON text, `batch` rows at a time, read through a cursor of the caller's transaction
 * (run it in one REPEATABLE READ transaction for one consistent snapshot of all tables).
 */
export async function* tableRows(tx: Executor, schema: string, table: string, batch: number): AsyncGenerator<string[]> {
  const cursor = sql.id(`hp_export_${table}`.slice(0, 63));
  await sql`declare ${cursor} no scroll cursor for select pg_catalog.row_to_json(t)::text as j from ${qualified(schema, table)} t`.execute(tx);
  try {
    for (;;) {
      const res = await sql<{ j: string }>`fetch forward ${sql.raw(String(batch))} from ${cursor}`.execute(tx);
      if (res.rows.length === 0) return;
      yield res.rows.map((r) => r.j);
      if (res.rows.length < batch) return;
    }
  } finally {
    await sql`close ${cursor}`.execute(tx);
  }
}

/** Rows per fetch: a table with a bytea column (uploaded files, up to 10 MiB each) a few at a time. */
export function fetchSize(t: Table): number {
  return t.columns.some((c) => c.type === 'bytea') ? 8 : 1000;
}

/**
 * The `select` list that turns one JSON row (`r`, the table's row type) into the insertable columns the archive
 * has. A transaction id (`xid8`) belongs to the database it was taken in: it becomes the importing transaction's
 * own, so rows ordered by it (the event feed's `(tx, id)`) keep their order among themselves and come after none
 * of this database's later rows.
 */
function selectList(target: Table, columns: Set<string>): { names: RawBuilder<unknown>; values: RawBuilder<unknown>; overriding: boolean } {
  const cols = target.columns.filter((c) => c.insertable && columns.has(c.name));
  return {
    names: sql.join(cols.map((c) => sql.id(c.name))),
    values: sql.join(cols.map((c) => (c.type === 'xid8' ? sql`pg_catalog.pg_current_xact_id()` : sql`r.${sql.id(c.name)}`))),
    overriding: cols.some((c) => c.identityAlways),
  };
}

/** Inserts rows (JSON texts) of one table; run inside the import's transaction, parents loaded first. */
export async function insertRows(tx: Executor, schema: string, target: Table, columns: Set<string>, rows: string[]): Promise<void> {
  if (rows.length === 0) return;
  const { names, values, overriding } = selectList(target, columns);
  await sql`insert into ${qualified(schema, target.name)} (${names}) ${sql.raw(overriding ? 'overriding system value ' : '')}
    select ${values} from pg_catalog.json_populate_recordset(null::${qualified(schema, target.name)}, ${`[${rows.join(',')}]`}::json) r`.execute(tx);
}

/**
 * Tables that reference each other: their rows wait in temporary tables (dropped at commit), then one statement
 * inserts them all, so each foreign key is checked once every row is in.
 */
export class CyclicGroupLoader {
  private readonly staged = new Map<string, { stage: string; target: Table; columns: Set<string> }>();
  private static made = 0;

  constructor(private readonly tx: Executor, private readonly schema: string) {}

  async add(target: Table, columns: Set<string>, rows: string[]): Promise<void> {
    let s = this.staged.get(target.name);
    if (!s) {
      s = { stage: `hp_import_${++CyclicGroupLoader.made}`, target, columns };
      await sql`create temporary table ${sql.id(s.stage)} (j json) on commit drop`.execute(this.tx);
      this.staged.set(target.name, s);
    }
    if (rows.length) await sql`insert into ${sql.id(s.stage)} (j) select value from pg_catalog.json_array_elements(${`[${rows.join(',')}]`}::json)`.execute(this.tx);
  }

  async flush(): Promise<void> {
    const parts = [...this.staged.values()].map((s, i) => {
      const { names, values, overriding } = selectList(s.target, s.columns);
      return sql`${sql.id(`w${i}`)} as (insert into ${qualified(this.schema, s.target.name)} (${names}) ${sql.raw(overriding ? 'overriding system value ' : '')}
        select ${values} from ${sql.id(s.stage)} x, pg_catalog.json_populate_record(null::${qualified(this.schema, s.target.name)}, x.j) r)`;
    });
    if (parts.length) await sql`with ${sql.join(parts)} select 1`.execute(this.tx);
    for (const s of this.staged.values()) await sql`drop table ${sql.id(s.stage)}`.execute(this.tx);
    this.staged.clear();
  }
}

/** A bulk load is a restore, not a change: the schema's own triggers (events, immutability) stay quiet meanwhile. */
export async function setUserTriggers(tx: Executor, schema: string, tables: string[], enabled: boolean): Promise<void> {
  for (const t of tables) await sql`alter table ${qualified(schema, t)} ${sql.raw(enabled ? 'enable' : 'disable')} trigger user`.execute(tx);
}

import type pg from 'pg';

// pg_stat_statements for one scratch database, where the server preloads it (shared_preload_libraries): the
// statements run since a snapshot, by difference (never reset: the server is shared, other runs read it too).

export type StatementStats = {
  calls: number;
  /** total_exec_time (+ total_plan_time where tracked), ms. */
  totalMs: number;
  /** The statements with the most time since the snapshot. */
  top: { calls: number; ms: number; query: string }[];
};

type Row = { id: string; calls: string; ms: number; query: string };

async function snapshot(c: pg.Pool): Promise<Map<string, Row>> {
  const r = await c.query<Row>(`
    select userid::text || ':' || queryid::text as id, calls::text, (total_exec_time + total_plan_time)::float8 as ms,
      left(regexp_replace(query, '\\s+', ' ', 'g'), 140) as query
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())`);
  return new Map(r.rows.map((x) => [x.id, x]));
}

/**
 * A snapshot of the database's statements, or why there is none: `since()` gives what ran after it. Creates the
 * extension in the (scratch) database where the server has loaded the library.
 */
export async function pgStatements(c: pg.Pool): Promise<{ since: () => Promise<StatementStats> } | { missing: string }> {
  const libs = (await c.query<{ libs: string }>(`select current_setting('shared_preload_libraries') as libs`)).rows[0]!.libs;
  if (!/\bpg_stat_statements\b/.test(libs)) {
    return { missing: `pg_stat_statements is not preloaded by this PostgreSQL (shared_preload_libraries = '${libs}'), so the PostgreSQL figures are the backends' CPU from /proc only` };
  }
  await c.query('create extension if not exists pg_stat_statements');
  const before = await snapshot(c);
  return {
    since: async () => {
      const after = await snapshot(c);
      const rows = [...after.values()].map((x) => {
        const b = before.get(x.id);
        return { calls: Number(x.calls) - Number(b?.calls ?? 0), ms: x.ms - (b?.ms ?? 0), query: x.query };
      }).filter((x) => x.calls > 0);
      return {
        calls: rows.reduce((s, x) => s + x.calls, 0),
        totalMs: rows.reduce((s, x) => s + x.ms, 0),
        top: rows.sort((a, b) => b.ms - a.ms).slice(0, 15),
      };
    },
  };
}

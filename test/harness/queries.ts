import pg from 'pg';

/** A statement as `pg` receives it: its text, or a config object (with a name when it is a named statement). */
export type SeenQuery = string | { text?: string; name?: string };

/**
 * Counts every statement this process sends through `pg` (the driver under MikroORM and kysely) from now
 * until `restore()`, by wrapping `pg.Client.prototype.query`; the harness's server runs in this process, so
 * its statements are counted too. `onQuery` sees each statement as it is sent.
 */
export function spyOnQueries(onQuery?: (query: SeenQuery) => void): { count: number; restore: () => void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  const spy = { count: 0, restore: () => void (proto.query = original) };
  proto.query = function (this: pg.Client, ...args: unknown[]) {
    spy.count++;
    onQuery?.(args[0] as SeenQuery);
    return original.apply(this, args);
  };
  return spy;
}

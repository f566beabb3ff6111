import { EVENT_RETENTION_DAYS } from '../events/events.js';
import { inSchema, sql, type Executor } from '../db/sql.js';

/** Delivery attempts are kept as long as the events they delivered (EVENT_RETENTION_DAYS); the daily retention job. */
export async function purgeDeliveries(db: Executor, schema: string, days = EVENT_RETENTION_DAYS): Promise<number> {
  const res = await inSchema(db, schema).deleteFrom('webhook_deliveries')
    .where('created_at', '<', sql<string>`now() - make_interval(days => ${days})`).where('state', '<>', 'pending')
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

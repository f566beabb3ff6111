import type { Orm } from '../platform/db/orm.js';
import { executorOf } from '../platform/db/orm.js';
import type { Logger } from '../platform/logging/logger.js';
import { qualified, sql } from '../platform/db/sql.js';
import { schemaNameFor } from '../platform/tenancy/tenant.js';
import { newUuid } from '../platform/http/ids.js';

// `cli demo` and the first `npm start`: a realistic programme for a municipality. Categories for now;
// editions, organisers, offers and families join as their resources land.
const CATEGORIES = ['Sport & Bewegung', 'Kreativ & Basteln', 'Natur & Umwelt', 'Technik & Forschen', 'Musik & Theater', 'Ausflüge', 'Kochen & Backen'];

export async function seedDemo(orm: Orm, slug: string): Promise<{ categories: number }> {
  const db = executorOf(orm);
  const schema = schemaNameFor(slug);
  let categories = 0;
  for (const name of CATEGORIES) {
    const alias = name.toLowerCase().replace(/ä/g, 'ae').replace(/ö/g, 'oe').replace(/ü/g, 'ue').replace(/&/g, 'und').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
    const res = await sql`insert into ${qualified(schema, 'categories')} (uuid, name, alias) values (${newUuid()}, ${name}, ${alias})
      on conflict (alias) do nothing`.execute(db);
    categories += Number(res.numAffectedRows ?? 0);
  }
  return { categories };
}

export async function seedDemoIfEmpty(orm: Orm, slug: string, log: Logger): Promise<void> {
  const db = executorOf(orm);
  const res = await sql<{ n: string }>`select count(*) as n from ${qualified(schemaNameFor(slug), 'categories')}`.execute(db);
  if (Number(res.rows[0].n) > 0) return;
  const counts = await seedDemo(orm, slug);
  log.info({ tenant: slug, ...counts }, 'seeded the demo municipality');
}

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { seedDemo } from '../src/demo/seed.js';
import { createOrm, migrateControl } from '../src/platform/db/orm.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import type { Tenant } from '../src/platform/tenancy/tenant.js';
import { entities } from '../src/entities.js';

// Bench data: a scratch database `bench_<random>` on the test PostgreSQL with one tenant holding the demo
// programme (60 offers made through the services, src/demo/seed.ts) copied nine more times by SQL, so the
// tenant has 600 offers (460 of them visible to anonymous callers), each copy with its own dates, hosts and
// categories. Dropped again by `drop()`.
export const BENCH_HOST = 'bench.localhost';
export const COPIES = 9;

export type BenchDatabase = { url: string; name: string; tenant: Tenant; offers: number; publicOffers: number; drop: () => Promise<void> };

export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new URL(serverUrl);
  admin.pathname = '/postgres';
  const adminQuery = async (q: string) => {
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    try {
      await c.query(q);
    } finally {
      await c.end();
    }
  };
  await adminQuery(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const drop = () => adminQuery(`drop database if exists ${name} with (force)`);
  try {
    const orm = await createOrm(url.toString(), { entities, poolMax: 4 });
    let tenant: Tenant;
    try {
      await migrateControl(orm);
      tenant = await addTenant(orm, { slug: 'bench', name: 'Bench-Gemeinde', hosts: [{ host: BENCH_HOST, basePath: '/api' }] });
      await seedDemo(orm, 'bench');
    } finally {
      await orm.close();
    }
    const counts = await multiplyOffers(url.toString(), tenant.schema, COPIES);
    return { url: url.toString(), name, tenant, ...counts, drop };
  } catch (err) {
    await drop();
    throw err;
  }
}

/** Copies every offer `copies` times (name and alias suffixed, dates shifted 0-4 days), then analyses the tables. */
async function multiplyOffers(url: string, schema: string, copies: number): Promise<{ offers: number; publicOffers: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const t = (table: string) => `"${schema}"."${table}"`;
  try {
    await c.query('begin');
    await c.query(`create temp table bench_copies on commit drop as
      select o.uuid as src, n, gen_random_uuid() as dst from ${t('offers')} o cross join generate_series(2, ${copies + 1}) n`);
    const columns = `edition_uuid, places, publish, teaser, description, fee, min_age, max_age, min_participants, max_participants,
      requires_application, online_application, application_deadline, apply_text, meeting_point, meeting_address, meeting_lat,
      meeting_lng, bring, wheelchair_accessible, media, comment, contact, application_questions, was_published, created_at, modified_at`;
    await c.query(`insert into ${t('offers')} (uuid, name, alias, ${columns})
      select m.dst, o.name || ' (Gruppe ' || m.n || ')', o.alias || '-gruppe-' || m.n, ${columns.split(',').map((x) => `o.${x.trim()}`).join(', ')}
      from bench_copies m join ${t('offers')} o on o.uuid = m.src`);
    await c.query(`insert into ${t('offer_dates')} (uuid, offer_uuid, "begin", "end", recurrence, position)
      select gen_random_uuid(), m.dst, d."begin" + (m.n % 5) * interval '1 day', d."end" + (m.n % 5) * interval '1 day', d.recurrence, d.position
      from bench_copies m join ${t('offer_dates')} d on d.offer_uuid = m.src`);
    await c.query(`insert into ${t('offer_hosts')} (offer_uuid, organiser_uuid, position)
      select m.dst, h.organiser_uuid, h.position from bench_copies m join ${t('offer_hosts')} h on h.offer_uuid = m.src`);
    await c.query(`insert into ${t('offer_categories')} (offer_uuid, category_uuid, position)
      select m.dst, x.category_uuid, x.position from bench_copies m join ${t('offer_categories')} x on x.offer_uuid = m.src`);
    await c.query('commit');
    for (const table of ['offers', 'offer_dates', 'offer_hosts', 'offer_categories', 'organisers', 'categories', 'editions', 'edition_tasks']) {
      await c.query(`vacuum analyze ${t(table)}`);
    }
    const n = await c.query<{ offers: number; public: number }>(`select count(*)::int as offers,
      (count(*) filter (where 'published' = any(places) and publish = 'public'))::int as public from ${t('offers')}`);
    return { offers: n.rows[0].offers, publicOffers: n.rows[0].public };
  } finally {
    await c.end();
  }
}

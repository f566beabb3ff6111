import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { insertToken } from '../src/platform/auth/tokens.js';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { qualified, sql } from '../src/platform/db/sql.js';
import { newUuid } from '../src/platform/http/ids.js';
import { addTenant } from '../src/platform/tenancy/operations.js';

// `npm run bench:rush` (issue 10.1): the opening rush on one first-come offer (100 places), FAMILIES families
// applying with IN_FLIGHT requests in flight, through HTTP to a real API process (`src/main.ts --role api`),
// against the bare-SQL baseline in the same run (one short transaction per application: lock the offer row,
// count the confirmed, insert). Both on the same scratch database of the machine's PostgreSQL.
// Env: BENCH_PG_URL, BENCH_FAMILIES (2000), BENCH_IN_FLIGHT (64).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const FAMILIES = Number(process.env.BENCH_FAMILIES || 2000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT || 64);
const PLACES = 100;
const HOST = 'rush.test';

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * p) - 1)]!;

async function lanes<T>(items: T[], n: number, work: (item: T, lane: number) => Promise<void>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: n }, async (_, lane) => {
    for (let i = next++; i < items.length; i = next++) {
      const started = performance.now();
      await work(items[i]!, lane);
      latencies.push(performance.now() - started);
    }
  }));
  return latencies;
}

function post(port: number, token: string, body: unknown, agent: http.Agent): Promise<number> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/attendances', agent, headers: {
      host: HOST, authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload),
    } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function main() {
  const dbName = `hp_bench_rush_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  const url = new URL(PG);
  url.pathname = `/${dbName}`;
  const orm = await createOrm(url.toString(), { poolMax: 4 });
  let api: ReturnType<typeof spawn> | undefined;
  try {
    await migrateControl(orm);
    const tenant = await addTenant(orm, { slug: 'rush', name: 'Rush', hosts: [{ host: HOST, basePath: '/api' }] });
    const db = executorOf(orm);
    const t = (name: string) => qualified(tenant.schema, name);
    const edition = newUuid();
    await sql`insert into ${t('editions')} (uuid, name, alias, procedure) values (${edition}::uuid, 'Rush', 'rush', 'firstcome')`.execute(db);
    const offer = (n: string) => sql`insert into ${t('offers')} (uuid, edition_uuid, name, alias, max_participants, fee)
      values (${n}::uuid, ${edition}::uuid, ${`Rush ${n}`}, ${`rush-${n}`}, ${PLACES}, 500)`;
    const appOffer = newUuid();
    const sqlOffer = newUuid();
    await offer(appOffer).execute(db);
    await offer(sqlOffer).execute(db);
    const children = Array.from({ length: FAMILIES }, () => newUuid());
    await sql`insert into ${t('participants')} (uuid, firstname, lastname) select unnest(${children}::uuid[]), 'Kind', 'Rush'`.execute(db);
    // One token per lane: a token's bucket holds 300 requests (D3).
    const tokens: string[] = [];
    for (let i = 0; i < IN_FLIGHT; i++) {
      tokens.push((await insertToken(db, tenant.schema, { name: `rush ${i}`, role: 'admin', access: 'read-write', ownerKind: 'service', organiserIds: [], expiresAt: null })).token);
    }

    // The API in its own process, as deployed.
    const port = 20000 + Math.floor(Math.random() * 20000);
    api = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'api'], {
      env: { ...process.env, DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'warn', REDIS_URL: '', TENANTS_DIR: mkdtempSync(path.join(tmpdir(), 'rush-')) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error('api did not start')), 60_000);
      const probe = setInterval(() => {
        http.get({ host: '127.0.0.1', port, path: '/healthz' }, (res) => {
          res.resume();
          clearInterval(probe);
          clearTimeout(deadline);
          resolve();
        }).on('error', () => {});
      }, 200);
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
    // Warm-up: 20 applications on another offer.
    const warm = newUuid();
    await offer(warm).execute(db);
    await lanes(children.slice(0, 20), 8, async (child, lane) => void (await post(port, tokens[lane]!, { offer: warm, participant: child }, agent)));

    const statuses: number[] = [];
    let started = performance.now();
    const appLatency = await lanes(children, IN_FLIGHT, async (child, lane) => {
      statuses.push(await post(port, tokens[lane]!, { offer: appOffer, participant: child }, agent));
    });
    const appSeconds = (performance.now() - started) / 1000;

    // Baseline: the same decision as bare SQL, one short transaction each.
    const pool = new pg.Pool({ connectionString: url.toString(), max: IN_FLIGHT });
    started = performance.now();
    const sqlLatency = await lanes(children, IN_FLIGHT, async (child) => {
      const c = await pool.connect();
      try {
        await c.query('begin');
        await c.query(`select max_participants from ${tenant.schema}.offers where uuid = $1 for no key update`, [sqlOffer]);
        const n = await c.query(`select count(*)::int as n from ${tenant.schema}.attendances where offer_uuid = $1 and status = 'confirmed'`, [sqlOffer]);
        const status = n.rows[0].n < PLACES ? 'confirmed' : 'waitlisted';
        await c.query(`insert into ${tenant.schema}.attendances (uuid, offer_uuid, participant_uuid, status, sorting, fee)
          values ($1, $2, $3, $4, (select coalesce(max(sorting), 0) + 1 from ${tenant.schema}.attendances where offer_uuid = $2), 500)`, [newUuid(), sqlOffer, child, status]);
        await c.query('commit');
      } finally {
        c.release();
      }
    });
    const sqlSeconds = (performance.now() - started) / 1000;
    await pool.end();

    const check = await sql<{ confirmed: number; n: number; dense: boolean }>`
      select count(*) filter (where status = 'confirmed')::int as confirmed, count(*)::int as n,
        (count(distinct sorting) = count(*) and min(sorting) = 1 and max(sorting) = count(*)) as dense
      from ${t('attendances')} where offer_uuid = ${appOffer}::uuid`.execute(db);
    const ok = statuses.filter((s) => s === 201).length;
    const appRate = FAMILIES / appSeconds;
    const sqlRate = FAMILIES / sqlSeconds;
    console.log(`| rush, ${FAMILIES} families, ${IN_FLIGHT} in flight, ${PLACES} places | per second | p50 | p99 |`);
    console.log('|---|---|---|---|');
    console.log(`| through HTTP (API process) | ${appRate.toFixed(0)} | ${pct(appLatency, 0.5).toFixed(0)} ms | ${pct(appLatency, 0.99).toFixed(0)} ms |`);
    console.log(`| bare SQL baseline | ${sqlRate.toFixed(0)} | ${pct(sqlLatency, 0.5).toFixed(0)} ms | ${pct(sqlLatency, 0.99).toFixed(0)} ms |`);
    console.log(`| ratio (target ≥ 0.5) | ${(appRate / sqlRate).toFixed(2)} | | p99 ratio ${(pct(appLatency, 0.99) / pct(sqlLatency, 0.99)).toFixed(1)} (target < 2) |`);
    console.log(`checks: ${ok}/${FAMILIES} answered 201, ${check.rows[0]!.confirmed} confirmed of ${PLACES} places, sorting 1..n: ${check.rows[0]!.dense}`);
  } finally {
    api?.kill('SIGTERM');
    await orm.close();
    await admin.query(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});

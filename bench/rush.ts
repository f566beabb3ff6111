import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { insertToken } from '../src/platform/auth/tokens.js';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { qualified, sql } from '../src/platform/db/sql.js';
import { newUuid } from '../src/platform/http/ids.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import { scratchDatabase } from './scratch.js';
import { quick, reportResult, type BenchRow } from './result.js';
import { entities } from '../src/entities.js';
import { lanes, timed, type Run } from './load.js';
import { bareApplication, baselinePool, poolLabel, servicePoolSize } from './baseline.js';
import { randomPort } from '../test/harness/processes.js';

// `npm run bench:rush` (issue 10.1): the opening rush on one first-come offer (100 places), FAMILIES families
// applying with IN_FLIGHT requests in flight, through HTTP to a real API process (`src/main.ts --role api`),
// against the bare-SQL baseline in the same run (one short transaction per application: lock the offer row,
// count the confirmed, insert; IN_FLIGHT at once over a pool of the service's size, PG_POOL_SIZE,
// bench/baseline.ts). Then the same rush spread over 100 offers (10 places each), both ways. Both on the same
// scratch database of the machine's PostgreSQL.
// Env: BENCH_PG_URL, BENCH_FAMILIES (2000; 400 with --quick), BENCH_IN_FLIGHT (64), BENCH_WARM_UP (400
// applications to another offer first, through HTTP and bare alike; at most BENCH_FAMILIES),
// BENCH_API_NODE_ARGS (extra node flags for the API process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`),
// BENCH_PG_STATS=1 (the API's statements during each rush through HTTP from pg_stat_statements, when the server
// preloads it, with calls and ms per application; planning too with pg_stat_statements.track_planning), BENCH_NOTIFY=1 (issue 25: the families have an address and apply with
// `notify: true`, as on the opening morning; the mails stay in the outbox, no worker runs).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const FAMILIES = Number(process.env.BENCH_FAMILIES || (quick ? 400 : 2000));
const WARM_UP = Math.min(FAMILIES, Number(process.env.BENCH_WARM_UP || 400));
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT || 64);
const PLACES = 100;
const MANY = 100;
const PLACES_MANY = 10;
const HOST = 'rush.test';
const NOTIFY = process.env.BENCH_NOTIFY === '1';
const round = (x: number, digits = 0) => Number(x.toFixed(digits));

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
  const scratch = await scratchDatabase(PG, 'rush');
  const url = new URL(scratch.url);
  const orm = await createOrm(url.toString(), { entities, poolMax: 4 });
  let api: ReturnType<typeof spawn> | undefined;
  try {
    await migrateControl(orm);
    const tenant = await addTenant(orm, { slug: 'rush', name: 'Rush', hosts: [{ host: HOST, basePath: '/api' }] });
    const db = executorOf(orm);
    const t = (name: string) => qualified(tenant.schema, name);
    const edition = newUuid();
    await sql`insert into ${t('editions')} (uuid, name, alias, procedure) values (${edition}::uuid, 'Rush', 'rush', 'firstcome')`.execute(db);
    const offer = (n: string, places = PLACES) => sql`insert into ${t('offers')} (uuid, edition_uuid, name, alias, max_participants, fee)
      values (${n}::uuid, ${edition}::uuid, ${`Rush ${n}`}, ${`rush-${n}`}, ${places}, 500)`;
    const appOffer = newUuid();
    const sqlOffer = newUuid();
    await offer(appOffer).execute(db);
    await offer(sqlOffer).execute(db);
    const appMany = Array.from({ length: MANY }, () => newUuid());
    const sqlMany = Array.from({ length: MANY }, () => newUuid());
    for (const n of [...appMany, ...sqlMany]) await offer(n, PLACES_MANY).execute(db);
    const children = Array.from({ length: FAMILIES }, () => newUuid());
    await sql`insert into ${t('participants')} (uuid, firstname, lastname, email)
      select c, 'Kind', 'Rush', ${NOTIFY ? 'familie@rush.example' : null} from unnest(${children}::uuid[]) c`.execute(db);
    // One token per lane: a token's bucket holds 300 requests (D3).
    const tokens: string[] = [];
    for (let i = 0; i < IN_FLIGHT; i++) {
      tokens.push((await insertToken(db, tenant.schema, { name: `rush ${i}`, role: 'admin', access: 'read-write', ownerKind: 'service', organiserIds: [], expiresAt: null })).token);
    }

    // The API in its own process, as deployed.
    const port = randomPort();
    const nodeArgs = (process.env.BENCH_API_NODE_ARGS ?? '').split(' ').filter(Boolean);
    api = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/main.ts', '--role', 'api'], {
      env: { ...process.env, DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'warn', REDIS_URL: '', TENANTS_DIR: mkdtempSync(path.join(tmpdir(), 'rush-')) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => api!.once('exit', () => resolve()));
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
    // Warm-up: WARM_UP applications on another offer, IN_FLIGHT in flight, as the rush will send them: V8
    // compiles the API's hot code within its first few hundred requests (bench/morning.ts measured 2.8 ms of the
    // API's CPU per application in the first second after 40 warm-up applications, 1.2 ms after it).
    const warm = newUuid();
    await offer(warm).execute(db);
    await lanes(children.slice(0, WARM_UP), IN_FLIGHT, async (child, lane) => void (await post(port, tokens[lane]!, { offer: warm, participant: child }, agent)));

    const pgStats = process.env.BENCH_PG_STATS === '1'
      && (await sql<{ n: number }>`select count(*)::int as n from pg_available_extensions where name = 'pg_stat_statements'`.execute(db)).rows[0]!.n > 0;
    if (pgStats) await sql`create extension if not exists pg_stat_statements`.execute(db);
    const statementsOf = async (what: string): Promise<string[]> => {
      if (!pgStats) return [];
      const res = await sql<{ calls: number; ms: number; plan: number; query: string }>`
        select calls::int, round(total_exec_time::numeric, 1)::float8 as ms, round(total_plan_time::numeric, 1)::float8 as plan, left(regexp_replace(query, '\\s+', ' ', 'g'), 110) as query
        from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
          and query not ilike '%pg_stat_statements%'
        order by calls desc, total_exec_time desc limit 25`.execute(db);
      const calls = res.rows.reduce((sum, r) => sum + r.calls, 0);
      const ms = res.rows.reduce((sum, r) => sum + r.ms, 0);
      const plan = res.rows.reduce((sum, r) => sum + r.plan, 0);
      await sql`select pg_stat_statements_reset()`.execute(db);
      return [`pg_stat_statements, ${what} (${FAMILIES} applications${NOTIFY ? ', notify' : ''}): ${calls} statements in the top 25, ${(calls / FAMILIES).toFixed(2)} per application, ${(ms / FAMILIES).toFixed(2)} ms execution${plan > 0 ? ` + ${(plan / FAMILIES).toFixed(2)} ms planning` : ''} per application`,
        ...res.rows.map((r) => `${String(r.calls).padStart(6)} calls ${String(r.ms).padStart(9)} ms${plan > 0 ? ` + ${String(r.plan).padStart(7)} ms plan` : ''}  ${r.query}`)];
    };
    if (pgStats) await sql`select pg_stat_statements_reset()`.execute(db);

    const through = (offerOf: (i: number) => string) => timed(async () => {
      const statuses: number[] = [];
      const latencies = await lanes(children.map((c, i) => [c, i] as const), IN_FLIGHT, async ([child, i], lane) => {
        statuses.push(await post(port, tokens[lane]!, { offer: offerOf(i), participant: child, ...(NOTIFY ? { notify: true } : {}) }, agent));
      });
      return { latencies, statuses };
    });
    // Baseline: the same decision as bare SQL, one short transaction each, IN_FLIGHT at once over a pool of the
    // service's size (issue 25: 64 connections where the service has 10 measured another database load).
    const pool = baselinePool(url.toString());
    // The baseline's warm-up: the same applications on an offer of its own (its connections opened, its
    // statements met once).
    const bareWarm = newUuid();
    await offer(bareWarm).execute(db);
    await lanes(children.slice(0, WARM_UP), IN_FLIGHT, (child) => bareApplication(pool, tenant.schema, bareWarm, child));
    const bare = (offerOf: (i: number) => string) => timed(async () => ({
      statuses: [],
      latencies: await lanes(children.map((c, i) => [c, i] as const), IN_FLIGHT, ([child, i]) => bareApplication(pool, tenant.schema, offerOf(i), child)),
    }));

    const app1 = await through(() => appOffer);
    const statements = await statementsOf('one-offer rush');
    const sql1 = await bare(() => sqlOffer);
    if (pgStats) await sql`select pg_stat_statements_reset()`.execute(db);
    const appN = await through((i) => appMany[i % MANY]!);
    statements.push(...(await statementsOf(`rush over ${MANY} offers`)));
    const sqlN = await bare((i) => sqlMany[i % MANY]!);
    await pool.end();

    const check = async (offers: string[], places: number) => (await sql<{ overbooked: number; dense: boolean }>`
      select coalesce(sum(greatest(0, confirmed - ${places})), 0)::int as overbooked, coalesce(bool_and(dense), true) as dense from (
        select count(*) filter (where status = 'confirmed')::int as confirmed,
          (count(distinct sorting) = count(*) and min(sorting) = 1 and max(sorting) = count(*)) as dense
        from ${t('attendances')} where offer_uuid = any(${offers}::uuid[]) group by offer_uuid) x`.execute(db)).rows[0]!;
    const one = await check([appOffer], PLACES);
    const many = await check(appMany, PLACES_MANY);
    const ok = [...app1.statuses, ...appN.statuses].filter((s) => s === 201).length;

    const ratio1 = app1.rate / sql1.rate;
    const p99Ratio = app1.p99 / sql1.p99;
    const base = `baseline: bare SQL, ${poolLabel()}`;
    const rows: BenchRow[] = [
      { name: `rush, one offer, applications/s (${base})`, value: round(app1.rate), unit: '/s', baseline: round(sql1.rate), ratio: ratio1, target: '≥ 0.5 of baseline', met: ratio1 >= 0.5 },
      { name: 'rush, one offer, p99', value: round(app1.p99), unit: 'ms', baseline: round(sql1.p99), ratio: p99Ratio, target: '< 2 × baseline', met: p99Ratio < 2 },
      { name: 'rush, one offer, p50', value: round(app1.p50), unit: 'ms', baseline: round(sql1.p50), ratio: app1.p50 / sql1.p50 },
      { name: 'rush, overbooked places (both rushes)', value: one.overbooked + many.overbooked, unit: 'places', target: '0', met: one.overbooked + many.overbooked === 0 },
      { name: 'rush, participant lists numbered 1..n', value: one.dense && many.dense ? 1 : 0, unit: 'all (1) / not all (0)', target: '1', met: one.dense && many.dense },
      { name: 'rush, answered 201', value: ok, unit: `of ${2 * FAMILIES}`, target: `${2 * FAMILIES}`, met: ok === 2 * FAMILIES },
      { name: `rush, ${MANY} offers, applications/s (${base})`, value: round(appN.rate), unit: '/s', baseline: round(sqlN.rate), ratio: appN.rate / sqlN.rate },
      { name: `rush, ${MANY} offers, p99`, value: round(appN.p99), unit: 'ms', baseline: round(sqlN.p99), ratio: appN.p99 / sqlN.p99 },
    ];
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    reportResult({
      scenario: 'rush',
      title: 'Opening rush (issue 10.1)',
      inputs: { families: FAMILIES, warmUp: WARM_UP, notify: NOTIFY, inFlight: IN_FLIGHT, baselinePool: servicePoolSize(), places: PLACES, offersMany: MANY, placesMany: PLACES_MANY, quick, loadAverage: load },
      rows,
      notes: statements,
    });
    console.log(`| rush, ${FAMILIES} families, ${IN_FLIGHT} in flight | per second | p50 | p99 |`);
    console.log('|---|---|---|---|');
    const line = (what: string, r: Run) => console.log(`| ${what} | ${r.rate.toFixed(0)} | ${r.p50.toFixed(0)} ms | ${r.p99.toFixed(0)} ms |`);
    line(`one offer (${PLACES} places), through HTTP`, app1);
    line(`one offer, bare SQL baseline (${poolLabel()})`, sql1);
    line(`${MANY} offers (${PLACES_MANY} places each), through HTTP`, appN);
    line(`${MANY} offers, bare SQL baseline`, sqlN);
    console.log(`load average ${load}`);
    for (const s of statements) console.log(s);
    api.kill('SIGTERM');
    await exited;
    api = undefined;
  } finally {
    api?.kill('SIGTERM');
    await orm.close();
    await scratch.drop();
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});

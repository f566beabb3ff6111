import http from 'node:http';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { insertToken } from '../src/platform/auth/tokens.js';
import { createOrm, executorOf, migrateControl } from '../src/platform/db/orm.js';
import { qualified, sql } from '../src/platform/db/sql.js';
import { newUuid } from '../src/platform/http/ids.js';
import { addTenant } from '../src/platform/tenancy/operations.js';
import type { Tenant } from '../src/platform/tenancy/tenant.js';
import { scratchDatabase } from './scratch.js';
import { quick, reportResult, type BenchRow } from './result.js';
import { entities } from '../src/entities.js';
import { lanes, timed } from './load.js';
import { baselinePool, poolLabel, servicePoolSize } from './baseline.js';
import { randomPort } from '../test/harness/processes.js';

// `npm run bench -- families` (issue 21 "Speed"): an opening morning through the website channel. FAMILIES
// families of TENANTS municipalities, each ONE request (two children, two wishes each) with its municipality's
// website token, IN_FLIGHT requests in flight, to a real service process as deployed (`src/main.ts --role all`,
// NODE_ENV=production, pg-boss workers sending to an SMTP server in this process); then every family's
// confirmation (the token from the mail the SMTP server received), IN_FLIGHT in flight. Reported:
// applications (wishes) per second and p99 of both phases, and how long after the last answer every
// confirmation mail (and every mail telling the family its places) was at the SMTP server. Baseline of the same
// run: the same writes as bare SQL with the service's pool size (PG_POOL_SIZE, bench/baseline.ts): per family one transaction
// (account, children, applications, confirmation row, outbox row) and, for the confirmation, one transaction
// locking the offers in uuid order and deciding first come first served.
// Env: BENCH_PG_URL, BENCH_FAMILIES (2000; 200 with --quick), BENCH_TENANTS (20), BENCH_IN_FLIGHT (64), BENCH_PORT (the
// service's port; default a random one).
const PG = process.env.BENCH_PG_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const FAMILIES = Number(process.env.BENCH_FAMILIES || (quick ? 200 : 2000));
const TENANTS = Number(process.env.BENCH_TENANTS || 20);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT || 64);
const OFFERS_PER_TENANT = 10;
const WISHES = 4; // two children, two wishes each

const round = (x: number, digits = 0) => Number(x.toFixed(digits));
const hostOf = (i: number) => `f${i}.families.test`;

function post(port: number, host: string, pathname: string, token: string, body: unknown, agent: http.Agent): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/api${pathname}`, agent, headers: {
      host, authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload),
    } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** The text of a mail (quoted-printable or base64 as nodemailer wrote it). */
function mailText(raw: string): string {
  const split = raw.search(/\r?\n\r?\n/);
  const head = raw.slice(0, split);
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const encoding = /^Content-Transfer-Encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding !== 'quoted-printable') return body;
  return Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');
}

type Family = { tenant: number; email: string; body: unknown };
async function main() {
  // The SMTP server the families' mails go to: the confirmation link of each address, and when each mail came.
  const links = new Map<string, string>();
  const confirmationAt = new Map<string, number>();
  const stateAt = new Map<string, number>();
  const smtp = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], logger: false,
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const text = mailText(Buffer.concat(chunks).toString('utf8'));
        const to = session.envelope.rcptTo[0]?.address ?? '';
        const link = /\/anmeldung\/bestaetigen\/([1-9A-HJ-NP-Za-km-z]+)/.exec(text)?.[1];
        if (link) {
          links.set(to, link);
          confirmationAt.set(to, Date.now());
        } else stateAt.set(to, Date.now());
        cb();
      });
    },
  });
  smtp.on('error', () => {});
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  const scratch = await scratchDatabase(PG, 'families');
  const url = new URL(scratch.url);
  const orm = await createOrm(url.toString(), { entities, poolMax: 4 });
  let ormClosed = false;
  let service: ReturnType<typeof spawn> | undefined;
  try {
    await migrateControl(orm);
    const db = executorOf(orm);
    const tenants: { tenant: Tenant; token: string; offers: string[] }[] = [];
    for (let i = 0; i < TENANTS; i++) {
      const tenant = await addTenant(orm, { slug: `families-${i}`, name: `Gemeinde ${i}`, hosts: [{ host: hostOf(i), basePath: '/api' }] });
      const t = (name: string) => qualified(tenant.schema, name);
      const edition = newUuid();
      await sql`insert into ${t('editions')} (uuid, name, alias, procedure) values (${edition}::uuid, 'Sommer', 'sommer', 'firstcome')`.execute(db);
      const offers = Array.from({ length: OFFERS_PER_TENANT }, () => newUuid());
      // Enough places for about half the wishes: both decisions occur.
      const places = Math.max(1, Math.round((FAMILIES / TENANTS) * WISHES / OFFERS_PER_TENANT / 2));
      for (const [n, o] of offers.entries()) {
        await sql`insert into ${t('offers')} (uuid, edition_uuid, name, alias, places, publish, max_participants, fee, min_age, max_age)
          values (${o}::uuid, ${edition}::uuid, ${`Angebot ${n}`}, ${`angebot-${n}`}, '{published}', 'public', ${places}, 500, 6, 14)`.execute(db);
        await sql`insert into ${t('offer_dates')} (uuid, offer_uuid, "begin", "end", position)
          values (${newUuid()}::uuid, ${o}::uuid, '2027-07-10T10:00:00+02:00', '2027-07-10T16:00:00+02:00', 0)`.execute(db);
      }
      const token = (await insertToken(db, tenant.schema, { name: 'Website', role: 'website', access: 'read-write', ownerKind: 'service', organiserIds: [], expiresAt: null, ratePerMinute: 1_000_000 })).token;
      tenants.push({ tenant, token, offers });
    }
    const families: Family[] = Array.from({ length: FAMILIES }, (_, i) => {
      const tenant = i % TENANTS;
      const offers = tenants[tenant]!.offers;
      const wish = (k: number) => ({ offer: offers[(i * 3 + k * 7) % offers.length]! });
      const email = `familie${i}@families.example`;
      return {
        tenant, email,
        body: {
          account: { email, firstname: 'Katrin', lastname: `Familie${i}`, phone: '0170 1234567', street: 'Hauptstr. 1', zip: '12345', city: 'Musterstadt' },
          participants: [
            { firstname: 'Emma', lastname: `Familie${i}`, dateOfBirth: '2016-05-23', wishes: [wish(0), wish(1)] },
            { firstname: 'Paul', lastname: `Familie${i}`, dateOfBirth: '2019-02-11', wishes: [wish(2), wish(3)] },
          ],
        },
      };
    });

    // Set up: the rest of this process reads and writes with plain pg (the ORM only made the municipalities).
    await orm.close();
    ormClosed = true;
    const reader = new pg.Pool({ connectionString: url.toString(), max: 2 });
    // Dropping the scratch database at the end terminates what is still connected; nothing to report then.
    reader.on('error', () => {});

    // The service as deployed, API and workers in one process.
    const port = Number(process.env.BENCH_PORT) || randomPort();
    service = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'all'], {
      env: {
        ...process.env, NODE_ENV: 'production', DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'warn', REDIS_URL: '',
        SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, TENANTS_DIR: mkdtempSync(path.join(tmpdir(), 'families-')), DEMO: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => service!.once('exit', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error('the service did not start')), 90_000);
      const probe = setInterval(() => {
        http.get({ host: '127.0.0.1', port, path: '/readyz' }, (res) => {
          res.resume();
          if (res.statusCode !== 200) return;
          clearInterval(probe);
          clearTimeout(deadline);
          resolve();
        }).on('error', () => {});
      }, 200);
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });

    // 1. The applications: one request per family.
    const failures: string[] = [];
    const apply = await timed(async () => {
      const statuses: number[] = [];
      const latencies = await lanes(families, IN_FLIGHT, async (f) => {
        const res = await post(port, hostOf(f.tenant), '/family-applications', tenants[f.tenant]!.token, f.body, agent);
        statuses.push(res.status);
        if (res.status !== 201 && failures.length < 5) failures.push(`${res.status} ${res.text.slice(0, 300)}`);
      });
      return { latencies, statuses };
    }, WISHES);
    const appliedAt = Date.now();
    // 2. Every confirmation mail at the SMTP server.
    const deadline = Date.now() + 300_000;
    while (links.size < FAMILIES && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const mailsIn = Math.max(0, Math.max(...confirmationAt.values()) - appliedAt) / 1000;
    // 3. The confirmations, in the order the mails came.
    const byMail = [...families].sort((a, b) => (confirmationAt.get(a.email) ?? 0) - (confirmationAt.get(b.email) ?? 0));
    const confirm = await timed(async () => {
      const statuses: number[] = [];
      const latencies = await lanes(byMail, IN_FLIGHT, async (f) => {
        const res = await post(port, hostOf(f.tenant), '/family-applications/confirm', tenants[f.tenant]!.token, { token: links.get(f.email) }, agent);
        statuses.push(res.status);
        if (res.status !== 200 && failures.length < 10) failures.push(`confirm ${res.status} ${res.text.slice(0, 300)}`);
      });
      return { latencies, statuses };
    }, WISHES);
    const confirmedAt = Date.now();
    const stateDeadline = Date.now() + 300_000;
    while (stateAt.size < FAMILIES && Date.now() < stateDeadline) await new Promise((r) => setTimeout(r, 50));
    const stateMailsIn = Math.max(0, Math.max(...stateAt.values()) - confirmedAt) / 1000;

    // The checks: nothing overbooked, lists numbered 1..n, every wish decided.
    const checks = { overbooked: 0, undecided: 0, notDense: 0 };
    for (const { tenant } of tenants) {
      const r = (await reader.query<{ overbooked: number; undecided: number; notDense: number }>(`
        select coalesce(sum(greatest(0, confirmed - max)), 0)::int as overbooked, coalesce(sum(undecided), 0)::int as undecided,
          count(*) filter (where not dense)::int as "notDense" from (
          select o.max_participants as max, count(*) filter (where a.status = 'confirmed') as confirmed,
            count(*) filter (where a.status not in ('confirmed', 'waitlisted')) as undecided,
            (count(distinct a.sorting) = count(*) and min(a.sorting) = 1 and max(a.sorting) = count(*)) as dense
          from ${tenant.schema}.attendances a join ${tenant.schema}.offers o on o.uuid = a.offer_uuid
          group by o.uuid, o.max_participants) x`)).rows[0]!;
      checks.overbooked += r.overbooked;
      checks.undecided += r.undecided;
      checks.notDense += r.notDense;
    }
    service.kill('SIGTERM');
    await exited;
    service = undefined;

    // The baseline: the same writes as bare SQL, the service's pool size, the same requests in flight.
    const pool = baselinePool(url.toString());
    const baseFamilies = families.map((f) => ({ ...f, email: `basis.${f.email}`, submission: newUuid() }));
    const bareApply = await timed(async () => ({ statuses: [], latencies: await lanes(baseFamilies, IN_FLIGHT, async (f) => {
      const s = tenants[f.tenant]!.tenant.schema;
      const body = f.body as { participants: { firstname: string; dateOfBirth: string; wishes: { offer: string }[] }[] };
      const c = await pool.connect();
      try {
        await c.query('begin');
        const account = newUuid();
        await c.query(`insert into ${s}.accounts (uuid, email, firstname, lastname) values ($1, $2, 'Katrin', 'Basis')`, [account, f.email]);
        await c.query(`insert into ${s}.family_submissions (uuid, account_uuid) values ($1, $2)`, [f.submission, account]);
        for (const child of body.participants) {
          const p = newUuid();
          await c.query(`insert into ${s}.participants (uuid, account_uuid, firstname, lastname, date_of_birth) values ($1, $2, $3, 'Basis', $4)`, [p, account, child.firstname, child.dateOfBirth]);
          for (const w of child.wishes) {
            await c.query(`insert into ${s}.attendances (uuid, offer_uuid, participant_uuid, status, sorting, fee, created_by_admin, submission_uuid)
              values ($1, $2, $3, 'email_unconfirmed', (select coalesce(max(sorting), 0) + 1 from ${s}.attendances where offer_uuid = $2), 500, false, $4)
              on conflict do nothing`, [newUuid(), w.offer, p, f.submission]);
          }
        }
        await c.query(`insert into ${s}.family_confirmations (token_hash, kind, submission_uuid, expires_at) values (sha256(gen_random_uuid()::text::bytea), 'email', $1, now() + interval '72 hours')`, [f.submission]);
        await c.query(`insert into ${s}.outbox (uuid, kind, recipient, subject, body) values ($1, 'family_confirmation', $2, 'Bitte bestätigen', 'Link')`, [newUuid(), f.email]);
        await c.query('commit');
      } finally {
        c.release();
      }
    }) }), WISHES);
    const bareConfirm = await timed(async () => ({ statuses: [], latencies: await lanes(baseFamilies, IN_FLIGHT, async (f) => {
      const s = tenants[f.tenant]!.tenant.schema;
      const c = await pool.connect();
      try {
        await c.query('begin');
        const apps = (await c.query<{ uuid: string; offer: string }>(`select uuid, offer_uuid as offer from ${s}.attendances where submission_uuid = $1`, [f.submission])).rows;
        for (const offer of [...new Set(apps.map((a) => a.offer))].sort()) {
          await c.query(`select 1 from ${s}.offers where uuid = $1 for no key update`, [offer]);
        }
        for (const a of apps) {
          await c.query(`update ${s}.attendances set status = case when (select count(*) from ${s}.attendances x where x.offer_uuid = $2 and x.status = 'confirmed')
              < (select max_participants from ${s}.offers where uuid = $2) then 'confirmed' else 'waitlisted' end, status_changed_at = now() where uuid = $1`, [a.uuid, a.offer]);
        }
        await c.query(`update ${s}.family_submissions set email_confirmed_at = now() where uuid = $1`, [f.submission]);
        await c.query(`insert into ${s}.outbox (uuid, kind, recipient, subject, body) values ($1, 'family_application_state', $2, 'Ihre Anmeldung', 'Stand')`, [newUuid(), f.email]);
        await c.query('commit');
      } finally {
        c.release();
      }
    }) }), WISHES);
    await pool.end();
    await reader.end();

    const ok201 = apply.statuses.filter((s) => s === 201).length;
    const ok200 = confirm.statuses.filter((s) => s === 200).length;
    const rows: BenchRow[] = [
      { name: `families apply (one request each), applications/s (baseline: bare SQL, ${poolLabel()})`, value: round(apply.rate), unit: '/s', baseline: round(bareApply.rate), ratio: apply.rate / bareApply.rate },
      { name: 'families apply, p99 per request', value: round(apply.p99), unit: 'ms', baseline: round(bareApply.p99), ratio: apply.p99 / bareApply.p99 },
      { name: 'families apply, p50 per request', value: round(apply.p50), unit: 'ms', baseline: round(bareApply.p50), ratio: apply.p50 / bareApply.p50 },
      { name: 'every confirmation mail at the SMTP server, after the last answer', value: round(mailsIn, 1), unit: 's' },
      { name: `families confirm, applications/s (baseline: bare SQL, ${poolLabel()})`, value: round(confirm.rate), unit: '/s', baseline: round(bareConfirm.rate), ratio: confirm.rate / bareConfirm.rate },
      { name: 'families confirm, p99 per request', value: round(confirm.p99), unit: 'ms', baseline: round(bareConfirm.p99), ratio: confirm.p99 / bareConfirm.p99 },
      { name: 'every mail of the decided places at the SMTP server, after the last confirmation', value: round(stateMailsIn, 1), unit: 's' },
      { name: 'answered 201 / 200', value: ok201 + ok200, unit: `of ${2 * FAMILIES}`, target: `${2 * FAMILIES}`, met: ok201 + ok200 === 2 * FAMILIES },
      { name: 'overbooked places, undecided applications, lists not numbered 1..n', value: checks.overbooked + checks.undecided + checks.notDense, unit: '', target: '0', met: checks.overbooked + checks.undecided + checks.notDense === 0 },
    ];
    reportResult({
      scenario: 'families',
      title: 'An opening morning through the website channel (issue 21)',
      inputs: { families: FAMILIES, tenants: TENANTS, inFlight: IN_FLIGHT, wishesPerFamily: WISHES, offersPerTenant: OFFERS_PER_TENANT, pool: servicePoolSize(), quick, loadAverage: loadavg().map((x) => x.toFixed(2)).join(' ') },
      rows,
      notes: failures,
    });
  } finally {
    service?.kill('SIGTERM');
    if (!ormClosed) await orm.close();
    await scratch.drop();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});

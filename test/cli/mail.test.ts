import { beforeAll, describe, expect, inject, it } from 'vitest';
import { useHarness } from '../harness/harness.js';
import { runCliLines } from '../harness/processes.js';
import { executorOf } from '../../src/platform/db/orm.js';
import { qualified, sql } from '../../src/platform/db/sql.js';
import { queueMail } from '../../src/platform/mail/outbox.js';

// `mail list <slug> [--failed]` and `mail retry <slug> <uuid>|--all-failed` (issue 9): the operator sees given-up
// mails (state and SMTP error, never the recipient or the text) and sends them again.
const cli = (args: string[]) => runCliLines(args, { DATABASE_URL: inject('databaseUrl') });

let failed: string;
let sent: string;

const { h, t } = useHarness();
beforeAll(async () => {
  const db = executorOf(h.orm);
  failed = await queueMail({ tenant: t.tenant }, db, { kind: 'attendance_confirmed', recipient: 'geheim@family.example', subject: 'Platzzusage', body: 'Kim hat einen Platz.' });
  sent = await queueMail({ tenant: t.tenant }, db, { kind: 'receipt', recipient: 'bezahlt@family.example', subject: 'Quittung', body: 'x' });
  await sql`update ${qualified(t.tenant.schema, 'outbox')} set failed_at = now(), attempts = 30, last_error = '451 Service temporarily unavailable'
    where uuid = ${failed}::uuid`.execute(db);
  await sql`update ${qualified(t.tenant.schema, 'outbox')} set sent_at = now(), attempts = 1 where uuid = ${sent}::uuid`.execute(db);
});

describe('mail list / retry', () => {
  it('lists the outbox without personal data, and --failed the given-up mails only', async () => {
    const all = await cli(['mail', 'list', t.slug]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.lines).toHaveLength(2);
    const rows = all.lines.map((l) => l.split('\t'));
    expect(rows.find((r) => r[0] === failed)!.slice(1, 4)).toEqual(['attendance_confirmed', 'failed', '30']);
    expect(rows.find((r) => r[0] === failed)![6]).toBe('451 Service temporarily unavailable');
    expect(rows.find((r) => r[0] === sent)!.slice(1, 4)).toEqual(['receipt', 'sent', '1']);
    expect(all.stdout + all.stderr).not.toMatch(/family\.example|Kim|Platzzusage/);
    const only = await cli(['mail', 'list', t.slug, '--failed']);
    expect(only.lines.map((l) => l.split('\t')[0])).toEqual([failed]);
  });

  it('retry makes a given-up mail due again with fresh attempts', async () => {
    const res = await cli(['mail', 'retry', t.slug, failed]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.lines).toEqual([`${t.slug}\tretried=1`]);
    const row = await sql<{ failed_at: Date | null; attempts: number }>`select failed_at, attempts from ${qualified(t.tenant.schema, 'outbox')}
      where uuid = ${failed}::uuid`.execute(executorOf(h.orm));
    expect(row.rows[0]).toEqual({ failed_at: null, attempts: 0 });
    expect((await cli(['mail', 'list', t.slug, '--failed'])).lines).toEqual([]);
    expect((await cli(['mail', 'retry', t.slug, '--all-failed'])).lines).toEqual([`${t.slug}\tretried=0`]);
  });

  it('bad input: a clear message and a non-zero exit', async () => {
    const notFailed = await cli(['mail', 'retry', t.slug, sent]);
    expect(notFailed.code).toBe(1);
    expect(notFailed.stderr).toMatch(/no failed mail/);
    expect((await cli(['mail', 'retry', t.slug])).code).toBe(2);
    expect((await cli(['mail', 'retry', t.slug, 'nonsense'])).code).toBe(2);
    expect((await cli(['mail', 'list', 'no-such-tenant'])).code).toBe(1);
    expect((await cli(['mail', 'list', t.slug, '--limit', '0'])).code).toBe(2);
    expect((await cli(['mail', 'frobnicate'])).code).toBe(2);
  });
});

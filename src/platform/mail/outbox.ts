import { qualified, sql, type Executor } from '../db/sql.js';
import { newUuid } from '../http/ids.js';
import type { Tenant } from '../tenancy/tenant.js';
import type { Mailer } from './mailer.js';

// D9 transactional outbox: a mail is a row written in the same transaction as the change that causes it
// (so a rolled-back change sends nothing), and a job sends it later. Rows are claimed with
// FOR UPDATE SKIP LOCKED and marked sent in the same transaction, so two workers never send one row.
export type QueuedMail = { kind: string; recipient: string; subject: string; body: string; payload?: Record<string, unknown> };

export async function queueMail(db: Executor, schema: string, mail: QueuedMail): Promise<string> {
  const id = newUuid();
  await sql`insert into ${qualified(schema, 'outbox')} (uuid, kind, recipient, subject, body, payload)
    values (${id}, ${mail.kind}, ${mail.recipient}, ${mail.subject}, ${mail.body}, ${JSON.stringify(mail.payload ?? {})}::jsonb)`.execute(db);
  return id;
}

const MAX_ATTEMPTS = 8;

export async function dispatchOutbox(db: Executor, tenant: Tenant, mailer: Mailer, batch = 50): Promise<{ sent: number; failed: number }> {
  let sent = 0;
  let failed = 0;
  const from = tenant.settings.mailFrom ?? `${tenant.name} <noreply@${tenant.hosts[0]?.host ?? 'localhost'}>`;
  for (;;) {
    const done = await db.transaction().execute(async (tx) => {
      const rows = await sql<{ uuid: string; recipient: string; subject: string; body: string }>`
        select uuid, recipient, subject, body from ${qualified(tenant.schema, 'outbox')}
        where sent_at is null and attempts < ${MAX_ATTEMPTS}
        order by created_at limit ${batch} for update skip locked`.execute(tx);
      for (const r of rows.rows) {
        try {
          await mailer.send({ id: r.uuid, tenant: tenant.slug, from, to: r.recipient, subject: r.subject, text: r.body });
          await sql`update ${qualified(tenant.schema, 'outbox')} set sent_at = now(), attempts = attempts + 1, last_error = null
            where uuid = ${r.uuid}`.execute(tx);
          sent++;
        } catch (err) {
          await sql`update ${qualified(tenant.schema, 'outbox')} set attempts = attempts + 1, last_error = ${String((err as Error).message).slice(0, 500)}
            where uuid = ${r.uuid}`.execute(tx);
          failed++;
        }
      }
      return rows.rows.length < batch;
    });
    if (done) break;
  }
  return { sent, failed };
}

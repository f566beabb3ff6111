import { Migration } from '@mikro-orm/migrations';

// D9 delivery of the e-mail outbox without a transaction across SMTP (issue: mail within seconds, once):
// - `next_attempt_at`: when the row may be tried (now at first; later with exponential backoff and jitter);
// - `lease_until`: a worker that claimed the row owns it until then; a worker that died loses it when the
//   lease runs out, and the row is tried again (same Message-ID, so a resend is recognisable);
// - `failed_at`: the last attempt failed; the row is given up until an operator retries it
//   (`cli mail retry`), and it stays visible (`cli mail list --failed`).
export class Migration20261124100000OutboxDelivery extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table outbox
      add column next_attempt_at timestamptz not null default now(),
      add column lease_until timestamptz,
      add column failed_at timestamptz`);
    this.addSql(`drop index if exists outbox_unsent`);
    this.addSql(`create index outbox_due on outbox (next_attempt_at, created_at) where sent_at is null and failed_at is null`);
    this.addSql(`create index outbox_failed on outbox (failed_at) where failed_at is not null and sent_at is null`);
  }
}

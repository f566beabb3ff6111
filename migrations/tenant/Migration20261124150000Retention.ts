import { Migration } from '@mikro-orm/migrations';

// Retention (D2 `retentionWeeks`, D9; docs/decisions.md "Retention"). Runs with search_path set to the tenant's
// schema.
// - `participants.pseudonym`: the stable pseudonym (`P-…`, src/domain/retention.ts) written when the participant
//   is pseudonymised; applications show it instead of the participant.
// - `attendances.participant_age`: the child's age at the offer's first date, written before the birth date is
//   removed; applications keep showing it.
// - `accounts.pseudonymised_at`, and `accounts.email` nullable: an account left without a living child loses its
//   e-mail address, phone, address and names.
// - `debtors.retained_name`: the debtor's name kept for its receipts (accounting records) when the account or
//   participant behind it loses its names; only written for debtors that have a receipt.
// - The daily run looks for participants not yet pseudonymised: partial index on those.
export class Migration20261124150000Retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table participants add column pseudonym text`);
    this.addSql(`create index participants_living on participants (uuid) where pseudonymised_at is null`);
    this.addSql(`alter table attendances add column participant_age int check (participant_age >= 0)`);
    this.addSql(`alter table accounts add column pseudonymised_at timestamptz`);
    this.addSql(`alter table accounts alter column email drop not null`);
    this.addSql(`alter table debtors add column retained_name text`);
  }
}

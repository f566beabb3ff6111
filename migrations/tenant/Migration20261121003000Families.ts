import { Migration } from '@mikro-orm/migrations';

// Families (D6): accounts and their children (participants). Runs with search_path set to the tenant's schema.
// - An account's e-mail is unique ignoring case (it is the account's alias, spec 1.5): unique index on lower(email),
//   which also serves the alias look-up and the duplicate check.
// - A participant may have no account (D8: a participant without an account is its own debtor); deleting the
//   account keeps its participants with `account_uuid` cleared (on delete set null).
// - Names are nullable on both: an account may be created with its e-mail only, and D9's pseudonymisation
//   removes a participant's names and contact data (`pseudonymised_at` records when).
// - Lists sort by lastname, firstname (German collation), uuid: indexes in that order.
export class Migration20261121003000Families extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table accounts (
      uuid uuid primary key,
      email text not null,
      firstname text,
      lastname text,
      phone text,
      street text, zip text, city text,
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now()
    )`);
    this.addSql(`create unique index accounts_email on accounts (lower(email))`);
    this.addSql(`create index accounts_name on accounts (lastname collate "de-DE-x-icu", firstname collate "de-DE-x-icu", uuid)`);
    this.addSql(`create index accounts_modified on accounts (modified_at)`);
    this.addSql(`create table participants (
      uuid uuid primary key,
      account_uuid uuid references accounts (uuid) on delete set null,
      firstname text,
      lastname text,
      date_of_birth date,
      email text,
      phone text,
      pseudonymised_at timestamptz,
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now()
    )`);
    this.addSql(`create index participants_account on participants (account_uuid) where account_uuid is not null`);
    this.addSql(`create index participants_name on participants (lastname collate "de-DE-x-icu", firstname collate "de-DE-x-icu", uuid)`);
    this.addSql(`create index participants_modified on participants (modified_at)`);
  }
}

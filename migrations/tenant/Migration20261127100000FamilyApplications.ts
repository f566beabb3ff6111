import { Migration } from '@mikro-orm/migrations';

// Issue 21 (D11): families apply through the municipality's website. Runs with search_path set to the
// tenant's schema.
// - `api_tokens`: the role `website` (a service account of the public website) and a per-token rate limit
//   (`rate_per_minute`, requests refilled per minute; null: D3's default).
// - `family_submissions`: one per `POST /family-applications`; what it created (the account, children), the
//   website token that sent it, whether the website vouched for the address, when the address was confirmed,
//   and the guardians to ask for consent once it is (`[{participant, email}]`, emptied when their mails are queued).
// - `family_confirmations`: the single-use links of the confirmation and consent mails, only as SHA-256 of the
//   token (D11), with their expiry; a consent link names its child.
// - `attendances.submission_uuid`: the submission an application came with (null: made by the team).
// - `files`: answer files (spec 2.2 `files`) as rows of the municipality's schema, so its backup and export hold
//   them; deleted with their application (cascade: a delete, a transfer's old application, a child deleted),
//   at pseudonymisation, and after 24 h when no application uses them.
export class Migration20261127100000FamilyApplications extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table api_tokens drop constraint api_tokens_role_check`);
    this.addSql(`alter table api_tokens add constraint api_tokens_role_check check (role in ('admin', 'organiser', 'website'))`);
    this.addSql(`alter table api_tokens add column rate_per_minute int check (rate_per_minute between 1 and 1000000)`);

    this.addSql(`create table family_submissions (
      uuid uuid primary key,
      account_uuid uuid references accounts (uuid) on delete set null,
      token_uuid uuid,
      email_verified boolean not null default false,
      email_confirmed_at timestamptz,
      created_account boolean not null default false,
      created_participants uuid[] not null default '{}',
      guardians jsonb not null default '[]'::jsonb,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index family_submissions_account on family_submissions (account_uuid)`);
    this.addSql(`create table family_confirmations (
      token_hash bytea primary key,
      kind text not null check (kind in ('email', 'consent')),
      submission_uuid uuid not null references family_submissions (uuid) on delete cascade,
      participant_uuid uuid references participants (uuid) on delete cascade,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index family_confirmations_submission on family_confirmations (submission_uuid)`);
    this.addSql(`create index family_confirmations_open on family_confirmations (expires_at) where used_at is null`);
    this.addSql(`alter table attendances add column submission_uuid uuid references family_submissions (uuid) on delete set null`);
    this.addSql(`create index attendances_submission on attendances (submission_uuid) where submission_uuid is not null`);

    this.addSql(`create table files (
      uuid uuid primary key,
      token_uuid uuid,
      name text not null,
      mime_type text not null check (mime_type in ('application/pdf', 'image/png', 'image/jpeg')),
      size int not null check (size between 1 and 10485760),
      content bytea not null,
      attendance_uuid uuid references attendances (uuid) on delete cascade,
      question_uuid uuid,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index files_attendance on files (attendance_uuid) where attendance_uuid is not null`);
    this.addSql(`create index files_unused on files (created_at) where attendance_uuid is null`);
  }

  // bench/tenants.ts undoes the newest migration in 1,000 schemas to time a release's `migrate`.
  override async down(): Promise<void> {
    this.addSql(`drop table files`);
    this.addSql(`alter table attendances drop column submission_uuid`);
    this.addSql(`drop table family_confirmations`);
    this.addSql(`drop table family_submissions`);
    this.addSql(`alter table api_tokens drop column rate_per_minute`);
    this.addSql(`delete from api_tokens where role = 'website'`);
    this.addSql(`alter table api_tokens drop constraint api_tokens_role_check`);
    this.addSql(`alter table api_tokens add constraint api_tokens_role_check check (role in ('admin', 'organiser'))`);
  }
}

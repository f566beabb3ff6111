import { Migration } from '@mikro-orm/migrations';

// A tenant schema's platform tables: users and API tokens (D3), the e-mail outbox (D9), and the first
// resources (categories, organisers). Runs with search_path set to the tenant's schema.
export class Migration20261121000100Platform extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table organisers (
      uuid uuid primary key,
      name text not null,
      alias text not null unique,
      email text, phone text, website text,
      street text, zip text, city text,
      description text,
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now()
    )`);
    this.addSql(`create table users (
      uuid uuid primary key,
      name text not null,
      email text,
      role text not null check (role in ('admin', 'organiser')),
      organiser_ids uuid[] not null default '{}',
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create table api_tokens (
      uuid uuid primary key,
      name text not null,
      role text not null check (role in ('admin', 'organiser')),
      access text not null check (access in ('legacy', 'read', 'read-write')),
      owner_kind text not null check (owner_kind in ('person', 'service')),
      user_uuid uuid references users (uuid) on delete cascade,
      organiser_ids uuid[] not null default '{}',
      secret_hash bytea not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      last_used_at timestamptz
    )`);
    this.addSql(`create table categories (
      uuid uuid primary key,
      name text not null,
      alias text not null unique,
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now()
    )`);
    this.addSql(`create index categories_modified on categories (modified_at)`);
    this.addSql(`create table outbox (
      uuid uuid primary key,
      kind text not null,
      recipient text not null,
      subject text not null,
      body text not null,
      payload jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now(),
      sent_at timestamptz,
      attempts int not null default 0,
      last_error text
    )`);
    this.addSql(`create index outbox_unsent on outbox (created_at) where sent_at is null`);
  }
}

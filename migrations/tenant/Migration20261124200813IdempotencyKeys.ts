import { Migration } from '@mikro-orm/migrations';

// Idempotency-Key on POST (issue 13; src/platform/http/idempotency.ts): one row per (token, key), kept 24 h.
// `fingerprint` identifies the request (method, path, body); `status` is null while the first request with
// the key is in progress, then the stored answer (status, the headers worth replaying, body). Runs with
// search_path set to the tenant's schema.
export class Migration20261124200813IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table idempotency_keys (
      token_uuid uuid not null references api_tokens (uuid) on delete cascade,
      key text not null check (length(key) between 1 and 255),
      fingerprint text not null,
      status int,
      headers jsonb not null default '{}',
      body text,
      created_at timestamptz not null default now(),
      completed_at timestamptz,
      primary key (token_uuid, key)
    )`);
    this.addSql(`create index idempotency_keys_created on idempotency_keys (created_at)`);
  }
}

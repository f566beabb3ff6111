import { Migration } from '@mikro-orm/migrations';

// Issue 14 part B: webhook subscriptions of a municipality and their delivery attempts
// (src/resources/webhooks). Runs with search_path set to the tenant's schema.
// - `webhooks`: the subscription. `events` null means every event type. `secret` signs (Standard Webhooks,
//   `whsec_…`); after a rotation `previous_secret` signs too until `previous_secret_until`. The delivery
//   state lives on the row: the cursor (`cursor_tx`, `cursor_id`: the (tx, id) of the last event answered 2xx,
//   in the event feed's order), the failing streak (`attempts`, `failing_since`, `next_attempt_at`) and the
//   lease of the worker delivering it (`lease_owner`, `lease_until`): one worker at a time per subscription,
//   so its events go out in order, and a dead worker's lease runs out.
// - `webhook_deliveries`: every attempt (and a requested redelivery, `pending` until tried); `seq` orders the
//   attempts recorded by one statement (they share `created_at`).
export class Migration20261125000100Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table webhooks (
      uuid uuid primary key,
      url text not null,
      events text[],
      enabled boolean not null default true,
      description text,
      secret text not null,
      previous_secret text,
      previous_secret_until timestamptz,
      cursor_tx xid8 not null,
      cursor_id bigint not null default 0,
      attempts int not null default 0,
      failing_since timestamptz,
      next_attempt_at timestamptz not null default now(),
      lease_owner uuid,
      lease_until timestamptz,
      disabled_at timestamptz,
      disabled_reason text check (disabled_reason in ('failing')),
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now()
    )`);
    this.addSql(`create index webhooks_due on webhooks (next_attempt_at) where enabled`);
    this.addSql(`create table webhook_deliveries (
      uuid uuid primary key,
      seq bigint generated always as identity,
      webhook_uuid uuid not null references webhooks (uuid) on delete cascade,
      event_uuid uuid not null,
      event_type text not null,
      attempt int not null,
      redelivery boolean not null default false,
      state text not null check (state in ('pending', 'succeeded', 'failed')),
      response_status int,
      latency_ms int,
      error text,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index webhook_deliveries_list on webhook_deliveries (webhook_uuid, created_at desc, seq desc)`);
    this.addSql(`create index webhook_deliveries_pending on webhook_deliveries (webhook_uuid, created_at) where state = 'pending'`);
  }
}

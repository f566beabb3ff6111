import { Migration } from '@mikro-orm/migrations';

// Issue 14: the municipality's event log (src/platform/events/events.ts; docs/decisions.md "Events"). One row
// per event, written in the transaction of the change it reports. `tx` is the writing transaction's id: the
// feed reads only rows whose transaction has certainly ended (`tx < pg_snapshot_xmin(...)`) in `(tx, id)`
// order, so an event whose transaction commits late is never skipped by a reader that has moved past it.
// Rows older than 30 days are purged by the daily retention run. Runs with search_path set to the tenant's
// schema.
export class Migration20261125000000Events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table event (
      id bigint generated always as identity primary key,
      uuid uuid not null unique,
      type text not null,
      occurred_at timestamptz not null default now(),
      tx xid8 not null default pg_current_xact_id(),
      data jsonb not null
    )`);
    this.addSql(`create index event_tx_id on event (tx, id)`);
    this.addSql(`create index event_occurred_at on event (occurred_at)`);
  }
}

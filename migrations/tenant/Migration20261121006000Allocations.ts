import { Migration } from '@mikro-orm/migrations';

// Lottery runs of an edition (D7, D10 "Lot and commit"), shown on the edition as `allocations`. Runs with
// search_path set to the tenant's schema.
// - A row is written when `POST /editions/{uuid}/allocate` is accepted (`started_at`), with the seed the draw
//   will use (sent, or drawn by the server) and whether losers are waitlisted; the background job draws and
//   sets `finished_at` and the counts in the same transaction as the decisions, so a run is either pending
//   (finished_at null) or complete.
// - `seq` orders the runs of an edition: pending runs are drawn in the order they were requested.
// - Deleting an edition removes its runs (an edition with offers cannot be deleted anyway).
export class Migration20261121006000Allocations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table edition_allocations (
      uuid uuid primary key,
      seq bigint generated always as identity,
      edition_uuid uuid not null references editions (uuid) on delete cascade,
      seed bigint not null,
      waitlist boolean not null default true,
      started_at timestamptz not null default now(),
      finished_at timestamptz,
      confirmed int not null default 0 check (confirmed >= 0),
      waitlisted int not null default 0 check (waitlisted >= 0),
      unfulfilled int not null default 0 check (unfulfilled >= 0)
    )`);
    this.addSql(`create index edition_allocations_edition on edition_allocations (edition_uuid, seq)`);
    this.addSql(`create index edition_allocations_pending on edition_allocations (edition_uuid, seq) where finished_at is null`);
  }
}

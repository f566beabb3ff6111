import { Migration } from '@mikro-orm/migrations';

// Issue 10.3: when `commit` is requested while a lottery run is still pending, the run is marked; the run's own
// allocate job then leaves it to the commit's job, which draws it and writes the decisions released at once
// (one write of each application instead of two). Runs with search_path set to the tenant's schema.
export class Migration20261125000300AllocationCommitRequested extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table edition_allocations add column commit_requested_at timestamptz`);
  }

  // bench/tenants.ts undoes the newest migration in 1,000 schemas to time a release's `migrate`.
  override async down(): Promise<void> {
    this.addSql(`alter table edition_allocations drop column commit_requested_at`);
  }
}

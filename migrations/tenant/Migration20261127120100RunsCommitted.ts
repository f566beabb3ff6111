import { Migration } from '@mikro-orm/migrations';

// Issue 22.2: a refill holds its decisions back only while the edition has a lottery run whose decisions wait
// for a commit (`commit_requested_at` null: no commit asked for since). A commit now marks every run it
// covers, drawn or not; the runs drawn before this release are marked here when their edition holds nothing
// back any more (so they were committed). Runs with search_path set to the tenant's schema.
export class Migration20261127120100RunsCommitted extends Migration {
  override async up(): Promise<void> {
    this.addSql(`update edition_allocations r set commit_requested_at = coalesce(r.finished_at, now())
      where r.commit_requested_at is null and r.finished_at is not null
        and not exists (select 1 from attendances a join offers o on o.uuid = a.offer_uuid
          where o.edition_uuid = r.edition_uuid and a.held_back)`);
  }

  override async down(): Promise<void> {
    // Nothing to undo: the marks only say what was committed.
  }
}

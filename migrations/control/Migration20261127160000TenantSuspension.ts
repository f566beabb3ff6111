import { Migration } from '@mikro-orm/migrations';

// Issue 24: a municipality can be suspended without losing it (`tenant suspend <slug> [--reason]`): while
// `suspended_at` is set every request of its hosts is answered 503 with a sentence, and its jobs and mail wait.
// `tenant resume` clears both columns. Runs with search_path set to `control`.
export class Migration20261127160000TenantSuspension extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table tenants add column suspended_at timestamptz, add column suspended_reason text`);
  }
}

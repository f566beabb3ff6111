import { Migration } from '@mikro-orm/migrations';

// Issue 22.8, D5: "cancel stops every charge, relaunch brings them back as they were".
// - `offers.called_off`: the offer was cancelled and has not been relaunched or published since. None of its
//   applications is payable while it is; `unpublish` of a cancelled offer leaves it (its `status` is then
//   `unpublished` as D5 says, and the charges stay cancelled).
// - `attendances.charge_kept`: for `participated`/`noshow`, whether it held a charge when it moved on (D10: kept
//   then), so a relaunch brings that charge back after a cancel had cancelled it; null in other states.
// Runs with search_path set to the tenant's schema.
export class Migration20261127120300CalledOffCharges extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table offers add column called_off boolean not null default false`);
    this.addSql(`update offers set called_off = true where 'cancelled' = any(places)`);
    this.addSql(`alter table attendances add column charge_kept boolean`);
    this.addSql(`update attendances a set charge_kept = coalesce((select sum(b.amount) from bookings b
      where b.attendance_uuid = a.uuid and b.type in ('charge', 'cancellation')), 0) > 0 where a.status in ('participated', 'noshow')`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table attendances drop column charge_kept`);
    this.addSql(`alter table offers drop column called_off`);
  }
}

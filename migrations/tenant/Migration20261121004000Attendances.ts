import { Migration } from '@mikro-orm/migrations';

// Applications (spec 2.2, 3, 4.3; D10 "Applications"), called `attendances` in the API. Runs with search_path
// set to the tenant's schema.
// - One application per participant and offer (unique): creating again reuses it (spec 4.3 "Create").
// - Writers serialise per offer with a row lock on `offers` (`for no key update`) inside their transaction,
//   so places are never overbooked and `sorting` stays a dense 1..n per offer.
// - `sorting` is null only inside the transaction that inserts a row; the same transaction renumbers the list.
// - `seq` is the creation order the lottery draws by (D10: never by UUID).
// - Money (D8) comes with a later migration. What it needs is here already: `fee` (copied from the offer at
//   creation, not recalculated on transfer), `held_back` (fee not due yet), `payable_switched_off`
//   (`PATCH payable:false`), `confirmed_at`, `status_changed_at`. `paid` is a placeholder boolean, always
//   false until receipts exist: the participants resource's delete check reads `attendances.paid`, and
//   bookings/receipts will reference `attendances(uuid)` and replace the flag with the receipts rule.
// - Deleting an offer with applications is refused (restrict; the offers service answers 409 first);
//   deleting a participant removes its (unpaid) applications (cascade; paid ones are refused by the service).
export class Migration20261121004000Attendances extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table attendances (
      uuid uuid primary key,
      seq bigint generated always as identity,
      offer_uuid uuid not null references offers (uuid) on delete restrict,
      participant_uuid uuid not null references participants (uuid) on delete cascade,
      status text not null check (status in ('waiting', 'confirmed', 'waitlisted', 'rejected', 'withdrawn',
        'unfulfilled', 'participated', 'noshow', 'email_unconfirmed', 'consents_outstanding')),
      sorting int,
      user_priority int check (user_priority >= 0),
      all_alternate_dates boolean not null default true,
      consent_outstanding boolean not null default false,
      held_back boolean not null default false,
      decision_reason text,
      created_by_admin boolean not null default true,
      fee int check (fee >= 0),
      payable_switched_off boolean not null default false,
      paid boolean not null default false,
      answers jsonb not null default '[]'::jsonb,
      confirmed_at timestamptz,
      status_changed_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now(),
      constraint attendances_offer_participant_key unique (offer_uuid, participant_uuid)
    )`);
    this.addSql(`create index attendances_offer_sorting on attendances (offer_uuid, sorting)`);
    this.addSql(`create index attendances_participant on attendances (participant_uuid)`);
    this.addSql(`create index attendances_created on attendances (created_at desc, uuid desc)`);
    this.addSql(`create index attendances_modified on attendances (modified_at)`);
    this.addSql(`create index attendances_held_back on attendances (offer_uuid) where held_back`);
  }
}

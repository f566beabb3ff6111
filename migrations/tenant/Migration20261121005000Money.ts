import { Migration } from '@mikro-orm/migrations';

// Money (spec 2.2 paid/payable/receipts, 3.2, 4.3; D8, D10 "Money"). Runs with search_path set to the tenant's
// schema.
// - `debtors`: whoever owes fees, a family account or a participant without one; made on first need. The link
//   is cleared (not cascaded) when the account or participant is deleted: bookings keep their debtor.
// - `ledgers`: one per debtor and edition (unique); the balance is the sum of its bookings, computed on read.
// - `bookings`: signed postings (charge positive, payment negative), append-only: a trigger refuses UPDATE and
//   DELETE. `attendance_uuid` has no foreign key: an application may be deleted (after a reversal) or
//   transferred, its bookings stay. `seq` is the posting order.
// - `receipts` and `receipt_items`: a receipt's number, debtor, total and paidAt never change (trigger).
//   An item's `reversed_by_uuid` is set by the reversal that covers it, and an unreversed item's
//   `attendance_uuid` / `ledger_uuid` move with a transfer (spec 4.3 rule 2). `discount` is the part of the fee
//   the item did not pay (D10: posted as a discount). An application is paid while an unreversed item of a
//   receipt that is not itself a reversal covers it; `attendances.paid` is kept equal to that rule in the same
//   transactions (for the list filters and the delete checks).
// - `receipt_counters`: the running number per resolved prefix (`R-2027-`), taken with
//   `insert … on conflict do update … returning` inside the receipt's transaction: no gaps, no duplicates.
export class Migration20261121005000Money extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table debtors (
      uuid uuid primary key,
      account_uuid uuid references accounts (uuid) on delete set null,
      participant_uuid uuid references participants (uuid) on delete set null,
      created_at timestamptz not null default now(),
      constraint debtors_one_party check (account_uuid is null or participant_uuid is null)
    )`);
    this.addSql(`create unique index debtors_account_unique on debtors (account_uuid) where account_uuid is not null`);
    this.addSql(`create unique index debtors_participant_unique on debtors (participant_uuid) where participant_uuid is not null`);

    this.addSql(`create table ledgers (
      uuid uuid primary key,
      seq bigint generated always as identity,
      debtor_uuid uuid not null references debtors (uuid) on delete restrict,
      edition_uuid uuid not null references editions (uuid) on delete restrict,
      created_at timestamptz not null default now(),
      constraint ledgers_debtor_edition_key unique (debtor_uuid, edition_uuid)
    )`);
    this.addSql(`create index ledgers_edition on ledgers (edition_uuid)`);

    this.addSql(`create table receipt_counters (
      prefix text primary key,
      value bigint not null
    )`);

    this.addSql(`create table receipts (
      uuid uuid primary key,
      seq bigint generated always as identity,
      number text not null,
      debtor_uuid uuid not null references debtors (uuid) on delete restrict,
      reverses_uuid uuid references receipts (uuid) on delete restrict,
      total int not null,
      paid_at timestamptz not null,
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now(),
      constraint receipts_number_key unique (number)
    )`);
    this.addSql(`create index receipts_debtor on receipts (debtor_uuid)`);
    this.addSql(`create index receipts_reverses on receipts (reverses_uuid) where reverses_uuid is not null`);
    this.addSql(`create index receipts_modified on receipts (modified_at)`);

    this.addSql(`create table receipt_items (
      receipt_uuid uuid not null references receipts (uuid) on delete restrict,
      position int not null,
      attendance_uuid uuid not null,
      ledger_uuid uuid not null references ledgers (uuid) on delete restrict,
      amount int not null,
      discount int not null default 0,
      text text,
      reversed_by_uuid uuid references receipts (uuid) on delete restrict,
      primary key (receipt_uuid, position),
      constraint receipt_items_receipt_attendance_key unique (receipt_uuid, attendance_uuid)
    )`);
    this.addSql(`create index receipt_items_attendance on receipt_items (attendance_uuid)`);
    this.addSql(`create index receipt_items_ledger on receipt_items (ledger_uuid)`);

    this.addSql(`create table bookings (
      uuid uuid primary key,
      seq bigint generated always as identity,
      ledger_uuid uuid not null references ledgers (uuid) on delete restrict,
      type text not null check (type in ('charge', 'cancellation', 'payment', 'discount', 'reversal', 'transfer')),
      amount int not null,
      text text,
      attendance_uuid uuid,
      receipt_uuid uuid references receipts (uuid) on delete restrict,
      booked_at timestamptz not null default now()
    )`);
    this.addSql(`create index bookings_ledger on bookings (ledger_uuid, seq)`);
    this.addSql(`create index bookings_attendance on bookings (attendance_uuid, type)`);
    this.addSql(`create index bookings_receipt on bookings (receipt_uuid) where receipt_uuid is not null`);

    // D8: bookings are never changed or deleted; a receipt's number, debtor, total and date are immutable.
    this.addSql(`create function bookings_append_only() returns trigger language plpgsql as $fn$
      begin
        raise exception 'bookings are append-only: % is not allowed', tg_op using errcode = 'P0001';
      end
    $fn$`);
    this.addSql(`create trigger bookings_append_only before update or delete on bookings
      for each row execute function bookings_append_only()`);
    this.addSql(`create function receipts_immutable() returns trigger language plpgsql as $fn$
      begin
        if tg_op = 'DELETE' or new.number is distinct from old.number or new.debtor_uuid is distinct from old.debtor_uuid
          or new.total is distinct from old.total or new.paid_at is distinct from old.paid_at
          or new.reverses_uuid is distinct from old.reverses_uuid then
          raise exception 'receipts are immutable' using errcode = 'P0001';
        end if;
        return new;
      end
    $fn$`);
    this.addSql(`create trigger receipts_immutable before update or delete on receipts
      for each row execute function receipts_immutable()`);
    this.addSql(`create function receipt_items_immutable() returns trigger language plpgsql as $fn$
      begin
        if tg_op = 'DELETE' or new.receipt_uuid is distinct from old.receipt_uuid or new.position is distinct from old.position
          or new.amount is distinct from old.amount or new.discount is distinct from old.discount
          or new.text is distinct from old.text then
          raise exception 'receipt items are immutable' using errcode = 'P0001';
        end if;
        return new;
      end
    $fn$`);
    this.addSql(`create trigger receipt_items_immutable before update or delete on receipt_items
      for each row execute function receipt_items_immutable()`);
  }
}

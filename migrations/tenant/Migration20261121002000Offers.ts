import { Migration } from '@mikro-orm/migrations';

// Offers (D5): the offer, its dates (optionally recurring), hosts (organisers) and categories.
// Runs with search_path set to the tenant's schema; references only editions(uuid), organisers(uuid)
// and categories(uuid).
export class Migration20261121002000Offers extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table offers (
      uuid uuid primary key,
      edition_uuid uuid not null references editions (uuid) on delete restrict,
      name text not null,
      alias text not null unique,
      places text[] not null default '{draft}',
      publish text not null default 'public' check (publish in ('public', 'private_link')),
      teaser text,
      description text,
      fee int check (fee >= 0),
      min_age int,
      max_age int check (max_age between 0 and 99),
      min_participants int,
      max_participants int,
      requires_application boolean not null default true,
      online_application boolean not null default true,
      application_deadline timestamptz,
      apply_text text,
      meeting_point text,
      meeting_address text,
      meeting_lat double precision,
      meeting_lng double precision,
      bring text,
      wheelchair_accessible boolean not null default false,
      media jsonb not null default '[]'::jsonb,
      comment text,
      contact text,
      application_questions jsonb not null default '[]'::jsonb,
      variant_base_uuid uuid references offers (uuid) on delete set null,
      was_published boolean not null default false,
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now()
    )`);
    this.addSql(`create index offers_edition on offers (edition_uuid)`);
    this.addSql(`create index offers_places on offers using gin (places)`);
    this.addSql(`create index offers_modified on offers (modified_at)`);
    this.addSql(`create index offers_created on offers (created_at)`);
    this.addSql(`create index offers_fee on offers (fee)`);
    this.addSql(`create index offers_name on offers (name collate "de-DE-x-icu")`);
    this.addSql(`create index offers_variant_base on offers (variant_base_uuid) where variant_base_uuid is not null`);
    this.addSql(`create table offer_dates (
      uuid uuid primary key,
      offer_uuid uuid not null references offers (uuid) on delete cascade,
      "begin" timestamptz not null,
      "end" timestamptz not null,
      recurrence text,
      position int not null default 0,
      check ("end" >= "begin")
    )`);
    this.addSql(`create index offer_dates_offer on offer_dates (offer_uuid, position)`);
    this.addSql(`create index offer_dates_range on offer_dates ("begin", "end")`);
    this.addSql(`create table offer_hosts (
      offer_uuid uuid not null references offers (uuid) on delete cascade,
      organiser_uuid uuid not null references organisers (uuid) on delete cascade,
      position int not null default 0,
      primary key (offer_uuid, organiser_uuid)
    )`);
    this.addSql(`create index offer_hosts_organiser on offer_hosts (organiser_uuid)`);
    this.addSql(`create table offer_categories (
      offer_uuid uuid not null references offers (uuid) on delete cascade,
      category_uuid uuid not null references categories (uuid) on delete cascade,
      position int not null default 0,
      primary key (offer_uuid, category_uuid)
    )`);
    this.addSql(`create index offer_categories_category on offer_categories (category_uuid)`);
  }
}

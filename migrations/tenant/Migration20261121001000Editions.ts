import { Migration } from '@mikro-orm/migrations';

// Editions (D4) and their phases. The phases live in their own table, so offers can filter by an
// edition's effective online state in SQL (see `editionOnlineSql` in src/resources/editions/service.ts):
// `exists (select 1 from edition_tasks where edition_uuid = e.uuid and type = 'show_offers' ...)`.
// Runs with search_path set to the tenant's schema.
export class Migration20261121001000Editions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table editions (
      uuid uuid primary key,
      name text not null,
      alias text not null unique,
      procedure text not null default 'firstcome' check (procedure in ('firstcome', 'lot')),
      online boolean not null default true,
      release_participant_lists boolean not null default false,
      created_at timestamptz not null default now(),
      modified_at timestamptz not null default now()
    )`);
    this.addSql(`create index editions_modified on editions (modified_at)`);
    this.addSql(`create table edition_tasks (
      uuid uuid primary key,
      edition_uuid uuid not null references editions (uuid) on delete cascade,
      position int not null,
      type text not null check (type in ('holiday', 'host_editing_stage', 'show_offers', 'application_system',
        'allocation', 'pay_days', 'publish_lists', 'custom')),
      title text,
      begin_at timestamptz,
      end_at timestamptz,
      application_system text check (application_system in ('firstcome', 'lot')),
      max_applications int check (max_applications >= 0),
      check (end_at is null or begin_at is null or end_at >= begin_at)
    )`);
    this.addSql(`create index edition_tasks_edition on edition_tasks (edition_uuid, type)`);
  }
}

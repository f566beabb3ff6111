import { Migration } from '@mikro-orm/migrations';

// The control schema: the tenant registry (D1). Runs with search_path set to `control`.
export class Migration20261121000000Registry extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table tenants (
      slug text primary key check (slug ~ '^[a-z][a-z0-9-]{1,40}$'),
      name text not null,
      schema_name text not null unique,
      settings jsonb not null default '{}'::jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create table tenant_hosts (
      host text primary key,
      tenant_slug text not null references tenants (slug) on delete cascade,
      base_path text not null default '/api',
      position int not null default 0
    )`);
    this.addSql(`create index tenant_hosts_tenant on tenant_hosts (tenant_slug)`);
  }
}

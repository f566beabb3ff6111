import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ownDatabase, slugOf, useHarness } from '../../harness/harness.js';
import { randomPort, startService } from '../../harness/processes.js';
import { tenantMigrations } from '../../../migrations/index.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { sql } from '../../../src/platform/db/sql.js';
import { migrateAll, removeTenant, syncTenants, type Progress } from '../../../src/platform/tenancy/operations.js';
import { loadTenants } from '../../../src/platform/tenancy/registry.js';
import { schemaNameFor, type Tenant } from '../../../src/platform/tenancy/tenant.js';
import { schemasBehind } from '../../../src/platform/tenancy/versions.js';

// Issue 10 (a thousand municipalities): one version check finds the schemas behind; only those are migrated,
// several at once, and reported once each in slug order. Only schemas this file created are touched.
const SLOW = 120_000;
const LAST = tenantMigrations.at(-1)!.name;

const { h } = useHarness({ tenant: false });

/** Makes a test tenant's schema one migration behind: the last migration's column and its bookkeeping row gone. */
async function setBack(schema: string) {
  const db = executorOf(h.orm);
  expect(LAST).toBe('Migration20261127120300CalledOffCharges');
  await sql`alter table ${sql.table(`${schema}.attendances`)} drop column charge_kept`.execute(db);
  await sql`alter table ${sql.table(`${schema}.offers`)} drop column called_off`.execute(db);
  await sql`delete from ${sql.table(`${schema}.mikro_orm_migrations`)} where name like ${`${LAST}%`}`.execute(db);
}

async function mine(slugs: string[]): Promise<Tenant[]> {
  return (await loadTenants(executorOf(h.orm))).filter((t) => slugs.includes(t.slug));
}

describe('the version check', () => {
  it('finds exactly the schemas behind, and migrateAll migrates each of them once, in order, with concurrency', async () => {
    const made = await Promise.all([1, 2, 3, 4, 5, 6].map(() => h.tenant()));
    const slugs = made.map((t) => t.slug);
    const db = executorOf(h.orm);
    expect([...(await schemasBehind(db, made.map((t) => t.tenant.schema)))]).toEqual([]);

    await setBack(made[1]!.tenant.schema);
    await setBack(made[4]!.tenant.schema);
    // A registered tenant whose schema does not exist yet is behind too.
    const fresh = slugOf('fresh');
    await sql`insert into control.tenants (slug, name, schema_name) values (${fresh}, 'Fresh', ${schemaNameFor(fresh)})`.execute(db);
    try {
      const tenants = await mine([...slugs, fresh]);
      const behind = await schemasBehind(db, tenants.map((t) => t.schema));
      expect([...behind].sort()).toEqual([made[1]!.tenant.schema, made[4]!.tenant.schema, schemaNameFor(fresh)].sort());

      const events: Parameters<Progress>[0][] = [];
      const { failed, migrated } = await migrateAll(h.orm, (e) => events.push(e), { tenants, concurrency: 3 });
      expect(failed).toEqual([]);
      expect(migrated.sort()).toEqual([made[1]!.slug, made[4]!.slug, fresh].sort());
      // One event per tenant, in the given (slug) order, indexes 0..n-1.
      expect(events.map((e) => e.slug)).toEqual(tenants.map((t) => t.slug));
      expect(events.map((e) => e.index)).toEqual(tenants.map((_, i) => i));
      for (const e of events) {
        if (e.slug === fresh) expect(e.applied).toEqual(tenantMigrations.map((m) => m.name));
        else if (e.slug === made[1]!.slug || e.slug === made[4]!.slug) expect(e.applied).toEqual([LAST]);
        else expect(e.applied).toEqual([]);
      }
      expect([...(await schemasBehind(db, tenants.map((t) => t.schema)))]).toEqual([]);

      const again = await migrateAll(h.orm, undefined, { tenants, concurrency: 3 });
      expect(again.migrated).toEqual([]);
    } finally {
      await removeTenant(h.orm, fresh);
    }
  }, SLOW);

  it('tenant sync writes only new or changed tenants and migrates only new schemas', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tenants-'));
    const [a, b] = [slugOf('sync'), slugOf('sync')];
    const file = (slug: string, name: string) => writeFileSync(path.join(dir, `${slug}.json`), JSON.stringify({ slug, name, hosts: [`${slug}.example`, `www.${slug}.example/pub`] }));
    try {
      file(a, 'A');
      file(b, 'B');
      const first = await syncTenants(h.orm, dir, { demo: false });
      expect(first.written.sort()).toEqual([a, b].sort());
      expect(first.tenants.map((t) => t.slug)).toEqual([a, b].sort());

      const applied: string[] = [];
      const second = await syncTenants(h.orm, dir, { demo: false, progress: (e) => e.applied.length && applied.push(e.slug) });
      expect(second.written).toEqual([]);
      expect(applied).toEqual([]);
      expect(second.tenants).toEqual(first.tenants);

      file(b, 'B renamed');
      const third = await syncTenants(h.orm, dir, { demo: false });
      expect(third.written).toEqual([b]);
      expect(third.tenants.find((t) => t.slug === b)!.name).toBe('B renamed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      for (const s of [a, b]) await removeTenant(h.orm, s).catch(() => {});
    }
  }, SLOW);
});

describe('npm start', () => {
  it('migrates nothing when nothing is behind', async () => {
    const own = await ownDatabase(`startv_${Date.now().toString(36)}`);
    const dir = mkdtempSync(path.join(tmpdir(), 'tenants-'));
    for (const slug of [slugOf('st'), slugOf('st')]) writeFileSync(path.join(dir, `${slug}.json`), JSON.stringify({ slug, name: slug, hosts: [`${slug}.example`] }));
    const env = { DATABASE_URL: own.url, REDIS_URL: '', TENANTS_DIR: dir, DEMO: '0' };
    try {
      const first = startService({ role: 'api', port: randomPort(), env });
      await first.ready();
      await first.stop();
      // A fresh database: the files' two schemas are created and migrated by the sync.
      expect(first.output().match(/"msg":"tenant migrated"/g)).toHaveLength(2);

      const second = startService({ role: 'api', port: randomPort(), env });
      await second.ready();
      await second.stop();
      expect(second.output()).toMatch(/"migrated":0,"failed":0,[^\n]*"msg":"tenant schemas checked"/);
      expect(second.output()).not.toMatch(/tenant migrated/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await own.drop();
    }
  }, SLOW);
});

import path from 'node:path';
import { expectPositionals, expectSlug, parseCommandArgs } from './args.js';
import { CommandError } from './errors.js';
import { note, out } from './output.js';
import { findTenant, withRuntime } from './runtime.js';

// `demo [<slug>]` (D1): fills a tenant (default `demo`) with a realistic programme. A tenant that does not
// exist yet is created from its file in the tenant folder (`tenants/demo.json`). Prints
// `<slug>\t<what>=<count>...` with the number of records added (0 on a second run).
export async function demoCommand(args: string[]): Promise<void> {
  const { positionals } = parseCommandArgs('demo', args, {});
  expectPositionals('demo [<slug>]', positionals, 0, 1);
  const slug = expectSlug(positionals[0] ?? 'demo');
  await withRuntime(async ({ orm, db, config }) => {
    const [{ seedDemo }, { migrateTenantSchema }, { addTenant, readTenantFiles }] = await Promise.all([
      import('../demo/seed.js'),
      import('../platform/db/orm.js'),
      import('../platform/tenancy/operations.js'),
    ]);
    let tenant = await findTenant(db, slug);
    if (!tenant) {
      const dir = path.resolve(config.tenantsDir);
      const file = readTenantFiles(dir).find((f) => f.slug === slug);
      if (!file) throw new CommandError(`no tenant "${slug}", and no file in ${dir} declares it: add it with "tenant add" first`);
      tenant = await addTenant(orm, file);
      note(`added tenant "${slug}" from ${dir}`);
    } else {
      await migrateTenantSchema(orm, tenant.schema);
    }
    const counts = await seedDemo(orm, slug);
    note(`filled tenant "${slug}" with demo data`);
    await out([slug, ...Object.entries(counts).map(([k, v]) => `${k}=${v}`)].join('\t'));
  });
}

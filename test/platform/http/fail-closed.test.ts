import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { procedure, router } from '../../../src/platform/http/trpc.js';
import { pathId } from '../../../src/platform/http/fields.js';
import { response } from '../../../src/platform/http/response.js';
import { notFound } from '../../../src/domain/errors.js';
import { createLogger } from '../../../src/platform/logging/logger.js';
import { startJobSender } from '../../../src/platform/jobs/queue.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { readTenantFiles } from '../../../src/platform/tenancy/operations.js';
import { appRouter } from '../../../src/router.js';

// Issue 22.11: paths that failed open. A condition that cannot be checked fails the write; a key whose answer
// could not be stored is released; a gauge that cannot be read is logged; an unreadable tenants folder stops.
const writes: string[] = [];
const READ_FAILS = '1b3c5d7e-0000-4000-8000-000000000001';
const READ_MISSING = '1b3c5d7e-0000-4000-8000-000000000002';
const thing = z.object({ uuid: z.string(), name: z.string() });
const probeRouter = router({
  read: procedure
    .meta({ access: 'read', openapi: { method: 'GET', path: '/probe/things/{uuid}', tags: ['probe'] } })
    .input(z.object({ uuid: pathId() })).output(response(thing))
    .query(({ input }) => {
      if (input.uuid === READ_MISSING) throw notFound('No such thing.');
      // What a statement_timeout looks like from the driver.
      if (input.uuid === READ_FAILS) throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
      return { uuid: input.uuid, name: 'x' };
    }),
  change: procedure
    .meta({ access: 'write', openapi: { method: 'PATCH', path: '/probe/things/{uuid}', tags: ['probe'] } })
    .input(z.object({ uuid: pathId(), name: z.string() })).output(response(thing))
    .mutation(({ input }) => {
      writes.push(input.uuid);
      return { uuid: input.uuid, name: input.name };
    }),
});

const lines: string[] = [];
const log = createLogger('warn', { write: (l: string) => void lines.push(l) });

describe('If-Match when the current version cannot be read', () => {
  const { t } = useHarness({ router: router({ probe: probeRouter, ...appRouter._def.record }), log });

  it('fails the write (the condition is not skipped) when the re-read fails for another reason than not found', async () => {
    const res = await t.patch(`/probe/things/${READ_FAILS}`, { name: 'neu' }, { headers: { 'if-match': 'W/"abc"' } });
    // A statement timeout is the service's "busy" answer (issue 23: 503 with Retry-After), never a write.
    expectProblem(res, 503);
    expect(writes).not.toContain(READ_FAILS);
    // Not found (or not permitted) leaves the write to its own answer, as before.
    expect((await t.patch(`/probe/things/${READ_MISSING}`, { name: 'neu' }, { headers: { 'if-match': 'W/"abc"' } })).status).toBe(200);
    expect(writes).toContain(READ_MISSING);
  });
});

describe('Idempotency-Key whose answer cannot be stored', () => {
  const { h, t } = useHarness({ log });

  it('releases the key, so a retry does the work at once instead of 409 for 24 hours', async () => {
    const db = executorOf(h.orm);
    const schema = t.tenant.schema;
    await sql`create function ${qualified(schema, 'fail_store')}() returns trigger language plpgsql as $$ begin raise exception 'disk full'; end $$`.execute(db);
    await sql`create trigger fail_store before update on ${qualified(schema, 'idempotency_keys')} for each row execute function ${qualified(schema, 'fail_store')}()`.execute(db);
    const first = await t.post('/categories', { name: 'Erste' }, { headers: { 'idempotency-key': 'key-22-11' } });
    expect(first.status).toBe(201);
    // The store failed; the key is released in the background.
    for (let i = 0; i < 50 && (await sql<{ n: number }>`select count(*)::int as n from ${qualified(schema, 'idempotency_keys')}`.execute(db)).rows[0]!.n > 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await sql`drop trigger fail_store on ${qualified(schema, 'idempotency_keys')}`.execute(db);
    const began = Date.now();
    const retry = await t.post('/categories', { name: 'Erste' }, { headers: { 'idempotency-key': 'key-22-11' } });
    expect(retry.status).toBe(201);
    expect(Date.now() - began).toBeLessThan(5000);
    expect(lines.some((l) => l.includes('could not record the answer'))).toBe(true);
  });
});

describe('/metrics when the job queue cannot be read', () => {
  // A database of its own whose pg-boss schema is dropped once the sender has started: reading the queues fails.
  let stopBoss: (() => Promise<void>) | undefined;
  const { h } = useHarness({
    log, tenant: false, ownDatabase: 'metrics_fail',
    jobs: async (orm) => {
      const s = await startJobSender(orm, createLogger('silent'));
      stopBoss = s.stop;
      return s.sender;
    },
  });
  afterAll(() => stopBoss?.());

  it('logs which gauge could not be read instead of showing NaN silently', async () => {
    await sql`drop schema pgboss cascade`.execute(executorOf(h.orm));
    lines.length = 0;
    const res = await h.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(lines.some((l) => l.includes('metrics: could not read hp_jobs')), lines.join('\n')).toBe(true);
  });
});

describe('the tenants folder', () => {
  it('missing: no tenant files; present but unreadable (not a folder): an error naming it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hp-tenants-'));
    expect(readTenantFiles(path.join(dir, 'missing'))).toEqual([]);
    const file = path.join(dir, 'not-a-folder');
    writeFileSync(file, '{}');
    expect(() => readTenantFiles(file)).toThrow(/the tenants folder cannot be read \(ENOTDIR\)/);
  });
});

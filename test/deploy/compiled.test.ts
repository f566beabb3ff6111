import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminQuery, httpRequest, randomPort, startService } from '../harness/processes.js';

// The container image's start command is the compiled JavaScript (`npm run build`: tsc to dist/), run by
// plain node without a TypeScript loader. Proven here: the compiled CLI migrates and adds a tenant, the
// compiled service starts on a fresh database and serves it. `.ci/run` builds first; a missing or stale
// dist/ is built here.
const base = new URL(inject('databaseUrl'));
const dbName = `${base.pathname.slice(1)}_dist`;
const url = new URL(base.toString());
url.pathname = `/${dbName}`;

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

beforeAll(async () => {
  const main = 'dist/src/main.js';
  if (!existsSync(main) || statSync(main).mtimeMs < Math.max(newest('src'), newest('migrations'))) {
    execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  }
  await adminQuery(base.toString(), `create database ${dbName}`);
}, 180_000);
afterAll(() => adminQuery(base.toString(), `drop database if exists ${dbName} with (force)`));

describe('compiled output (dist/)', () => {
  it('the CLI and the service run under plain node, without tsx', async () => {
    const env = { ...process.env, DATABASE_URL: url.toString(), REDIS_URL: '', LOG_LEVEL: 'warn', NODE_OPTIONS: '' };
    const migrate = spawnSync(process.execPath, ['dist/src/cli/index.js', 'migrate'], { env, encoding: 'utf8' });
    expect(migrate.status, migrate.stderr).toBe(0);
    const add = spawnSync(process.execPath, ['dist/src/cli/index.js', 'tenant', 'add', 'compiled', '--host', 'compiled.test'], { env, encoding: 'utf8' });
    expect(add.status, add.stderr).toBe(0);
    const issued = spawnSync(process.execPath, ['dist/src/cli/index.js', 'token', 'issue', 'compiled', '--role', 'admin'], { env, encoding: 'utf8' });
    expect(issued.status, issued.stderr).toBe(0);
    const token = issued.stdout.trim().split('\n').pop()!;

    const svc = startService({ role: 'all', port: randomPort(), compiled: true, env: { NODE_OPTIONS: '', DATABASE_URL: url.toString(), REDIS_URL: '', TENANTS_DIR: mkdtempSync(join(tmpdir(), 'hp-tenants-')), DATA_DIR: mkdtempSync(join(tmpdir(), 'hp-data-')) } });
    try {
      await svc.ready();
      // No TypeScript loader in the process.
      expect(svc.child.spawnargs.join(' ')).not.toContain('tsx');
      const res = await httpRequest(svc.port, 'GET', '/api/categories', { host: 'compiled.test', token });
      expect(res.status, res.text).toBe(200);
      expect((await httpRequest(svc.port, 'GET', '/readyz')).body).toMatchObject({ status: 'ready', database: 'ok', jobQueue: 'ok' });
      expect((await httpRequest(svc.port, 'GET', '/metrics')).text).toContain('hp_http_requests_total');
    } finally {
      expect(await svc.stop()).toBe(0);
    }
  });
});

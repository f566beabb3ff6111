import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runningPostmaster } from '../src/platform/db/embedded-postmaster.js';
import { embeddedDataDir } from '../src/platform/db/embedded.js';
import { at } from './harness/json.js';
import { randomPort, runCli } from './harness/processes.js';

// `npm start` as an operator runs it: migrate, apply tenants/*.json, seed the demo, serve; SIGTERM stops it.
const base = new URL(inject('databaseUrl'));
const dbName = `${base.pathname.slice(1)}_start`;
const url = new URL(base.toString());
url.pathname = `/${dbName}`;

async function admin(query: string) {
  const c = new pg.Client({ connectionString: new URL('/postgres', base).toString() });
  await c.connect();
  await c.query(query);
  await c.end();
}

function get(port: number, path: string, host = 'localhost', token?: string): Promise<{ status: number; body: unknown; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}) } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers }));
    }).on('error', reject);
  });
}

type Proc = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

/** `group`: the service leads a process group of its own, as in a terminal, so a test can signal the whole group. */
function start(args: string[], port: number, env: Record<string, string> = {}, entry = 'src/main.ts', group = false): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    env: { ...process.env, DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'info', REDIS_URL: '', DEMO: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: group,
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitFor(proc: Proc, text: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!proc.output().includes(text) && !proc.output().includes('start failed') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(proc.output()).toContain(text);
}


beforeAll(async () => {
  await admin(`create database ${dbName}`);
  await admin(`create database ${dbName}_nodemo`);
});
afterAll(async () => {
  await admin(`drop database if exists ${dbName} with (force)`);
  await admin(`drop database if exists ${dbName}_nodemo with (force)`);
});

describe('npm start', () => {
  it('with DATABASE_URL set, leaves the demo municipality out unless asked for', async () => {
    const other = new URL(url.toString());
    other.pathname = `/${dbName}_nodemo`;
    const port = randomPort();
    const proc = start([], port, { DATABASE_URL: other.toString() });
    await waitFor(proc, 'listening on');
    expect(proc.output()).toContain('demo municipality not registered');
    expect((await get(port, '/api/offers')).status).toBe(404);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
  }, 60_000);

  it('migrates, registers the demo municipality for localhost with --demo, serves it, and stops on SIGTERM', async () => {
    const port = randomPort();
    const proc = start(['--role', 'all', '--demo'], port);
    await waitFor(proc, 'listening on', 90_000);

    const doc = await get(port, '/api/openapi.json');
    expect(doc.status).toBe(200);
    expect(at(doc.body, 'openapi')).toMatch(/^3\.1/);
    const anonymous = await get(port, '/api/categories');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['content-type']).toContain('application/problem+json');
    expect((await get(port, '/api/categories', 'unknown.example')).status).toBe(404);
    expect(at((await get(port, '/readyz')).body, 'status')).toBe('ready');

    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toContain('shutting down');
  }, 120_000);

  // Issue 24: `Error: listen EADDRINUSE` with a stack was all a newcomer saw.
  it('stops with one sentence naming PORT when the port is taken, before the database starts', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const proc = start([], port);
      expect(await proc.exited).toBe(1);
      const fatal = proc.output().split('\n').find((l) => l.includes('start failed'))!;
      expect(JSON.parse(fatal).msg).toBe(`start failed: port ${port} is taken by another program: stop it, or set PORT to a free port (for example PORT=${port + 1} npm start)`);
      expect(proc.output()).not.toContain('    at ');
      expect(proc.output()).not.toContain('migrated');
    } finally {
      blocker.close();
    }
  }, 60_000);

  it('refuses an unknown role', async () => {
    const proc = start(['--role', 'bogus'], 1);
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('unknown role');
  });

  // Issue 22.13: every setting is read by one schema at start; a wrong one is one sentence naming it.
  it.each([
    ['PORT', 'eighty', 'PORT must be a whole number from 0 to 65535 (got "eighty").'],
    ['TRUST_PROXY', 'everyone', 'TRUST_PROXY must be off, on (one proxy), a number of proxies, or proxy addresses/CIDRs'],
    ['PG_POOL_SIZE', 'many', 'PG_POOL_SIZE must be a whole number from 1 to 1000 (got "many").'],
  ])('stops with exit 2 and one sentence when %s is wrong', async (name, value, sentence) => {
    const proc = start([], 1, { [name]: value });
    // A start that does not stop (the wrong value taken for something) is ended after 20 s.
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), 20_000);
    try {
      expect(await proc.exited).toBe(2);
    } finally {
      clearTimeout(timer);
    }
    const lines = proc.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(sentence);
  }, 30_000);
});

describe('npm start when the embedded database cannot start', () => {
  it('stops with one sentence of cause and exit 1, without a stack trace', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'hp-fail-'));
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const pgPort = (blocker.address() as net.AddressInfo).port;
      const proc = start([], randomPort(), { DATABASE_URL: '', DATA_DIR: path.join(home, '.data'), EMBEDDED_PG_PORT: String(pgPort) });
      expect(await proc.exited).toBe(1);
      const fatal = proc.output().split('\n').find((l) => l.includes('start failed'))!;
      // Issue 24: the sentence names the setting to change.
      expect(JSON.parse(fatal).msg).toBe(`start failed: port ${pgPort} of the embedded PostgreSQL is taken by another program: set EMBEDDED_PG_PORT to a free port (for example EMBEDDED_PG_PORT=${pgPort + 1}), or DATABASE_URL to use a PostgreSQL of your own`);
      expect(fatal).not.toContain('stack');
      expect(proc.output()).not.toContain('    at ');
      // As root the cluster was placed under /var/tmp (see below): remove it.
      const dir = embeddedDataDir(path.join(home, '.data'));
      if (dir.startsWith('/var/tmp/holiday-programme-')) rmSync(path.dirname(dir), { recursive: true, force: true });
    } finally {
      blocker.close();
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});

// Zero-config start (D1, issue 12): no DATABASE_URL, in a folder of mode 0700 (a root's home). As root the
// `postgres` OS user cannot enter it, so the cluster is placed under /var/tmp; the CLI run beside the
// service uses the running PostgreSQL instead of starting a second one.
describe('npm start with the embedded database', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'hp-home-')); // mode 0700
  const dataDir = path.join(home, 'clone', '.data');
  const pgPort = randomPort();
  let relocated: string | undefined;
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
    if (relocated?.startsWith('/var/tmp/holiday-programme-')) rmSync(relocated, { recursive: true, force: true });
  });

  it('starts in a 0700 folder, serves the demo season, and the CLI beside it connects to the running PostgreSQL', async () => {
    const port = randomPort();
    const env = { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) };
    const proc = start([], port, env);
    await waitFor(proc, 'listening on', 120_000);
    expect(proc.output()).not.toContain('EACCES');
    const line = proc.output().split('\n').find((l) => l.includes('started the embedded PostgreSQL'))!;
    const dir: string = JSON.parse(line).dir;
    if (process.getuid?.() === 0) {
      expect(dir).toMatch(/^\/var\/tmp\/holiday-programme-[0-9a-f]{12}\/pg$/);
      relocated = path.dirname(dir);
    } else {
      expect(dir).toBe(path.join(dataDir, 'pg'));
    }
    expect(runningPostmaster(dir)?.port).toBe(pgPort);

    const began = Date.now();
    const cli = start(['token', 'issue', 'demo', '--role', 'admin'], 0, env, 'src/cli/index.ts');
    expect(await cli.exited, cli.output()).toBe(0);
    const ms = Date.now() - began;
    expect(cli.output()).toContain('using the embedded PostgreSQL another process started');
    const token = cli.output().split('\n').filter(Boolean).find((l) => l.startsWith('hpt_'))!;
    expect(token).toBeTruthy();
    console.info(`[main.test] CLI beside the running service: ${ms} ms`);

    // Every list a newcomer tries next answers something.
    for (const p of ['/api/offers', '/api/editions', '/api/attendances', '/api/receipts', '/api/ledgers', '/api/debtors', '/api/bookings', '/api/accounts']) {
      const res = await get(port, p, 'localhost', token);
      expect(res.status, p).toBe(200);
      expect(at(res.body, 'length'), p).toBeGreaterThan(0);
    }
    // The server keeps running after the CLI has gone.
    expect(at((await get(port, '/readyz')).body, 'status')).toBe('ready');

    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    const deadline = Date.now() + 10_000;
    while (runningPostmaster(dir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(runningPostmaster(dir)).toBeUndefined();
  }, 180_000);
});

// Issue 24: closing the terminal sends SIGHUP; node died at once and left the embedded PostgreSQL running, owned by
// init, and the next start reused it and never stopped it.
describe('npm start and a closed terminal', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'hp-hup-'));
  chmodSync(home, 0o755);
  const dataDir = path.join(home, '.data');
  afterAll(() => {
    const dir = embeddedDataDir(dataDir);
    if (dir.startsWith('/var/tmp/holiday-programme-')) rmSync(path.dirname(dir), { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('stops on SIGHUP like on SIGTERM, and stops the embedded PostgreSQL it started', async () => {
    const port = randomPort();
    const proc = start([], port, { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(randomPort()), DEMO: '0' });
    await waitFor(proc, 'listening on', 120_000);
    const dir = embeddedDataDir(dataDir);
    expect(runningPostmaster(dir)).toBeDefined();
    proc.child.kill('SIGHUP');
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toMatch(/"signal":"SIGHUP".*"msg":"shutting down"/);
    const deadline = Date.now() + 10_000;
    while (runningPostmaster(dir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(runningPostmaster(dir)).toBeUndefined();
  }, 180_000);
});

// Ctrl-C in a terminal sends SIGINT to the whole foreground process group. The embedded PostgreSQL runs in a
// group of its own, so it is stopped by the service after the service closed its connections, not beside it
// (which cut them mid-close: two "PostgreSQL connection error" warnings, code 57P01, at every Ctrl-C). And it is
// stopped smartly (embedded-postmaster.ts stopPostmaster): pg-pool's end() resolves before each socket has
// closed, and a fast shutdown terminated the connections still closing (57P01 after traffic, about one Ctrl-C in
// three in the README walk). Three rounds (the demo municipality, as the README's walk has it), each with every connection of the pool in use just
// before.
describe('npm start and Ctrl-C', () => {
  const home = mkdtempSync(path.join(tmpdir(), 'hp-int-'));
  chmodSync(home, 0o755);
  const dataDir = path.join(home, '.data');
  // A round that fails before its Ctrl-C leaves no service (and no embedded PostgreSQL) running behind it.
  const started: Proc[] = [];
  afterAll(async () => {
    for (const proc of started) {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) continue;
      process.kill(-proc.child.pid!, 'SIGINT');
      const timer = setTimeout(() => process.kill(-proc.child.pid!, 'SIGKILL'), 20_000);
      await proc.exited;
      clearTimeout(timer);
    }
    const dir = embeddedDataDir(dataDir);
    if (dir.startsWith('/var/tmp/holiday-programme-')) rmSync(path.dirname(dir), { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  });

  it('stops the service and then its embedded PostgreSQL, with no connection cut under it, also right after traffic', async () => {
    const pgPort = String(randomPort());
    for (let round = 0; round < 3; round++) {
      const port = randomPort();
      const proc = start([], port, { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: pgPort, PUBLIC_CACHE_MS: '0' }, 'src/main.ts', true);
      started.push(proc);
      await waitFor(proc, 'listening on', 120_000);
      const dir = embeddedDataDir(dataDir);
      expect(runningPostmaster(dir)).toBeDefined();
      // Every connection of the pool (10) in use at once: the demo municipality's applications, with a token the
      // CLI issued (through the same embedded PostgreSQL, as the README has it).
      const issued = await runCli(['token', 'issue', 'demo', '--role', 'admin'], { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: pgPort });
      expect(issued.code, issued.stderr).toBe(0);
      const token = issued.stdout.trim().split('\n').at(-1)!;
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => get(port, `/api/attendances?itemsPerPage=${1 + (i % 20)}`, 'localhost', token)));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      process.kill(-proc.child.pid!, 'SIGINT');
      expect(await proc.exited).toBe(0);
      expect(proc.output()).toMatch(/"signal":"SIGINT".*"msg":"shutting down"/);
      expect(proc.output(), `round ${round}`).not.toContain('PostgreSQL connection error');
      expect(proc.output(), `round ${round}`).not.toContain('57P01');
      const deadline = Date.now() + 10_000;
      while (runningPostmaster(dir) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(runningPostmaster(dir)).toBeUndefined();
    }
  }, 300_000);
});

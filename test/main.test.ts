import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';

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

function get(port: number, path: string, host = 'localhost'): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers }));
    }).on('error', reject);
  });
}

function start(args: string[], port: number): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, DATABASE_URL: url.toString(), PORT: String(port), LOG_LEVEL: 'info', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

beforeAll(() => admin(`create database ${dbName}`));
afterAll(() => admin(`drop database if exists ${dbName} with (force)`));

describe('npm start', () => {
  it('migrates, registers the demo municipality for localhost, serves it, and stops on SIGTERM', async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const proc = start(['--role', 'all'], port);
    const deadline = Date.now() + 30_000;
    while (!proc.output().includes('listening on') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(proc.output()).toContain('listening on');

    const doc = await get(port, '/api/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1/);
    const anonymous = await get(port, '/api/categories');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['content-type']).toContain('application/problem+json');
    expect((await get(port, '/api/categories', 'unknown.example')).status).toBe(404);
    expect((await get(port, '/readyz')).body.status).toBe('ready');

    proc.child.kill('SIGTERM');
    expect(await proc.exited).toBe(0);
    expect(proc.output()).toContain('shutting down');
  });

  it('refuses an unknown role', async () => {
    const proc = start(['--role', 'bogus'], 1);
    expect(await proc.exited).toBe(2);
    expect(proc.output()).toContain('unknown role');
  });
});

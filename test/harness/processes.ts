import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import pg from 'pg';
import type { ResponseBody } from './api.js';

// Real service processes for the deployment tests: `src/main.ts` (or the compiled `dist/src/main.js`) as
// child processes, the operator CLI, a Host-aware HTTP client (node:http: fetch drops a custom Host).

export type ServiceProcess = {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
  /** Resolves when the process logged that it serves (api, all) or works (worker). */
  ready: (ms?: number) => Promise<void>;
  stop: () => Promise<number | null>;
};

export function entryArgs(compiled = false): string[] {
  return compiled ? ['dist/src/main.js'] : ['--import', 'tsx', 'src/main.ts'];
}

export function startService(opts: { role: 'api' | 'worker' | 'all'; port: number; env: Record<string, string>; compiled?: boolean; nodeArgs?: string[] }): ServiceProcess {
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...entryArgs(opts.compiled), '--role', opts.role], {
    env: { ...process.env, LOG_LEVEL: 'info', PORT: String(opts.port), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((c) => (exitCode = c));
  const ready = async (ms = 90_000) => {
    const deadline = Date.now() + ms;
    while (!/listening on|workers started/.test(out)) {
      if (exitCode !== undefined) throw new Error(`${opts.role} exited ${exitCode} before it was ready:\n${out.slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`${opts.role} not ready within ${ms} ms:\n${out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const stop = async () => {
    if (exitCode === undefined) child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(t);
    return code;
  };
  return { child, port: opts.port, output: () => out, exited, ready, stop };
}

export function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export type CliRun = { code: number | null; stdout: string; stderr: string; lines: string[] };

/** `runCli` with its output's non-empty lines (the CLI prints one record a line). */
export async function runCliLines(args: string[], env: Record<string, string>): Promise<CliRun> {
  const r = await runCli(args, env);
  return { ...r, lines: r.stdout.split('\n').filter(Boolean) };
}

export type HttpResult<T = unknown> = { status: number; headers: http.IncomingHttpHeaders; body: T; text: string };

/** A request to a service process; the body is typed as the harness's (`ResponseBody`, test/harness/api.ts). */
export function httpRequest<M extends string, P extends string>(port: number, method: M, path: P, opts: { host?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<HttpResult<ResponseBody<M, P>>> {
  return send(port, method, path, opts) as Promise<HttpResult<ResponseBody<M, P>>>;
}

function send(port: number, method: string, path: string, opts: { host?: string; token?: string; body?: unknown; headers?: Record<string, string> }): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: opts.host ?? 'localhost', ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let body: unknown;
        try { body = text ? JSON.parse(text) : undefined; } catch { body = undefined; }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
      });
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Runs `query` on the server of `databaseUrl` (its `postgres` database): create/drop throwaway databases. */
export async function adminQuery(databaseUrl: string, query: string): Promise<void> {
  const c = new pg.Client({ connectionString: new URL('/postgres', databaseUrl).toString() });
  await c.connect();
  try { await c.query(query); } finally { await c.end(); }
}

export async function queryDb<T = Record<string, unknown>>(databaseUrl: string, query: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try { return (await c.query(query, params)).rows as T[]; } finally { await c.end(); }
}

/** The TCP ports something listens on now (Linux: /proc/net/tcp and tcp6, state 0A); empty elsewhere. */
export function listeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && f[1]) ports.add(parseInt(f[1].split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

const handedOut = new Set<number>();

/**
 * A port for a service under test: below Linux's ephemeral range (32768-60999), which the suite's own outgoing
 * connections draw from (a port from inside it was once taken by one of them, EADDRINUSE); not one that a
 * program of the machine listens on (RabbitMQ's 25672 was drawn once), nor one handed out before in this process.
 */
export function randomPort(): number {
  const taken = listeningPorts();
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    if (!taken.has(port) && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** Kills a service process at once (no shutdown of its own) and waits until it is gone. */
export async function sigkill(w: ServiceProcess): Promise<void> {
  if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  await w.exited;
}

/** Polls `check` every 50 ms until it holds; returns how long that took, or fails after `timeoutMs` naming `what`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

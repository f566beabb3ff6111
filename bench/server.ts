import { spawn, type ChildProcess } from 'node:child_process';

// A benchmark server (bench/app-server.ts, bench/reference-server.ts) in its own process: it prints
// "listening <port>" once it serves.
export type Server = { name: string; child: ChildProcess; port: number };

export function spawnServer(name: string, file: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<Server> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', file], {
    env: { ...process.env, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve({ name, child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`${name} server exited (${code}) before listening: ${out}`)));
  });
}

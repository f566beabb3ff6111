import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Schema } from './api.js';

// A real HTTP receiver of webhooks in the test process (issue 14). Every request is checked with the reference
// verifier of the Standard Webhooks specification (`standardwebhooks`) against every secret it is given; the
// test decides the answer per request (a status, or `hang`: never answer).

export type Received = {
  id: string; timestamp: string; signature: string; body: string;
  /** The body parsed: an event of the feed's shape (undefined: no JSON). */
  payload: Schema<'Event'> | undefined;
  at: number;
  /** For each secret given, whether the reference verifier accepted the request under it. */
  verified: boolean[];
};

export type Receiver = {
  url: (path?: string) => string;
  port: number;
  received: Received[];
  /** Secrets to verify with (set after creating the subscription). */
  secrets: string[];
  /** The answer to the n-th request (0-based): a status or `hang`; default 204. */
  respond: (n: number, r: Received) => number | 'hang' | { status: number; body: string | Buffer; headers?: Record<string, string> };
  /** First arrivals of each webhook-id, in order. */
  ids: () => string[];
  waitFor: (count: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
};

export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const r: Receiver = {
    url: (path = '/hook') => `http://${host}:${(server.address() as AddressInfo).port}${path}`,
    port: 0,
    received: [],
    secrets: [],
    respond: () => 204,
    ids: () => [...new Set(r.received.map((x) => x.id))],
    waitFor: async (count, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (r.received.length < count) {
        if (Date.now() > deadline) throw new Error(`receiver: ${r.received.length} of ${count} requests within ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      const verified = r.secrets.map((s) => {
        try {
          new Webhook(s).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      // The service's event, as the OpenAPI document declares it (its outputs are checked in tests).
      let payload: Schema<'Event'> | undefined;
      try { payload = JSON.parse(body) as Schema<'Event'>; } catch { payload = undefined; }
      const got: Received = { id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body, payload, at: Date.now(), verified };
      const n = r.received.length;
      r.received.push(got);
      const answer = r.respond(n, got);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (typeof answer === 'number') {
        res.statusCode = answer;
        res.end();
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  r.port = (server.address() as AddressInfo).port;
  return r;
}

import express from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ANONYMOUS } from '../../../src/platform/auth/viewer.js';
import { apiHandler } from '../../../src/platform/http/api.js';
import { finalJson, FinalJson, parsedFinalJson } from '../../../src/platform/http/final-json.js';
import { finalResponse } from '../../../src/platform/http/response.js';
import { procedure, router, type TrpcContext } from '../../../src/platform/http/trpc.js';

// JSON text PostgreSQL wrote goes out as it is where output checks are off (production), through the API's real
// handler (api.ts); where they are on, it is parsed and checked first (final-json.ts, issue 10.2).
const TEXT = '[{"a":1,"b":"x"},{"a":2}]';
const item = z.object({ a: z.number(), b: z.string().optional() });

function serve(checks: boolean, text: string) {
  const appRouter = router({
    page: procedure
      .meta({ access: 'public', openapi: { method: 'GET', path: '/page' } })
      .input(z.object({})).output(finalResponse(z.array(item), checks))
      .query(() => finalJson<z.infer<typeof item>[]>(text)),
  });
  const handler = apiHandler(appRouter, { log: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} } as never, db: undefined as never });
  const app = express();
  app.use((req, res) => {
    const ctx = { tenant: { settings: { publicAccess: true } }, viewer: ANONYMOUS, requestId: 'r' } as unknown as TrpcContext;
    return handler(req, res, { buildContext: () => ctx, tenantSchema: 't', tokenId: null, withToken: false });
  });
  return http.createServer(app);
}

function get(server: http.Server): Promise<{ status: number; text: string }> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/page' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}

describe('final JSON text', () => {
  const servers: http.Server[] = [];
  const listen = async (checks: boolean, text: string) => {
    const s = serve(checks, text);
    servers.push(s);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return s;
  };
  afterAll(async () => { for (const s of servers) await new Promise((r) => s.close(r)); });

  it('is sent byte for byte where output checks are off', async () => {
    const res = await get(await listen(false, ' [ {"a":1,"b":"x"} , {"a":2} ] '));
    expect(res.status).toBe(200);
    expect(res.text).toBe(' [ {"a":1,"b":"x"} , {"a":2} ] ');
  });

  it('is parsed and checked where they are on: a wrong answer is a 500, a right one the same JSON', async () => {
    const good = await get(await listen(true, TEXT));
    expect(good.status).toBe(200);
    expect(JSON.parse(good.text)).toEqual(JSON.parse(TEXT));
    const bad = await get(await listen(true, '[{"a":"not a number"}]'));
    expect(bad.status).toBe(500);
  });

  it('stands for its value, also where something else serialises it', () => {
    expect(JSON.stringify(new FinalJson(' [1, 2] '))).toBe('[1,2]');
    expect(JSON.stringify({ page: new FinalJson('{"a":1}') })).toBe('{"page":{"a":1}}');
    expect(parsedFinalJson(new FinalJson('{"a":1}'))).toEqual({ a: 1 });
    expect(parsedFinalJson({ plain: true })).toEqual({ plain: true });
  });
});

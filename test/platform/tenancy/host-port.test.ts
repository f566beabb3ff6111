import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';

// Issue 13 item 7: a Host header with an out-of-range port or garbage after the host name answered 500
// on every API route. It is the unknown-host 404 (the header names no served host) or 400 when it is not
// a host at all, always problem+json.

const { h, t } = useHarness();

describe('malformed Host headers', () => {
  it('answers out-of-range ports and garbage with 400 or 404 problem+json, never 500', async () => {
    const hosts = [
      `${t.host}:99999`, `${t.host}:65536`, `${t.host}:0x50`, `${t.host}:-1`, `${t.host}:80:80`,
      `${t.host}:abc`, `${t.host}@evil`, `${t.host}/x`, `${t.host}\\x`, `[::1`, `[::1]:99999`, `%41`, ':80', `${t.host} x`,
    ];
    for (const host of hosts) {
      for (const [method, path] of [['GET', '/api/offers'], ['GET', '/api/categories'], ['POST', '/api/categories'], ['GET', '/api/openapi.json']] as const) {
        const res = await h.request(method, path, { host, token: t.adminToken, body: method === 'POST' ? { name: 'x' } : undefined });
        expect([400, 404], `${host} ${method} ${path}`).toContain(res.status);
        const p = expectProblem(res, res.status);
        expect(p.type).toBe(`/errors/${res.status}`);
      }
    }
  });

  it('still serves a valid port', async () => {
    expect((await h.request('GET', '/api/categories', { host: `${t.host}:65535`, token: t.adminToken })).status).toBe(200);
    expect((await h.request('GET', '/api/categories', { host: `${t.host}:1`, token: t.adminToken })).status).toBe(200);
  });
});

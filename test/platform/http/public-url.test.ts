import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, useHarness, type Harness, at } from '../../harness/harness.js';

// Issue 24 (10): `servers` in openapi.json (and the docs page's "Test Request") use the scheme and
// port the request came in on; behind a proxy trusted with TRUST_PROXY, the forwarded ones. It was always
// `https://<host><base>`: a client generated on a developer's machine started with `https://localhost/api`.
const { h, t } = useHarness({ trustProxy: true });
let untrusted: Harness;
beforeAll(async () => {
  untrusted = await startHarness({ trustProxy: false });
});
afterAll(() => untrusted.close());

const servers = async (hh: Harness, headers: Record<string, string>, host: string) =>
  at((await hh.request('GET', '/api/openapi.json', { host, headers })).body, 'servers');

describe('the address a request came in on', () => {
  it('is the request\'s own scheme, host and port', async () => {
    expect(await servers(h, {}, `${t.host}:8080`)).toEqual([{ url: `http://${t.host}:8080/api` }]);
    expect(await servers(h, {}, t.host)).toEqual([{ url: `http://${t.host}/api` }]);
  });

  it('behind a trusted proxy, the forwarded scheme and host with its port', async () => {
    expect(await servers(h, { 'x-forwarded-proto': 'https', 'x-forwarded-host': t.host }, 'internal:3000')).toEqual([{ url: `https://${t.host}/api` }]);
    expect(await servers(h, { 'x-forwarded-proto': 'https', 'x-forwarded-host': `${t.host}:8443` }, 'internal:3000')).toEqual([{ url: `https://${t.host}:8443/api` }]);
    const docs = await h.request('GET', '/api/docs', { host: 'internal:3000', headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': t.host } });
    expect(docs.text).toContain(`&#34;url&#34;:&#34;https://${t.host}/api&#34;`);
  });

  it('without TRUST_PROXY, forwarded headers are ignored', async () => {
    const u = await untrusted.tenant();
    expect(await servers(untrusted, { 'x-forwarded-proto': 'https' }, `${u.host}:8080`)).toEqual([{ url: `http://${u.host}:8080/api` }]);
  });
});

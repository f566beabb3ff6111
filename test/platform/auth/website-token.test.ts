import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { createRateLimiter } from '../../../src/platform/rate-limit/index.js';
import { create as createOffer } from '../../factories/offer.factory.js';
import { publishedOffer } from '../../resources/family-applications/helpers.js';

// D11, issue 21 item 1: the website token reads what anonymous callers read (also while publicAccess is off),
// hands in family applications, confirmations, consents and files, and nothing else (403); its rate limit is
// its own (D3's bucket for others). With the production limits (300 at 100 a minute), in memory.
const { t } = useHarness({
  tenant: { settings: { publicAccess: false } },
  rateLimiter: createRateLimiter({ log: { warn: () => {}, info: () => {} } }),
});

describe('the website token', () => {
  it('reads the public offers as anonymous callers see them, while anonymous access is off', async () => {
    const token = await t.token({ role: 'website' });
    const offer = await publishedOffer(t);
    const draft = await createOffer(t);
    expectProblem(await t.get('/offers', { token: null }), 401);
    const list = await t.get('/offers', { token });
    expect(list.status).toBe(200);
    expect(list.body.map((o) => o.uuid)).toEqual([offer.uuid]);
    const one = await t.get(`/offers/${offer.uuid}`, { token });
    expect(one.body).not.toHaveProperty('publish');
    expect(one.body).not.toHaveProperty('transitions');
    // Spec 2.3 gives token holders the questions; the website builds the families' form from them (D11).
    expect(one.body.applicationQuestions).toEqual([]);
    expect(list.body[0].applicationQuestions).toEqual([]);
    expect((await t.get(`/offers/${offer.uuid}`, { token: await t.token({ role: 'admin', access: 'read' }) })).body.applicationQuestions).toEqual([]);
    expect(one.headers['cache-control']).toBe('private, no-store');
    expectProblem(await t.get(`/offers/${draft.uuid}`, { token }), 404);
  });

  it.each([
    ['GET', '/attendances'], ['POST', '/attendances'], ['GET', '/editions'], ['GET', '/accounts'], ['GET', '/events'],
    ['POST', '/offers'], ['GET', '/webhooks'], ['GET', '/files/00000000-0000-4000-8000-000000000000'],
  ])('%s %s: 403', async (method, path) => {
    const token = await t.token({ role: 'website' });
    const p = expectProblem(await t.request(method, path, { token, body: method === 'POST' ? {} : undefined }), 403);
    expect(p.detail).toMatch(/website token/);
  });

  it('has its own rate: 1 a minute holds 3, the fourth is 429; an admin token keeps D3\'s 300', async () => {
    const token = await t.token({ role: 'website', ratePerMinute: 1 });
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await t.get('/offers', { token }));
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(seen[0]!.headers['ratelimit-policy']).toBe('"token";q=3;w=180');
    expect(seen[2]!.headers.ratelimit).toMatch(/^"token";r=0;t=(59|60)$/);
    const limited = expectProblem(seen[3]!, 429);
    expect(limited.detail).toMatch(/Rate limit exceeded/);
    expect(Number(seen[3]!.headers['retry-after'])).toBeGreaterThanOrEqual(59);
    const admin = await t.get('/offers');
    expect(admin.headers['ratelimit-policy']).toBe('"token";q=300;w=180');
  });
});

import { describe, expect, it } from 'vitest';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { PROBLEM_STATUSES, problemTitle } from '../../../src/platform/http/problem.js';
import { expectProblem, useHarness } from '../../harness/harness.js';

// Issue 24 (11): the `type` of a problem (`/errors/404`, `/validation_errors/<code>`) leads to a short page under
// the base path saying what it means and what to do; `<base>/errors` lists them all. Public, like the docs.
const { h, t } = useHarness();

describe('problem type pages', () => {
  it('lists every status and every validation rule at <base>/errors, each linking a page that answers', async () => {
    const index = await t.get('/errors', { token: null });
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toContain('text/html');
    expect(index.headers['content-security-policy']).toContain("default-src 'none'");
    const hrefs = [...index.text.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
    for (const s of PROBLEM_STATUSES) expect(hrefs).toContain(`/api/errors/${s}`);
    for (const code of Object.values(RULE_CODES)) expect(hrefs).toContain(`/api/validation_errors/${code}`);
    expect(hrefs).toContain('/api/docs');
    for (const href of hrefs.filter((x) => x.startsWith('/api/errors/') || x.startsWith('/api/validation_errors/'))) {
      const page = await h.request('GET', href, { host: t.host });
      expect(page.status, href).toBe(200);
      expect(page.text, href).toContain('What it means');
      expect(page.text, href).toContain('What to do');
    }
    const notFound = await t.get('/errors/404', { token: null });
    expect(notFound.text).toContain(`<code>/errors/404</code> ${problemTitle(404)}`);
  });

  it('serves the page of the type a real problem names, on hosts with either base path', async () => {
    const invalid = expectProblem(await t.post('/categories', {}), 422);
    expect(invalid.type).toMatch(/^\/validation_errors\/[0-9a-f-]{36}$/);
    const page = await t.get(invalid.type, { token: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain(invalid.violations![0]!.code);
    const missing = expectProblem(await t.get('/offers/3f1c2b9e-8d4a-4c5e-9f6b-1a2b3c4d5e6f'), 404);
    expect((await t.get(missing.type, { token: null })).status).toBe(200);
    const root = await h.tenant({ basePath: '/' });
    const rootPage = await root.get('/errors/401', { token: null });
    expect(rootPage.status).toBe(200);
    expect(rootPage.text).toContain('href="/errors"');
  });

  it('answers an unknown type with a 404 problem', async () => {
    expectProblem(await t.get('/errors/418', { token: null }), 404);
    expectProblem(await t.get('/errors/abc', { token: null }), 404);
    expectProblem(await t.get('/validation_errors/00000000-0000-4000-8000-000000000000', { token: null }), 404);
  });
});

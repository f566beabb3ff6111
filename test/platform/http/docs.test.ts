import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { useHarness, at, asList, asRecord } from '../../harness/harness.js';

// Issue 12: `<base>/docs`, the municipality's interactive API reference (Scalar from its npm package),
// checked in real headless Chromium (Debian's `chromium`; .ci/run installs it).
const CHROMIUM = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (!CHROMIUM) console.warn('[test] no chromium found (apt-get install chromium): the browser check of /docs is skipped');

let browser: Browser | undefined;

const { h, t } = useHarness({ tenant: { name: 'Ferienprogramm Teststadt' } });
afterAll(async () => {
  await browser?.close();
});

describe('GET <base>/docs', () => {
  it('serves the page and the bundle without a token, with a policy that keeps everything on this host', async () => {
    const page = await t.get('/docs', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.text).toContain('Ferienprogramm Teststadt: API reference');
    expect(page.text).toContain(`${t.basePath === '/' ? '' : t.basePath}/docs/scalar.js`);
    expect(page.text).not.toMatch(/https:\/\/(cdn|fonts)\./);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    const bundle = await t.get('/docs/scalar.js', { token: null });
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toContain('javascript');
    expect(bundle.text.length).toBeGreaterThan(1_000_000);
  });

  it.skipIf(!CHROMIUM)('renders in headless Chromium and lists every operation of the document', async () => {
    const doc = (await t.get('/openapi.json', { token: null })).body;
    const operations = Object.values(asRecord(at(doc, 'paths'))).flatMap((ops) => Object.values(asRecord(ops)));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', `--host-resolver-rules=MAP ${t.host} 127.0.0.1`],
    });
    const page = await browser.newPage();
    const problems: string[] = [];
    // A failed resource is reported by its response below, with its URL.
    page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text()); });
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`); });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('requestfailed', (r) => problems.push(`${r.url()} ${r.failure()?.errorText}`));
    const base = t.basePath === '/' ? '' : t.basePath;
    const res = await page.goto(`http://${t.host}:${h.port}${base}/docs`, { waitUntil: 'networkidle' });
    expect(res?.status()).toBe(200);
    // Locators run in Playwright's own isolated world: no string is evaluated in the page, whose policy
    // (script-src 'self', no 'unsafe-eval') newer Chromium builds enforce on page.waitForFunction too.
    await page.getByText('Holiday Programme Service API').first().waitFor({ timeout: 30_000 });
    await page.screenshot({ path: '.data/docs.png' }); // for a human look at CI's artefacts
    // Every operation's summary is on the page (sidebar and sections).
    const text = await page.locator('body').innerText();
    // The error bodies are documented with their examples.
    expect(text).toContain('application/problem+json');
    const missing = operations.map((o) => String(at(o, 'summary'))).filter((s) => !text.includes(s));
    expect(missing).toEqual([]);
    expect(problems.filter((p) => !/favicon/.test(p))).toEqual([]);
  }, 120_000);

  // Issue 24 (9, 11): the first "Test Request" of GET /offers sent the examples of from, until and modifiedSince,
  // answered [] and spent one of the five anonymous requests of the hour. Now nothing is sent unless ticked, and the
  // reference links the pages of the problem types.
  it.skipIf(!CHROMIUM)('sends the first "Test Request" of GET /offers without query parameters, and links the problem types', async () => {
    const offer = (await t.post('/offers', { name: 'Zirkusschule', edition: (await t.post('/editions', { name: 'Sommer' })).body.uuid })).body;
    expect((await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' })).status).toBe(200);
    browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', `--host-resolver-rules=MAP ${t.host} 127.0.0.1`] });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const sent: string[] = [];
    page.on('request', (r) => { if (new URL(r.url()).pathname === `${t.basePath}/offers`) sent.push(r.url()); });
    await page.goto(`http://${t.host}:${h.port}${t.basePath}/docs`, { waitUntil: 'networkidle' });
    await page.getByText('Holiday Programme Service API').first().waitFor({ timeout: 30_000 });
    const errors = page.locator(`a[href="http://${t.host}:${h.port}${t.basePath}/errors"]`).first();
    await errors.waitFor({ timeout: 30_000 });
    const operation = page.locator(`[id$="/tag/offers/GET/offers"]`);
    await operation.scrollIntoViewIfNeeded();
    await operation.getByRole('button', { name: /Test Request/i }).first().click();
    const answer = page.waitForResponse((r) => new URL(r.url()).pathname === `${t.basePath}/offers`, { timeout: 30_000 });
    await page.getByRole('button', { name: /^Send/ }).first().click();
    const res = await answer;
    expect(sent).toEqual([`http://${t.host}:${h.port}${t.basePath}/offers`]);
    expect(res.status()).toBe(200);
    expect(asList(await res.json()).map((o) => at(o, 'name'))).toEqual(['Zirkusschule']);
    await page.close();
  }, 120_000);
});

import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnySchema } from 'ajv';
import formats from 'ajv-formats';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { walkSeason } from '../../clients/typescript/example/season.js';
import { applyAsFamily } from '../../clients/typescript/example/family.js';
import { executorOf } from '../../src/platform/db/orm.js';
import { qualified, sql } from '../../src/platform/db/sql.js';
import { useHarness, at, maybe, asRecord } from '../harness/harness.js';

// Issue 12: the generated client (clients/typescript: openapi-typescript types, openapi-fetch) walks a whole
// season against a running service, and every answer it gets matches the OpenAPI document: status listed
// for the operation, body valid against its schema, problem+json for errors.
let doc: Record<string, unknown>;

type Seen = { method: string; path: string; status: number; contentType: string; body: unknown };
const seen: Seen[] = [];

/** openapi-fetch's fetch over node:http, so the municipality is chosen by its Host (built-in fetch drops it). */
function hostFetch(port: number) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const payload = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = { host: url.host };
    request.headers.forEach((v, k) => { headers[k] = v; });
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: request.method, path: url.pathname + url.search, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const contentType = String(res.headers['content-type'] ?? '');
          seen.push({ method: request.method.toLowerCase(), path: url.pathname, status: res.statusCode ?? 0, contentType, body: text ? JSON.parse(text) : undefined });
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out.set(k, v);
          resolve(new Response(res.statusCode === 204 ? null : text, { status: res.statusCode, headers: out }));
        });
      });
      req.on('error', reject);
      if (payload) req.write(payload);
      req.end();
    });
  };
}

const { h, t } = useHarness({ tenant: { name: 'Ferienprogramm Clientstadt' } });
beforeAll(async () => {
  doc = asRecord((await t.get('/openapi.json', { token: null })).body);
});

describe('the TypeScript client (openapi-typescript + openapi-fetch)', () => {
  it('is generated from the current document (npm run client:generate)', async () => {
    const run = promisify(execFile);
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/client.ts', '--stdout'], { maxBuffer: 64 * 1024 * 1024 });
    expect(stdout === readFileSync('clients/typescript/schema.d.ts', 'utf8'), 'clients/typescript/schema.d.ts is stale: run npm run client:generate').toBe(true);
  }, 60_000);

  it('walks a season, and every answer matches the document', async () => {
    const base = t.basePath === '/' ? '' : t.basePath;
    const lines: string[] = [];
    const summary = await walkSeason({
      baseUrl: `http://${t.host}:${h.port}${base}`,
      token: t.adminToken,
      fetch: hostFetch(h.port),
      settle: () => h.jobs.drain(),
      log: (l) => lines.push(l),
    });
    expect(summary).toMatchObject({ confirmed: 2, waitlisted: 1 });
    expect(summary.bookingsTotal).toBe(summary.bookings);
    expect(summary.receipt).toMatch(/^R-\d{4}-/);
    expect(summary.reversal).toMatch(/^R-\d{4}-/);
    expect(summary.ledgerBalance).toBe(3000); // both fees due again after the reversal
    expect(lines.join('\n')).toContain('lot drawn with seed 42: 2 confirmed, 1 waitlisted');

    // Issue 21: the municipality's website applies for a family with its own token (clients/typescript/example/family.ts).
    const edition = (await t.post('/editions', { name: 'Sommerferien Client', procedure: 'firstcome' })).body;
    const offer = (await t.post('/offers', {
      name: 'Kanutour', edition: edition.uuid, maxParticipants: 5, minAge: 6, maxAge: 14, dates: [{ begin: '2027-07-20T10:00:00+02:00', end: '2027-07-20T16:00:00+02:00' }],
      applicationQuestions: [{ label: 'Kann schwimmen', type: 'yn', required: true }, { label: 'Impfpass', type: 'file', required: true }],
    })).body;
    expect((await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' })).status).toBe(200);
    const website = await t.token({ role: 'website' });
    const family = await applyAsFamily({
      baseUrl: `http://${t.host}:${h.port}${base}`, token: website, fetch: hostFetch(h.port), log: (l) => lines.push(l),
      confirmationToken: async (email) => {
        const mail = await sql<{ body: string }>`select body from ${qualified(t.tenant.schema, 'outbox')} where recipient = ${email} and kind = 'family_confirmation'`.execute(executorOf(h.orm));
        return /bestaetigen\/([1-9A-HJ-NP-Za-km-z]+)/.exec(mail.rows[0]?.body ?? '')?.[1] ?? null;
      },
    });
    expect(family.refusedWish).toBe('participants[0].wishes[1].offer');
    expect(family.applied.map((a) => a.status)).toEqual(['email_unconfirmed']);
    expect(family.confirmed.map((a) => a.status)).toEqual(['confirmed']);
    expect(family.confirmed[0]?.files.map((f) => f.uuid)).toEqual([family.fileUuid]);

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    // CommonJS default export seen through NodeNext: the function is the module's `default`.
    const addFormats = ((formats as unknown as { default?: typeof formats }).default ?? formats) as unknown as (a: Ajv2020) => void;
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', components: doc.components });
    const templates = Object.keys(asRecord(doc.paths)).map((p) => ({ p, re: new RegExp(`^${base}${p.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
    expect(seen.length).toBeGreaterThan(20);
    for (const r of seen) {
      const template = templates.filter((x) => x.re.test(r.path)).sort((a, b) => b.p.split('{').length - a.p.split('{').length).at(-1);
      const what = `${r.method.toUpperCase()} ${r.path} ${r.status}`;
      expect(template, what).toBeDefined();
      const response = maybe(at(doc, 'paths', template!.p, r.method), 'responses', String(r.status));
      expect(response, `${what}: status not in the document`).toBeDefined();
      if (r.status === 204) continue;
      const [mediaType, media] = Object.entries(asRecord(at(response, 'content')))[0];
      expect(r.contentType.split(';')[0], what).toBe(mediaType);
      const schema: AnySchema = JSON.parse(JSON.stringify(at(media, 'schema')).replaceAll('"#/components/', '"doc#/components/'));
      const valid = ajv.validate(schema, r.body);
      expect(valid, `${what}: ${ajv.errorsText(ajv.errors)}`).toBe(true);
    }
  }, 120_000);
});

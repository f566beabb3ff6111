import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { RULE_CODES } from '../../../src/domain/errors.js';
import { appRouter } from '../../../src/router.js';
import { edition, offer } from '../../resources/offers/helpers.js';

// Issue 22.3, D12: a body field the resource does not have is refused (422, `<field>: unknown field` per field),
// on every body; the resource's read-only fields are ignored, so a client may send back what it read.
const { t } = useHarness();

describe('unknown body fields', () => {
  it('refuses a misspelt field and changes nothing, also when a known field comes with it', async () => {
    const e = await edition(t);
    const o = await offer(t, { name: 'Kanu', edition: e.uuid, fee: 1500 });
    const res = await t.patch(`/offers/${o.uuid}`, { fee: 1900, maxParticipant: 10 });
    const p = expectProblem(res, 422);
    expect(p.detail).toBe('maxParticipant: unknown field');
    expect(p.violations).toEqual([{ propertyPath: 'maxParticipant', message: 'unknown field', code: RULE_CODES.unknownField }]);
    expect((await t.get(`/offers/${o.uuid}`)).body.fee).toBe(1500);
  });

  it('names the unknown field instead of calling a body with only unknown fields empty', async () => {
    const e = await edition(t);
    const o = await offer(t, { name: 'Kanu', edition: e.uuid });
    const p = expectProblem(await t.patch(`/offers/${o.uuid}`, { maxParticipant: 10 }), 422);
    expect(p.detail).toBe('maxParticipant: unknown field');
  });

  it('gives one line per unknown field, nested ones by their path, with the other problems of the body', async () => {
    const e = await edition(t);
    const res = await t.post('/offers', {
      name: 'Zelten', edition: e.uuid, fee: -1, colour: 'grün', dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00', begn: 'x' }],
    });
    const p = expectProblem(res, 422);
    expect(p.detail.split('\n').sort()).toEqual(['colour: unknown field', 'dates[0].begn: unknown field', 'fee: This value should be 0 or more.']);
  });

  it('ignores the read-only fields of the resource, so what was read can be sent back', async () => {
    const e = await edition(t);
    const o = await offer(t, { name: 'Kanu', edition: e.uuid, fee: 1500, dates: [{ begin: '2027-07-01T10:00:00+02:00', end: '2027-07-01T12:00:00+02:00' }] });
    const { uuid, createdAt, modifiedAt, transitions, status, attendances, fullyBooked, url, dates } = o;
    const res = await t.patch(`/offers/${o.uuid}`, { uuid, createdAt, modifiedAt, transitions, status, attendances, fullyBooked, url, dates, fee: 1700 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.fee).toBe(1700);
    expect(res.body.status).toEqual(o.status);
    // An application's read-only fields likewise (its `status` is set only by transitions).
    const org = (await t.post('/categories', { name: 'Wasser', uuid: '00000000-0000-4000-8000-000000000000', createdAt: 'yesterday' }));
    expect(org.status, org.text).toBe(201);
    expect(org.body.uuid).not.toBe('00000000-0000-4000-8000-000000000000');
  });

  it('keeps PATCH null-clearing and the empty-body rule as they were', async () => {
    const e = await edition(t);
    const o = await offer(t, { name: 'Kanu', edition: e.uuid, teaser: 'Paddeln' });
    const cleared = await t.patch(`/offers/${o.uuid}`, { teaser: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.teaser).toBeUndefined();
    expect(expectProblem(await t.patch(`/offers/${o.uuid}`, {}), 422).detail).toMatch(/empty/);
    // Editions: an empty body returns the edition unchanged; an unknown field is still refused.
    expect((await t.patch(`/editions/${e.uuid}`, {})).status).toBe(200);
    expect(expectProblem(await t.patch(`/editions/${e.uuid}`, { procedur: 'lot' }), 422).detail).toBe('procedur: unknown field');
  });

  it('applies to every operation with a body, by construction', async () => {
    const procs = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: { access?: string; roles?: string[]; rawBody?: unknown; openapi?: { method: string; path: string } } } }>;
    const bodyOps = Object.values(procs).map((p) => p._def.meta!).filter((m) => m.openapi && ['POST', 'PATCH', 'PUT'].includes(m.openapi.method) && m.access === 'write' && !m.rawBody); // a file body (POST /files) is no JSON object
    expect(bodyOps.length).toBeGreaterThan(20);
    const fakeId = '4c1f5a2e-9b7d-4e3a-8f21-6d0c9e8b7a65';
    // The family channel's procedures are the website token's (D11); every other one an admin's.
    const website = await t.token({ role: 'website', name: 'Website' });
    for (const m of bodyOps) {
      const path = m.openapi!.path.replace(/\{[^}]+\}/g, fakeId);
      const token = m.roles?.includes('website') ? website : undefined;
      const res = await t.request(m.openapi!.method, path, { body: { zzNoSuchField: 1 }, token });
      const p = expectProblem(res, 422);
      expect(p.detail.split('\n'), `${m.openapi!.method} ${m.openapi!.path}`).toContain('zzNoSuchField: unknown field');
    }
  });

  it('keeps the order of checks: access first (403), a malformed path identifier stays 404', async () => {
    const e = await edition(t);
    const o = await offer(t, { name: 'Kanu', edition: e.uuid });
    const read = await t.token({ access: 'read' });
    expectProblem(await t.patch(`/offers/${o.uuid}`, { maxParticipant: 10 }, { token: read }), 403);
    expectProblem(await t.patch('/offers/not-an-id', { maxParticipant: 10 }), 404);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Actor } from '../../../src/platform/auth/tokens.js';
import { buildOpenApiDocument } from '../../../src/platform/http/openapi-document.js';
import { checkedOutput, finalResponse, outputChecks, response } from '../../../src/platform/http/response.js';
import { procedure, router } from '../../../src/platform/http/trpc.js';
import { listOffersInput, offerListResponse, offerOut } from '../../../src/resources/offers/schema.js';
import { listOffers } from '../../../src/resources/offers/list.js';
import { useHarness } from '../../harness/harness.js';
import { viewerOfActor } from '../../../src/platform/auth/viewer.js';
import { parsedFinalJson } from '../../../src/platform/http/final-json.js';
import type { OfferOut } from '../../../src/resources/offers/schema.js';
import { category, edition, offer, organiser, transition } from './helpers.js';

// The offer list is answered without a run-time output check in production (finalResponse, issue 10.2): its
// service must write the answer in final form. Proved here against the checked schema, for every kind of
// field (nulls, nested nulls, recurrences, variants, questions), anonymous and with a token.
const admin: Actor = { tokenId: '00000000-0000-4000-8000-0000000000a1', name: 'Test', role: 'admin', access: 'read', ownerKind: 'service', organiserIds: [] };
const checked = response(z.array(offerOut));

/** Where a value holds null or undefined (the null rule of spec 1.6 allows none in an offer). */
function nullPaths(value: unknown, path = '$'): string[] {
  if (value === null || value === undefined) return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => nullPaths(v, `${path}[${i}]`));
  if (typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
  return [];
}

const { h, t } = useHarness();
beforeAll(async () => {
  const ed = await edition(t);
  const host = await organiser(t, 'Jugendzentrum');
  const cat = await category(t, 'Natur');
  const bare = await offer(t, { name: 'Nur ein Name', edition: ed.uuid });
  const full = await offer(t, {
    name: 'Alles ausgefüllt', edition: ed.uuid, hosts: [host.uuid], categories: [cat.uuid], teaser: 'Kurz', description: 'Lang',
    fee: 1200, minAge: 6, maxAge: 12, minParticipants: 2, maxParticipants: 10, meetingPoint: 'Rathaus', meetingAddress: 'Markt 1',
    meetingLat: 52.1, meetingLng: 13.2, bring: 'Mütze', comment: 'intern', contact: 'Frau Meier', applyText: 'Bitte anmelden',
    applicationDeadline: '2027-06-30T23:59:00+02:00',
    applicationQuestions: [{ label: 'Schwimmer?', type: 'yn', required: true }],
    dates: [
      { begin: '2027-07-05T09:00:00+02:00', end: '2027-07-05T12:00:00+02:00' },
      { begin: '2027-07-07T15:00:00+02:00', end: '2027-07-07T17:00:00+02:00', recurrence: 'FREQ=WEEKLY;COUNT=3' },
    ],
  });
  for (const o of [bare, full]) await transition(t, o.uuid, 'publish');
  const variant = await t.post(`/offers/${full.uuid}/variant`);
  expect(variant.status, variant.text).toBe(201);
});

describe('the offer list in final form', () => {
  it('anonymous and token lists hold no null anywhere and are unchanged by the checked schema', async () => {
    for (const actor of [null, admin]) {
      // The anonymous page is JSON text PostgreSQL wrote (final-json.ts): checked as what it stands for.
      const out = parsedFinalJson(await listOffers({ ...t.context(), viewer: viewerOfActor(actor) }, listOffersInput.parse({}))) as OfferOut[];
      expect(out.length).toBe(actor ? 3 : 2);
      expect(nullPaths(out)).toEqual([]);
      // The checked schema drops unknown keys and applies the null rule: nothing to drop, nothing to change.
      expect(checked.parse(out)).toStrictEqual(out);
      const full = out.find((o) => o.name === 'Alles ausgefüllt')!;
      expect(full.dates).toHaveLength(2);
      expect(full.dates[0]).not.toHaveProperty('recurrence');
      expect(full.dates[1].recurrence).toBe('FREQ=WEEKLY;COUNT=3');
      if (actor) expect(full.variants).toHaveLength(1);
      else expect(full).not.toHaveProperty('variants');
    }
  });

  it('the list over HTTP is what the service wrote, checked by the schema here (tests run with output checks on)', async () => {
    expect(outputChecks()).toBe(true);
    const res = await t.get('/offers', { token: null });
    expect(res.status).toBe(200);
    expect(checked.parse(res.body)).toStrictEqual(res.body);
    // The handler's explicit output check of the list (api.ts -> checkedOutput) refuses a wrong answer.
    expect(() => checkedOutput(offerListResponse, [{ uuid: 1 }])).toThrow();
  });
});

describe('finalResponse', () => {
  const schema = z.object({ a: z.number(), b: z.string().optional() });

  // The API's handler checks an answer in final form explicitly (api.ts -> checkedOutput); tRPC does not.
  it('checks and applies the null rule where output checks are on', () => {
    const on = finalResponse(schema, true);
    expect(checkedOutput(on, { a: 1, b: null })).toEqual({ a: 1 });
    expect(() => checkedOutput(on, { a: 'x' })).toThrow(/Output validation failed/);
  });

  it('passes the answer unchanged where they are off (production)', () => {
    const off = finalResponse(schema, false);
    const value = { a: 'not checked' };
    expect(checkedOutput(off, value)).toBe(value);
    // Neither does tRPC's own output check (the declared output is unknown to it).
    expect(off.parse(value)).toBe(value);
  });

  it('gives the same OpenAPI document checked or not', () => {
    const doc = (checks: boolean) => buildOpenApiDocument(router({
      list: procedure.meta({ access: 'public', openapi: { method: 'GET', path: '/things', tags: ['offers'] } })
        .input(z.object({})).output(finalResponse(z.array(offerOut), checks)).query(() => []),
    }), 'http://localhost/api');
    expect(JSON.stringify(doc(false))).toBe(JSON.stringify(doc(true)));
    expect(JSON.stringify(doc(false))).toContain('"#/components/schemas/Offer"');
  });

  it('is on by default, off with NODE_ENV=production, and OUTPUT_CHECKS decides over both', () => {
    expect(outputChecks({})).toBe(true);
    expect(outputChecks({ NODE_ENV: 'test' })).toBe(true);
    expect(outputChecks({ NODE_ENV: 'production' })).toBe(false);
    expect(outputChecks({ NODE_ENV: 'production', OUTPUT_CHECKS: 'on' })).toBe(true);
    expect(outputChecks({ OUTPUT_CHECKS: 'off' })).toBe(false);
  });
});

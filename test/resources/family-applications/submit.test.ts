import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { familyBody, mails, publishedOffer, submit, submitOk, websiteToken } from './helpers.js';

// D11, issue 21 item 2: one request per family through the website token.
const { h, t } = useHarness();

describe('POST /family-applications', () => {
  it('201 with the applications made, email_unconfirmed, createdByAdmin false; the confirmation mail queued', async () => {
    const token = await websiteToken(t);
    const a = await publishedOffer(t);
    const b = await publishedOffer(t);
    const body = familyBody([[a.uuid, b.uuid], [a.uuid]]);
    const apps = await submitOk(t, token, body);
    expect(apps).toHaveLength(3);
    for (const x of apps) {
      expect(x).toMatchObject({ status: 'email_unconfirmed', createdByAdmin: false, consentOutstanding: false, heldBack: false, piiMasked: true });
    }
    expect(apps.map((x) => x.offer.uuid)).toEqual([a.uuid, b.uuid, a.uuid]);
    const m = await mails(h, t, 'family_confirmation');
    expect(m.at(-1)?.recipient).toBe(body.account.email);
    expect(m.at(-1)?.body).toMatch(new RegExp(`https://${t.host}/anmeldung/bestaetigen/[1-9A-HJ-NP-Za-km-z]{30,}`));
  });
});

describe('smoke', () => {
  it('website token reads offers', async () => {
    const token = await websiteToken(t);
    expect((await t.get('/offers', { token })).status).toBe(200);
    expectProblem(await submit(t, t.adminToken, familyBody([])), 403);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness, type Schema } from '../harness/harness.js';
import { DEMO_MEDIA_BASE, seedDemo, seedDemoIfEmpty, type DemoCounts } from '../../src/demo/seed.js';
import { AUTUMN_EDITION, AUTUMN_OFFERS, AUTUMN_SEED, FAMILIES, OFFERS } from '../../src/demo/content.js';
import { createLogger } from '../../src/platform/logging/logger.js';

// `cli demo` / first `npm start` (D1): the demo programme is made through the services and then read back
// over HTTP exactly as a website would read it.
let counts: DemoCounts;

const namesIn = (state: string) => OFFERS.filter((o) => (o.state ?? 'published') === state).map((o) => o.name);
const CHILDREN = FAMILIES.reduce((n, f) => n + f.children.length, 0);

const { h, t } = useHarness();
beforeAll(async () => {
  counts = await seedDemo(h.orm, t.slug);
});

describe('seedDemo', () => {
  it('adds the whole programme once', () => {
    expect(counts).toEqual({
      categories: 8, organisers: 10, editions: 2, offers: 63, accounts: 15, participants: CHILDREN,
      attendances: 142, allocations: 1, receipts: 6, reversals: 1, website: 7,
    });
    expect(CHILDREN).toBe(27);
  });

  it('adds nothing on a second run, and the tenant keeps its 63 offers', async () => {
    expect(await seedDemo(h.orm, t.slug)).toEqual({
      categories: 0, organisers: 0, editions: 0, offers: 0, accounts: 0, participants: 0, attendances: 0, allocations: 0, receipts: 0, reversals: 0, website: 0,
    });
    const all = await t.get('/offers?itemsPerPage=200');
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(63);
  });

  it('shows anonymous callers the published public offers only, cancelled ones marked', async () => {
    const res = await t.get('/offers?itemsPerPage=200', { token: null });
    expect(res.status, res.text).toBe(200);
    expect(res.body.length).toBeLessThanOrEqual(200);
    const names = res.body.map((o) => o.name).sort();
    expect(names).toEqual([...namesIn('published'), ...namesIn('cancelled'), ...AUTUMN_OFFERS.map((o) => o.name)].sort());
    expect(res.body).toHaveLength(49);
    for (const hidden of [...namesIn('draft'), ...namesIn('completed'), ...namesIn('reviewed'), ...namesIn('private_link')]) {
      expect(names).not.toContain(hidden);
    }
    const cancelled = res.body.filter((o) => o.status.includes('cancelled'));
    expect(cancelled.map((o) => o.name).sort()).toEqual(namesIn('cancelled').sort());
    for (const o of cancelled) expect(o.status).toEqual(['published', 'cancelled']);
    for (const o of res.body) {
      expect(o.status).toContain('published');
      expect(o.publish).toBeUndefined();
      if (o.edition.name === AUTUMN_EDITION.name) continue;
      expect(o.edition.name).toBe('Ferienprogramm 2027');
      expect(o.hosts.length).toBeGreaterThan(0);
      expect(o.categories.length).toBeGreaterThan(0);
      expect(o.dates.length).toBeGreaterThan(0);
      expect(o.minAge).toBeGreaterThanOrEqual(6);
      expect(o.maxAge).toBeLessThanOrEqual(14);
      expect(o.description).toContain('**Das erwartet dich:**');
      expect(o.meetingAddress).toMatch(/12345 Musterstadt$/);
      for (const m of o.media) expect(m.startsWith(DEMO_MEDIA_BASE)).toBe(true);
      for (const d of o.dates) expect(d.begin).toMatch(/^2027-0[78]-\d\dT\d\d:\d\d:00\+02:00$/);
    }
    for (const o of res.body) expect(Number.isInteger(o.fee)).toBe(true);
    expect(res.body.filter((o) => o.fee === 0).length).toBeGreaterThan(5);
    expect(res.body.filter((o) => o.fee! >= 1000).length).toBeGreaterThan(5);
  });

  it('has one-off, multi-day and recurring dates', async () => {
    const res = await t.get('/offers?itemsPerPage=200', { token: null });
    const byName = new Map(res.body.map((o) => [o.name, o]));
    const recurring = res.body.filter((o) => o.dates.some((d) => d.recurrence));
    expect(recurring.length).toBeGreaterThanOrEqual(5);
    expect(recurring.map((o) => o.dates[0].recurrence)).toContain('FREQ=WEEKLY;COUNT=4');
    expect(byName.get('Trommelworkshop')!.dates).toEqual([
      expect.objectContaining({ begin: '2027-07-09T10:00:00+02:00', end: '2027-07-09T12:00:00+02:00' }),
    ]);
    expect(byName.get('Theater-Ferienwoche')!.dates).toHaveLength(5);
    expect(byName.get('Zeltlager am Mustersee')!.dates).toEqual([
      expect.objectContaining({ begin: '2027-07-12T10:00:00+02:00', end: '2027-07-15T14:00:00+02:00' }),
    ]);
    // The weekly cooking class (5 Thursdays from 8 July) is found on its fourth Thursday.
    const day = await t.get('/offers?from=2027-07-29&until=2027-07-29&itemsPerPage=200', { token: null });
    expect(day.body.map((o) => o.name)).toContain('Kinderkochkurs: gesund und lecker');
  });

  it('pages the public list: 30 by default', async () => {
    const first = await t.get('/offers', { token: null });
    expect(first.body).toHaveLength(30);
    const second = await t.get('/offers?page=2', { token: null });
    expect(second.body).toHaveLength(19);
  });

  it('keeps drafts, reviewed, completed and private-link offers for token holders', async () => {
    const res = await t.get('/offers?itemsPerPage=200');
    const stateOf = (o: Schema<'Offer'>) => (o.publish === 'private_link' ? 'private_link' : o.status.includes('cancelled') ? 'cancelled' : o.status[0]);
    const tally: Record<string, number> = {};
    for (const o of res.body) tally[stateOf(o)] = (tally[stateOf(o)] ?? 0) + 1;
    expect(tally).toEqual({ published: 47, cancelled: 2, private_link: 3, draft: 5, completed: 3, reviewed: 3 });
    expect(res.body.filter((o) => o.applicationQuestions!.length > 0).length).toBeGreaterThan(0);
  });

  it('makes an online edition with its phases, organisers, categories and families', async () => {
    const editions = await t.get('/editions');
    expect(editions.body).toHaveLength(2);
    const e = editions.body.find((x) => x.alias === 'ferienprogramm-2027');
    expect(e).toMatchObject({ name: 'Ferienprogramm 2027', alias: 'ferienprogramm-2027', online: true });
    expect(e!.tasks.map((x) => x.type).sort()).toEqual(
      ['application_system', 'holiday', 'host_editing_stage', 'pay_days', 'publish_lists', 'show_offers'].sort());
    expect((await t.get('/organisers?itemsPerPage=200')).body).toHaveLength(10);
    expect((await t.get('/categories?itemsPerPage=200')).body).toHaveLength(8);
    const accounts = await t.get('/accounts?itemsPerPage=200');
    expect(accounts.body).toHaveLength(15 + 4); // and the families who applied through the website
    expect(accounts.body.every((a) => a.participants.length >= 1 && a.participants.length <= 3)).toBe(true);
    expect((await t.get('/participants?itemsPerPage=200')).body).toHaveLength(27 + 5);
  });
});

describe('the season', () => {
  const list = async <P extends string>(path: P) => {
    const res = await t.get(path);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };

  it('has summer applications in every state a client can reach', async () => {
    const all = (await list('/attendances?itemsPerPage=200')).filter((a) => a.createdByAdmin);
    expect(all).toHaveLength(142);
    const summer = all.filter((a) => a.edition.name === 'Ferienprogramm 2027');
    expect(new Set(summer.map((a) => a.status))).toEqual(new Set(
      ['confirmed', 'waitlisted', 'waiting', 'rejected', 'withdrawn', 'unfulfilled', 'participated', 'noshow']));
    expect(all.every((a) => a.heldBack === false)).toBe(true);
    expect(all.some((a) => a.paid)).toBe(true);
    expect(all.some((a) => a.payable && !a.paid)).toBe(true);
    // The offers count their applications per state (D10 `attendances`).
    const offers = await list('/offers?itemsPerPage=200');
    expect(offers.some((o) => o.attendances!.confirmed > 0 && o.attendances!.waitlisted >= 0)).toBe(true);
  });

  it('has families who applied through the website: decided, one unconfirmed, one waiting for consent, a file answer', async () => {
    const all = (await list('/attendances?itemsPerPage=200')).filter((a) => !a.createdByAdmin);
    expect(all).toHaveLength(7);
    const byState = (s: string) => all.filter((a) => a.status === s);
    expect(byState('email_unconfirmed').map((a) => a.account!.name)).toEqual(['Sandra Fischer', 'Sandra Fischer']);
    expect(byState('consents_outstanding')).toEqual([expect.objectContaining({ consentOutstanding: true, participant: expect.objectContaining({ name: 'Tim Hoffmann' }) })]);
    expect(all.filter((a) => ['confirmed', 'waitlisted'].includes(a.status))).toHaveLength(4);
    const withFile = all.filter((a) => a.files.length > 0);
    expect(withFile).toHaveLength(1);
    const file = await t.request('GET', `/files/${withFile[0].files[0].uuid}`);
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/pdf');
    const tokens = await import('../../src/platform/auth/tokens.js');
    const { executorOf } = await import('../../src/platform/db/orm.js');
    expect((await tokens.listTokens(executorOf(h.orm), t.tenant.schema)).filter((x) => x.role === 'website').map((x) => x.name)).toEqual(['Website Musterstadt (Demo)']);
  });

  it('drew the autumn edition by lot with a recorded seed and committed it', async () => {
    const editions = await list('/editions');
    const autumn = editions.find((e) => e.alias === AUTUMN_EDITION.alias);
    expect(autumn!.procedure).toBe('lot');
    expect(autumn!.allocations).toHaveLength(1);
    const run = autumn!.allocations[0];
    expect(run).toMatchObject({ seed: AUTUMN_SEED });
    expect(run.finishedAt).toBeTruthy();
    expect(run.confirmed).toBe(15); // 6 + 5 + 4 places
    expect(run.waitlisted).toBeGreaterThan(0);
    const lot = (await list('/attendances?itemsPerPage=200')).filter((a) => a.edition.name === AUTUMN_EDITION.name);
    expect(lot.filter((a) => a.status === 'confirmed')).toHaveLength(15);
    expect(lot.every((a) => a.decisionReason)).toBe(true);
  });

  it('has receipts (one with a discount), a reversal, and every money list answers', async () => {
    const receipts = await list('/receipts?itemsPerPage=200');
    expect(receipts).toHaveLength(7);
    const reversal = receipts.find((r) => r.reverses);
    expect(reversal!.total).toBeLessThan(0);
    expect(receipts.find((r) => r.uuid === reversal!.reverses!.uuid)!.reversedBy!.uuid).toBe(reversal!.uuid);
    expect(receipts.some((r) => r.items.some((i) => i.text === 'Geschwisterermäßigung 50 %'))).toBe(true);
    expect((await list('/debtors?itemsPerPage=200')).length).toBeGreaterThan(0);
    expect((await list('/ledgers?itemsPerPage=200')).length).toBeGreaterThan(0);
    expect((await list('/bookings?itemsPerPage=200')).length).toBeGreaterThan(0);
  });
});

describe('seedDemoIfEmpty', () => {
  it('leaves a tenant with offers alone', async () => {
    const other = await h.tenant();
    const ed = await other.post('/editions', { name: 'Eigenes Programm' });
    expect((await other.post('/offers', { name: 'Eigenes Angebot', edition: ed.body.uuid })).status).toBe(201);
    await seedDemoIfEmpty(h.orm, other.slug, createLogger('silent'));
    const offers = await other.get('/offers?itemsPerPage=200');
    expect(offers.body.map((o) => o.name)).toEqual(['Eigenes Angebot']);
    expect((await other.get('/categories')).body).toEqual([]);
  });
});

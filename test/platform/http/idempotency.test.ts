import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { createAccount, createEdition, createOffer, createParticipant, getOk, ledgerOfAccount } from '../../resources/money/helpers.js';

// Issue 13 item 8: Idempotency-Key on every POST. A retried request with the same key and body (same token,
// same tenant) returns the first answer without doing the work twice; the same key with another body is 422;
// a concurrent duplicate waits for the first answer; keys are kept 24 hours per token.

const { h, t } = useHarness();

const withKey = (key: string, extra: Record<string, string> = {}) => ({ headers: { 'idempotency-key': key, ...extra } });

async function setup() {
  const account = await createAccount(t);
  const edition = (await createEdition(t, { procedure: 'firstcome' })).uuid;
  const offer = await createOffer(t, { edition, fee: 900, maxParticipants: null });
  const participant = await createParticipant(t, { account: account.uuid });
  return { account, offer, participant };
}

describe('Idempotency-Key on POST', () => {
  it('a retried POST /attendances returns the first answer and creates one application', async () => {
    const { offer, participant, account } = await setup();
    const key = randomUUID();
    const body = { offer: offer.uuid, participant: participant.uuid, status: 'confirmed' };
    const first = await t.post('/attendances', body, withKey(key));
    expect(first.status, first.text).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await t.post('/attendances', body, withKey(key));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.text).toBe(first.text);
    // Done once: one application, one charge.
    expect(await getOk(t, `/attendances?participant=${participant.uuid}`)).toHaveLength(1);
    expect((await ledgerOfAccount(t, account.uuid)).balance).toBe(900);
    const bookings = await getOk(t, `/bookings?attendance=${first.body.uuid}`);
    expect(bookings).toHaveLength(1);
  });

  it('a retried POST /receipts returns the first receipt and pays once', async () => {
    const { offer, participant, account } = await setup();
    const a = (await t.post('/attendances', { offer: offer.uuid, participant: participant.uuid, status: 'confirmed' })).body;
    const key = randomUUID();
    const body = { items: [{ attendance: a.uuid }] };
    const first = await t.post('/receipts', body, withKey(key));
    expect(first.status, first.text).toBe(201);
    const again = await t.post('/receipts', body, withKey(key));
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const receipts = await getOk(t, `/receipts?account=${account.uuid}`);
    expect(receipts.map((r) => r.number)).toEqual([first.body.number]);
    expect((await ledgerOfAccount(t, account.uuid)).balance).toBe(0);
    // Without the key a second receipt is refused as usual (already paid): the key was what made it safe.
    expectProblem(await t.post('/receipts', body), 422);
  });

  it('concurrent duplicates wait for the first answer: all get it, the work is done once', async () => {
    const { offer, participant } = await setup();
    const key = randomUUID();
    const body = { offer: offer.uuid, participant: participant.uuid };
    const results = await Promise.all(Array.from({ length: 4 }, () => t.post('/attendances', body, withKey(key))));
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(3);
    expect(await getOk(t, `/attendances?participant=${participant.uuid}`)).toHaveLength(1);
  });

  it('refuses the same key with another body (422) or path, and a malformed key (400)', async () => {
    const { offer, participant } = await setup();
    const key = randomUUID();
    expect((await t.post('/attendances', { offer: offer.uuid, participant: participant.uuid }, withKey(key))).status).toBe(201);
    const other = await t.post('/attendances', { offer: offer.uuid, participant: participant.uuid, status: 'waitlisted' }, withKey(key));
    const p = expectProblem(other, 422);
    expect(p.type).toBe('/errors/422');
    expect(p.detail).toMatch(/^Idempotency-Key: /);
    expectProblem(await t.post('/categories', { name: 'X' }, withKey(key)), 422);
    expect((await getOk(t, `/attendances?participant=${participant.uuid}`))[0].status).not.toBe('waitlisted');
    for (const bad of ['a'.repeat(256), 'mit leerzeichen']) {
      const res = await t.post('/categories', { name: 'Y' }, { headers: { 'idempotency-key': bad } });
      const q = expectProblem(res, 400);
      expect(q.detail).toMatch(/^Idempotency-Key: /);
    }
  });

  it('keeps keys per token and tenant, replays errors too, and forgets keys after 24 hours', async () => {
    const key = randomUUID();
    const first = await t.post('/categories', { name: 'Schwimmen' }, withKey(key));
    expect(first.status).toBe(201);
    // Another token of the same tenant has its own keys: the same key makes a new record.
    const other = await t.token();
    const second = await t.post('/categories', { name: 'Schwimmen' }, { token: other, ...withKey(key) });
    expect(second.status).toBe(201);
    expect(second.body.uuid).not.toBe(first.body.uuid);
    // Another tenant, too.
    const u = await h.tenant();
    expect((await u.post('/categories', { name: 'Schwimmen' }, withKey(key))).headers['idempotent-replayed']).toBeUndefined();

    // An error answer is the first answer too: replayed for the same body.
    const errKey = randomUUID();
    const errBody = { offer: randomUUID(), participant: randomUUID() };
    const bad = await t.post('/attendances', errBody, withKey(errKey));
    expectProblem(bad, 422);
    const badAgain = await t.post('/attendances', errBody, withKey(errKey));
    expectProblem(badAgain, 422);
    expect(badAgain.text).toBe(bad.text);
    expect(badAgain.headers['content-type']).toBe('application/problem+json');
    expect(badAgain.headers['idempotent-replayed']).toBe('true');

    // After 24 hours the key is forgotten.
    await sql`update ${qualified(t.tenant.schema, 'idempotency_keys')} set created_at = now() - interval '25 hours' where key = ${key}`.execute(executorOf(h.orm));
    const later = await t.post('/categories', { name: 'Tauchen' }, withKey(key));
    expect(later.status).toBe(201);
    expect(later.body.name).toBe('Tauchen');
    expect(later.headers['idempotent-replayed']).toBeUndefined();
  });

  it('ignores the header on other methods and without a token', async () => {
    const key = randomUUID();
    const c = (await t.post('/categories', { name: 'Laufen' })).body;
    expect((await t.patch(`/categories/${c.uuid}`, { name: 'Rennen' }, withKey(key))).status).toBe(200);
    expect((await t.patch(`/categories/${c.uuid}`, { name: 'Gehen' }, withKey(key))).body.name).toBe('Gehen');
    expectProblem(await t.post('/categories', { name: 'Anonym' }, { token: null, ...withKey(key) }), 401);
  });
});

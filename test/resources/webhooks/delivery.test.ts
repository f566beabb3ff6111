import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { useHarness, expectProblem, type TestTenant, type Schema } from '../../harness/harness.js';
import { startReceiver, type Receiver } from '../../harness/webhook-receiver.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { readEvents, recordEvent } from '../../../src/platform/events/events.js';
import { newUuid } from '../../../src/platform/http/ids.js';
import { deliverWebhooks, type DeliverOptions } from '../../../src/resources/webhooks/delivery.js';
import { purgeDeliveries } from '../../../src/platform/webhooks/purge.js';
import { createAccount, createEdition, createOffer, createParticipant } from '../money/helpers.js';

// Issue 14: delivery of events to webhooks, through the delivery use case (the `webhook-deliver` job's work) and
// real HTTP receivers in this process that check every request with the Standard Webhooks reference verifier.
// test/jobs/webhooks.test.ts runs the same through real pg-boss and worker processes.
// Events become visible once every older writing transaction of the database cluster has ended: on a machine
// shared with other suites that can take a while, so these tests wait longer than the default.
vi.setConfig({ testTimeout: 120_000 });
const receivers: Receiver[] = [];
const FAST = { baseMs: 30, capMs: 200, disableAfterMs: 24 * 3_600_000 };

beforeAll(() => {
  process.env.WEBHOOK_ALLOW_HOSTS = '127.0.0.1,localhost';
});
const { h } = useHarness({ tenant: false });
afterAll(async () => {
  delete process.env.WEBHOOK_ALLOW_HOSTS;
  for (const r of receivers) await r.close();
});

async function receiver(host?: string): Promise<Receiver> {
  const r = await startReceiver(host);
  receivers.push(r);
  return r;
}

/** Records events in one transaction (as a change of the municipality would); returns their uuids. */
async function record(t: TestTenant, n: number, type: 'offer.published' | 'receipt.created' = 'offer.published'): Promise<string[]> {
  return executorOf(h.orm).transaction().execute(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(type === 'offer.published'
        ? await recordEvent(t.context(), tx, 'offer.published', { offer: newUuid(), edition: newUuid(), status: ['published'] })
        : await recordEvent(t.context(), tx, 'receipt.created', { receipt: newUuid(), debtor: newUuid(), total: 100 * i, attendances: [] }));
    }
    return ids;
  });
}

/** Waits until the tenant's feed shows `n` events (another session's open transaction may hold it a moment). */
async function visible(t: TestTenant, n: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await readEvents(executorOf(h.orm), t.tenant.schema, { after: null, limit: n })).events.length < n) {
    if (Date.now() > deadline) throw new Error('events not visible in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs the delivery job's work until `done` (events of other test files' transactions may hold the feed a moment). */
async function deliverUntil(t: TestTenant, done: () => boolean, opts: DeliverOptions = {}, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('not delivered in time');
    await deliverWebhooks(t.context(), { retry: FAST, ...opts });
    if (!done()) await new Promise((r) => setTimeout(r, 20));
  }
}

async function subscribe(t: TestTenant, r: Receiver, body: Record<string, unknown> = {}): Promise<{ uuid: string; secret: string }> {
  const res = await t.post('/webhooks', { url: r.url(), ...body });
  expect(res.status, res.text).toBe(201);
  r.secrets = [res.body.secret];
  return res.body;
}

const row = async (t: TestTenant, uuid: string) =>
  (await sql<Record<string, unknown>>`select * from ${qualified(t.tenant.schema, 'webhooks')} where uuid = ${uuid}::uuid`.execute(executorOf(h.orm))).rows[0];

describe('webhook delivery', () => {
  it('writes the delivery job with an event only while the municipality has an enabled webhook', async () => {
    const t = await h.tenant();
    const pending = () => h.jobs.pending().filter((j) => j.name === 'webhook-deliver' && j.data.tenant === t.slug).length;
    await record(t, 1);
    expect(pending()).toBe(0);
    const r = await receiver();
    const w = await subscribe(t, r, { enabled: false });
    await record(t, 1);
    expect(pending()).toBe(0);
    await t.patch(`/webhooks/${w.uuid}`, { enabled: true });
    const before = pending();
    await record(t, 3);
    expect(pending()).toBeGreaterThan(0);
    expect(pending()).toBeLessThanOrEqual(Math.max(before, 1)); // one queued per municipality, however many events
  });

  it('an application made in one statement (the rush path) records attendance.created and wakes the delivery', async () => {
    const t = await h.tenant();
    const r = await receiver();
    await subscribe(t, r, { events: ['attendance.created'] });
    const account = await createAccount(t);
    const edition = (await createEdition(t, { procedure: 'firstcome' })).uuid;
    const offer = await createOffer(t, { edition, fee: 500, maxParticipants: 1 });
    const participant = await createParticipant(t, { account: account.uuid });
    const queued = () => h.jobs.pending().filter((j) => j.name === 'webhook-deliver' && j.data.tenant === t.slug).length;
    await h.jobs.drain(); // the jobs of the setup's own events
    expect(queued()).toBe(0);
    const made = await t.post('/attendances', { offer: offer.uuid, participant: participant.uuid });
    expect(made.status, made.text).toBe(201);
    expect(queued()).toBe(1);
    await deliverUntil(t, () => r.received.length >= 1);
    expect(r.received[0]!.verified[0]).toBe(true);
    expect(r.received[0]!.payload).toMatchObject({ type: 'attendance.created', data: {
      attendance: made.body.uuid, offer: offer.uuid, edition, participant: participant.uuid, account: account.uuid,
      status: 'confirmed', heldBack: false,
    } });
  });

  it('POSTs each event once, in order, signed (Standard Webhooks), with the event feed\'s envelope', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    const ids = await record(t, 5);
    await deliverUntil(t, () => r.received.length >= 5);
    await deliverWebhooks(t.context(), { retry: FAST });
    expect(r.received.map((x) => x.id)).toEqual(ids);
    expect(r.received.every((x) => x.verified[0])).toBe(true);
    const first = r.received[0]!;
    expect(first.payload).toMatchObject({ id: ids[0], type: 'offer.published', data: { status: ['published'] } });
    expect(first.payload!.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(Math.abs(Number(first.timestamp) - Date.now() / 1000)).toBeLessThan(60);
    const deliveries = (await t.get(`/webhooks/${w.uuid}/deliveries`)).body;
    expect(deliveries).toHaveLength(5);
    expect(deliveries.map((d) => d.event).reverse()).toEqual(ids);
    expect(deliveries[0]).toMatchObject({ state: 'succeeded', responseStatus: 204, attempt: 1, redelivery: false, eventType: 'offer.published' });
    expect(deliveries[0].latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('a receiver that fails for a while and then recovers gets every event, in order, the same webhook-id on retries', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    r.respond = (n) => (n < 4 ? 503 : 200);
    const ids = await record(t, 3);
    await deliverUntil(t, () => r.ids().length >= 3 && r.received.length >= 7);
    expect(r.received.map((x) => x.id)).toEqual([ids[0], ids[0], ids[0], ids[0], ids[0], ids[1], ids[2]]);
    expect(r.received.every((x) => x.verified[0])).toBe(true);
    // Each retry is signed anew (its own timestamp), the body is the same bytes.
    expect(new Set(r.received.slice(0, 5).map((x) => x.body)).size).toBe(1);
    const deliveries = (await t.get(`/webhooks/${w.uuid}/deliveries?itemsPerPage=200`)).body.reverse();
    expect(deliveries.map((d) => [d.attempt, d.state, d.responseStatus])).toEqual([
      [1, 'failed', 503], [2, 'failed', 503], [3, 'failed', 503], [4, 'failed', 503], [5, 'succeeded', 200], [1, 'succeeded', 200], [1, 'succeeded', 200],
    ]);
    expect(deliveries[0].error).toBe('HTTP 503');
    const after = await t.get(`/webhooks/${w.uuid}`);
    expect(after.body.failingSince).toBeUndefined();
    expect(after.body.enabled).toBe(true);
  });

  it('the next event waits while the head event is retried (backoff), and the subscription shows since when it fails', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    r.respond = () => 500;
    await record(t, 2);
    await deliverUntil(t, () => r.received.length >= 1, { retry: { baseMs: 60_000, capMs: 60_000, disableAfterMs: 24 * 3_600_000 } });
    await deliverWebhooks(t.context(), { retry: FAST });
    expect(r.received).toHaveLength(1); // the retry is a minute away; the second event waits behind it
    const shown = (await t.get(`/webhooks/${w.uuid}`)).body;
    expect(shown.failingSince).toBeDefined();
    expect((await row(t, w.uuid)).attempts).toBe(1);
  });

  it('a receiver that hangs: the attempt ends after 5 seconds and counts as failed', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    r.respond = () => 'hang';
    await record(t, 1);
    await visible(t, 1);
    const started = Date.now();
    await deliverUntil(t, () => r.received.length >= 1, { retry: { baseMs: 60_000, capMs: 60_000, disableAfterMs: 24 * 3_600_000 } });
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(4_900);
    expect(took).toBeLessThan(15_000);
    const [d] = (await t.get(`/webhooks/${w.uuid}/deliveries`)).body;
    expect(d).toMatchObject({ state: 'failed', error: 'no answer within 5 seconds' });
    expect(d.responseStatus).toBeUndefined();
  });

  it('other subscriptions deliver meanwhile: a hanging receiver holds up only its own subscription', async () => {
    const t = await h.tenant();
    const slow = await receiver();
    const fast = await receiver();
    await subscribe(t, slow);
    await subscribe(t, fast);
    slow.respond = () => 'hang';
    const ids = await record(t, 20);
    await visible(t, 20);
    const run = deliverWebhooks(t.context(), { retry: { baseMs: 60_000, capMs: 60_000, disableAfterMs: 24 * 3_600_000 }, timeoutMs: 3_000 });
    await fast.waitFor(20, 2_500); // all of them while the slow one still waits for its first answer
    expect(fast.received.map((x) => x.id)).toEqual(ids);
    expect(slow.received).toHaveLength(1);
    await run;
    expect(fast.received).toHaveLength(20);
  });

  it('reads only the event types subscribed to', async () => {
    const t = await h.tenant();
    const r = await receiver();
    await subscribe(t, r, { events: ['receipt.created'] });
    await record(t, 2, 'offer.published');
    const receipts = await record(t, 2, 'receipt.created');
    await deliverUntil(t, () => r.received.length >= 2);
    await deliverWebhooks(t.context(), { retry: FAST });
    expect(r.received.map((x) => x.id)).toEqual(receipts);
  });

  it('refuses at delivery a host that now resolves to a private address (DNS checked again, nothing sent)', async () => {
    const t = await h.tenant();
    const r = await receiver();
    // Subscribed while the operator allowed the host; at delivery it is not allowed any more, and localhost
    // resolves to a loopback address (as a host whose DNS record was changed to one would).
    const w = await subscribe(t, r, { url: r.url().replace('127.0.0.1', 'localhost').replace('http:', 'https:') });
    await record(t, 1);
    const deadline = Date.now() + 60_000;
    let deliveries: Schema<'WebhookDelivery'>[] = [];
    while (deliveries.length === 0 && Date.now() < deadline) {
      await deliverWebhooks(t.context(), { retry: FAST, allow: new Set() });
      deliveries = (await t.get(`/webhooks/${w.uuid}/deliveries`)).body;
    }
    expect(deliveries[0]).toMatchObject({ state: 'failed', error: 'refused: its host resolves to a private, loopback or link-local address' });
    expect(r.received).toHaveLength(0);
  });

  it('after a rotation, signs with the new and the previous secret, each accepted by the reference verifier', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    const rotated = (await t.post(`/webhooks/${w.uuid}/rotate-secret`)).body;
    r.secrets = [w.secret, rotated.secret];
    await record(t, 1);
    await deliverUntil(t, () => r.received.length >= 1);
    expect(r.received[0]!.verified).toEqual([true, true]);
    expect(r.received[0]!.signature.split(' ')).toHaveLength(2);
    // Once the previous secret's day is over, only the new one signs.
    await sql`update ${qualified(t.tenant.schema, 'webhooks')} set previous_secrets = (select jsonb_agg(jsonb_set(p, '{until}', to_jsonb(now() - interval '1 second'))) from jsonb_array_elements(previous_secrets) p) where uuid = ${w.uuid}::uuid`.execute(executorOf(h.orm));
    await record(t, 1);
    await deliverUntil(t, () => r.received.length >= 2);
    expect(r.received[1]!.verified).toEqual([false, true]);
    expect((await t.get(`/webhooks/${w.uuid}`)).body.previousSecretValidUntil).toBeUndefined();
  });

  // Issue 22.12: the first rotation's previous secret was announced valid for 24 hours; a second rotation kept
  // only its own previous secret, so the first stopped verifying at once.
  it('a second rotation within the day keeps every previous secret that is still announced as valid', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    const first = (await t.post(`/webhooks/${w.uuid}/rotate-secret`)).body;
    const second = (await t.post(`/webhooks/${w.uuid}/rotate-secret`)).body;
    expect(second.previousSecretValidUntil! >= first.previousSecretValidUntil!).toBe(true);
    r.secrets = [w.secret, first.secret, second.secret];
    await record(t, 1);
    await deliverUntil(t, () => r.received.length >= 1);
    expect(r.received[0]!.verified).toEqual([true, true, true]);
    expect(r.received[0]!.signature.split(' ')).toHaveLength(3);
  });

  it('a redirect is a failed attempt (not followed); a 2xx with a large body is read only up to 64 KiB', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    r.respond = (n) => (n === 0 ? { status: 302, body: '', headers: { location: 'http://169.254.169.254/' } } : { status: 200, body: Buffer.alloc(2 * 1024 * 1024, 120) });
    await record(t, 1);
    await deliverUntil(t, () => r.received.length >= 2);
    await new Promise((res) => setTimeout(res, 100));
    const deliveries = (await t.get(`/webhooks/${w.uuid}/deliveries`)).body.reverse();
    expect(deliveries.map((d) => [d.state, d.responseStatus, d.error])).toEqual([['failed', 302, 'redirect (302) not followed'], ['succeeded', 200, undefined]]);
  });

  it('after 24 hours of failures: disabled, the admin e-mailed (contactEmail), nothing more sent', async () => {
    const t = await h.tenant({ settings: { contactEmail: 'it@musterstadt.example', mailFrom: 'Ferienprogramm <fp@musterstadt.example>' } });
    const r = await receiver();
    const w = await subscribe(t, r);
    r.respond = () => 500;
    await record(t, 2);
    // A slow retry here: with the fast one a busy machine may already retry within this run, and the attempt that
    // finds the streak 24 hours old would then never come.
    await deliverUntil(t, () => r.received.length >= 1, { retry: { baseMs: 60_000, capMs: 60_000, disableAfterMs: 24 * 3_600_000 } });
    // The streak began 24 hours ago (the hours in between are what the retry rule's unit test covers).
    await sql`update ${qualified(t.tenant.schema, 'webhooks')} set failing_since = now() - interval '24 hours', next_attempt_at = now()
      where uuid = ${w.uuid}::uuid`.execute(executorOf(h.orm));
    await deliverUntil(t, () => r.received.length >= 2);
    const shown = (await t.get(`/webhooks/${w.uuid}`)).body;
    expect(shown).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect(shown.disabledAt).toBeDefined();
    const mails = (await sql<{ recipient: string; subject: string; body: string; kind: string }>`select recipient, subject, body, kind from ${qualified(t.tenant.schema, 'outbox')}`.execute(executorOf(h.orm))).rows;
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ recipient: 'it@musterstadt.example', kind: 'webhook_disabled' });
    expect(mails[0].body).toContain(w.uuid);
    expect(mails[0].body).not.toContain(w.secret.slice(6));
    await deliverWebhooks(t.context(), { retry: FAST });
    expect(r.received).toHaveLength(2);
    // Switched on again by the admin: the waiting events go out, in order.
    r.respond = () => 200;
    expect((await t.patch(`/webhooks/${w.uuid}`, { enabled: true })).body.failingSince).toBeUndefined();
    await deliverUntil(t, () => r.ids().length >= 2);
  });

  it('redelivers a delivery\'s event on request (202, tried once, same webhook-id); 409 while disabled', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    const [id] = await record(t, 1);
    await deliverUntil(t, () => r.received.length >= 1);
    const [first] = (await t.get(`/webhooks/${w.uuid}/deliveries`)).body;
    const asked = await t.post(`/webhooks/${w.uuid}/deliveries/${first.uuid}/redeliver`);
    expect(asked.status).toBe(202);
    expect(asked.body).toMatchObject({ state: 'pending', redelivery: true, attempt: 2, event: id });
    await deliverUntil(t, () => r.received.length >= 2);
    expect(r.received.map((x) => x.id)).toEqual([id, id]);
    expect(r.received[1]!.verified).toEqual([true]);
    const list = (await t.get(`/webhooks/${w.uuid}/deliveries`)).body;
    expect(list.find((d) => d.uuid === asked.body.uuid)).toMatchObject({ state: 'succeeded', responseStatus: 204, redelivery: true });
    await t.patch(`/webhooks/${w.uuid}`, { enabled: false });
    const p = expectProblem(await t.post(`/webhooks/${w.uuid}/deliveries/${first.uuid}/redeliver`), 409);
    expect(p.detail).toMatch(/disabled/);
  });

  it('keeps delivery attempts 30 days, like the events (the daily retention job)', async () => {
    const t = await h.tenant();
    const r = await receiver();
    const w = await subscribe(t, r);
    await record(t, 2);
    await deliverUntil(t, () => r.received.length >= 2);
    const deliveries = qualified(t.tenant.schema, 'webhook_deliveries');
    await sql`update ${deliveries} set created_at = now() - interval '31 days' where uuid = (select uuid from ${deliveries} order by created_at limit 1)`.execute(executorOf(h.orm));
    expect(await purgeDeliveries(executorOf(h.orm), t.tenant.schema)).toBe(1);
    expect((await t.get(`/webhooks/${w.uuid}/deliveries`)).body).toHaveLength(1);
  });
});

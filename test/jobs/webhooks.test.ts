import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useHarness, type TestTenant } from '../harness/harness.js';
import { sigkill, startService, queryDb, until, type ServiceProcess } from '../harness/processes.js';
import { startReceiver, type Receiver } from '../harness/webhook-receiver.js';
import { executorOf } from '../../src/platform/db/orm.js';
import { recordEvent } from '../../src/platform/events/events.js';
import { newUuid } from '../../src/platform/http/ids.js';
import { startJobSender } from '../../src/platform/jobs/queue.js';
import { createLogger } from '../../src/platform/logging/logger.js';
import { create as createOffer } from '../factories/offer.factory.js';

// Issue 14: webhook delivery through real pg-boss and real worker processes (`src/main.ts --role worker`), to a
// real receiver in this process that checks every request with the Standard Webhooks reference verifier. An
// event's job is written in the event's own transaction (recordEvents); the worker delivers it.
// 1. a receiver that fails for a while and then recovers: every event, in order, the same webhook-id on retries;
// 2. a worker killed with SIGKILL while a request is in flight: another worker carries on; nothing lost, nothing
//    out of order; only the event in flight and those accepted but not yet recorded are sent again (same webhook-id).

let stopSender: () => Promise<void>;
const workers: ServiceProcess[] = [];
const receivers: Receiver[] = [];
const tenantsDir = mkdtempSync(path.join(tmpdir(), 'hp-no-tenants-'));

beforeAll(() => {
  process.env.WEBHOOK_ALLOW_HOSTS = '127.0.0.1';
});
afterAll(() => {
  delete process.env.WEBHOOK_ALLOW_HOSTS;
});
const { h, own } = useHarness({
  ownDatabase: 'webhooks',
  jobs: async (orm) => {
    const s = await startJobSender(orm, createLogger('silent'));
    stopSender = s.stop;
    return s.sender;
  },
  tenant: false,
});
afterAll(async () => {
  for (const w of workers) await sigkill(w);
  for (const r of receivers) await r.close();
  await stopSender?.();
});

function worker(): ServiceProcess {
  const w = startService({
    role: 'worker', port: 0,
    env: {
      DATABASE_URL: own.url, TENANTS_DIR: tenantsDir, LOG_LEVEL: 'info', REDIS_URL: '',
      WEBHOOK_ALLOW_HOSTS: '127.0.0.1', WEBHOOK_RETRY_BASE_SECONDS: '0.3', WEBHOOK_LEASE_SECONDS: '3', JOB_HEARTBEAT_SECONDS: '10',
    },
  });
  workers.push(w);
  return w;
}

async function subscribe(t: TestTenant): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  const res = await t.post('/webhooks', { url: r.url() });
  expect(res.status, res.text).toBe(201);
  r.secrets = [res.body.secret];
  return r;
}

/** Events recorded one transaction each, like changes of the municipality; each writes the delivery job too. */
async function record(t: TestTenant, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(await executorOf(h.orm).transaction().execute((tx) =>
      recordEvent(t.context(), tx, 'offer.published', { offer: newUuid(), edition: newUuid(), status: ['published'] })));
  }
  return ids;
}

describe('webhooks through pg-boss and worker processes', () => {
  it('a receiver that fails for a while and recovers: every event once accepted, in order, the same webhook-id on retries', async () => {
    const t = await h.tenant();
    const r = await subscribe(t);
    r.respond = (n) => (n < 5 ? 500 : 204);
    const w = worker();
    await w.ready();
    const ids = await record(t, 12);
    await until('every event accepted', () => r.ids().length >= 12 && r.received.length >= 16, 60_000);
    expect(r.ids()).toEqual(ids);
    expect(r.received.every((x) => x.verified[0])).toBe(true);
    // The first event was refused five times and accepted the sixth time; the others once each.
    expect(r.received.slice(0, 6).map((x) => x.id)).toEqual(Array(6).fill(ids[0]));
    expect(r.received.slice(6).map((x) => x.id)).toEqual(ids.slice(1));
    console.log(`[webhooks] recovered after 5 failures; ${r.received.length} requests for ${ids.length} events`);
    await sigkill(w);
  }, 120_000);

  it('a change through the API (an offer published) reaches the receiver, signed, with the event feed\'s envelope', async () => {
    const t = await h.tenant();
    const r = await subscribe(t);
    const w = worker();
    await w.ready();
    const offer = await createOffer(t);
    const answered = await t.post(`/offers/${offer.uuid}/transition`, { transition: 'publish' });
    expect(answered.status, answered.text).toBe(200);
    await until('the event arrives', () => r.received.some((x) => x.payload?.type === 'offer.published'), 60_000);
    const got = r.received.find((x) => x.payload?.type === 'offer.published')!;
    expect(got.verified).toEqual([true]);
    expect(got.payload!.data).toMatchObject({ offer: offer.uuid, status: expect.arrayContaining(['published']) });
    const feed = await t.get('/events?types=offer.published');
    expect(feed.body.events.map((e) => e.id)).toContain(got.id);
    expect(JSON.parse(got.body)).toEqual(feed.body.events.find((e) => e.id === got.id));
    await sigkill(w);
  }, 120_000);

  it('a worker killed with SIGKILL mid-delivery: another carries on; nothing lost, in order, only the unrecorded ones sent again', async () => {
    const t = await h.tenant();
    const r = await subscribe(t);
    // The sixth request is never answered: the worker is killed while it waits for it.
    r.respond = (n) => (n === 5 ? 'hang' : 204);
    const first = worker();
    await first.ready();
    const ids = await record(t, 20);
    await until('the sixth request is in flight', () => r.received.length >= 6, 60_000);
    await sigkill(first);
    const killedAt = Date.now();
    const inFlight = r.received[5]!.id;
    worker();
    await until('every event accepted after the kill', () => r.ids().length >= 20, 90_000);
    await new Promise((res) => setTimeout(res, 2_000)); // anything sent twice more would arrive now
    console.log(`[webhooks] delivery taken up again ${Date.now() - killedAt} ms after the SIGKILL (lease 3 s, job heartbeat 10 s)`);
    expect(r.ids()).toEqual(ids);
    expect(r.received.every((x) => x.verified[0])).toBe(true);
    const sent = r.received.map((x) => x.id);
    // At least once: the event in flight, and those accepted before it but not yet recorded (a batch of at most
    // 20), were sent again with the same webhook-id, in order, from where the recorded cursor stood; nothing else.
    const k = ids.indexOf(inFlight);
    const again = ids.filter((id) => sent.filter((x) => x === id).length > 1);
    expect(again.at(-1)).toBe(inFlight);
    expect(again.length).toBeLessThanOrEqual(20);
    expect(sent.slice(6)).toEqual(ids.slice(k - again.length + 1));
    console.log(`[webhooks] sent again after the kill: ${again.length} (the one in flight and ${again.length - 1} accepted but not yet recorded)`);
    const rows = await queryDb<{ state: string; n: number }>(own.url,
      `select state, count(*)::int as n from ${t.tenant.schema}.webhook_deliveries group by state order by state`);
    expect(rows).toEqual([{ state: 'succeeded', n: 20 }]);
  }, 180_000);
});

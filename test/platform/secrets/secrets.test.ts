import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useHarness, type TestTenant } from '../../harness/harness.js';
import { startReceiver, type Receiver } from '../../harness/webhook-receiver.js';
import { executorOf } from '../../../src/platform/db/orm.js';
import { qualified, sql } from '../../../src/platform/db/sql.js';
import { recordEvent } from '../../../src/platform/events/events.js';
import { keyFingerprint, openSecret } from '../../../src/platform/secrets/box.js';
import { deliverWebhooks } from '../../../src/resources/webhooks/delivery.js';
import { loadConfig } from '../../../src/platform/config.js';

// Issue 22.12: webhook signing secrets are stored sealed with the operator's SECRETS_KEY; during a key rotation
// the previous key still opens them (SECRETS_KEY_PREVIOUS), `cli secrets rotate` seals them all with the new
// key, and a secret no configured key opens is never sent as plain text nor shown anywhere.
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const saved = { key: process.env.SECRETS_KEY, previous: process.env.SECRETS_KEY_PREVIOUS, allow: process.env.WEBHOOK_ALLOW_HOSTS };
const setKeys = (key: string | undefined, previous?: string) => {
  if (key === undefined) delete process.env.SECRETS_KEY;
  else process.env.SECRETS_KEY = key;
  if (previous === undefined) delete process.env.SECRETS_KEY_PREVIOUS;
  else process.env.SECRETS_KEY_PREVIOUS = previous;
};

// A database of its own: `secrets rotate` goes through every municipality of the database it is given.
const { h, own } = useHarness({ tenant: false, ownDatabase: 'secrets22' });
let t: TestTenant;
let r: Receiver;
beforeAll(async () => {
  process.env.WEBHOOK_ALLOW_HOSTS = '127.0.0.1';
  setKeys(K1);
  t = await h.tenant();
  r = await startReceiver();
});
afterAll(async () => {
  await r?.close();
  setKeys(saved.key, saved.previous);
  if (saved.allow === undefined) delete process.env.WEBHOOK_ALLOW_HOSTS;
  else process.env.WEBHOOK_ALLOW_HOSTS = saved.allow;
});

const stored = async (uuid: string) =>
  (await sql<{ secret: string; previous_secrets: { secret: string }[] }>`select secret, previous_secrets from ${qualified(t.tenant.schema, 'webhooks')}
    where uuid = ${uuid}::uuid`.execute(executorOf(h.orm))).rows[0]!;
const fp = (k: string) => keyFingerprint(Buffer.from(k, 'base64'));

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      cwd: ROOT, env: { ...process.env, DATABASE_URL: own.url, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function deliverOne(): Promise<void> {
  await t.context().em.transactional(async (em) => {
    const { dbOf } = await import('../../../src/platform/context.js');
    await recordEvent(t.context(), dbOf(em), 'offer.published', { offer: '0b1c2d3e-0000-4000-8000-000000000001', edition: '0b1c2d3e-0000-4000-8000-000000000002', status: ['published'] });
  });
  const before = r.received.length;
  const deadline = Date.now() + 30_000;
  while (r.received.length === before && Date.now() < deadline) {
    await deliverWebhooks(t.context(), { retry: { baseMs: 30, capMs: 200, disableAfterMs: 86_400_000 } });
  }
}

describe('webhook secrets at rest', () => {
  let hook: { uuid: string; secret: string };
  let rotated: { secret: string };

  it('are stored sealed with SECRETS_KEY, never as they are, and still sign', async () => {
    hook = (await t.post('/webhooks', { url: r.url() })).body;
    rotated = (await t.post(`/webhooks/${hook.uuid}/rotate-secret`)).body;
    const row = await stored(hook.uuid);
    expect(row.secret).toMatch(new RegExp(`^enc:v1:${fp(K1)}:`));
    expect(row.secret).not.toContain(rotated.secret.slice(6));
    expect(row.previous_secrets[0]!.secret).toMatch(new RegExp(`^enc:v1:${fp(K1)}:`));
    expect(JSON.stringify(row)).not.toContain(hook.secret.slice(6));
    expect(openSecret(row.secret)).toBe(rotated.secret);
    r.secrets = [hook.secret, rotated.secret];
    await deliverOne();
    expect(r.received.at(-1)!.verified).toEqual([true, true]);
  });

  it('a rotation of SECRETS_KEY: the old key still opens (SECRETS_KEY_PREVIOUS), new ones are sealed with the new key, `secrets rotate` reseals the rest', async () => {
    setKeys(K2, K1);
    // Another receiver (each receiver checks one subscription's secrets).
    const elsewhere = await startReceiver();
    const other = (await t.post('/webhooks', { url: elsewhere.url() })).body;
    await elsewhere.close();
    expect((await stored(other.uuid)).secret).toMatch(new RegExp(`^enc:v1:${fp(K2)}:`));
    await t.patch(`/webhooks/${other.uuid}`, { enabled: false });
    await deliverOne();
    expect(r.received.at(-1)!.verified).toEqual([true, true]);

    // Without the new key the command refuses.
    const refused = await cli(['secrets', 'rotate'], { SECRETS_KEY: '' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/SECRETS_KEY is not set/);
    const run = await cli(['secrets', 'rotate'], { SECRETS_KEY: K2, SECRETS_KEY_PREVIOUS: K1 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n')).toContain(`${t.slug}\tresealed=2`);
    const row = await stored(hook.uuid);
    expect(row.secret).toMatch(new RegExp(`^enc:v1:${fp(K2)}:`));
    expect(row.previous_secrets[0]!.secret).toMatch(new RegExp(`^enc:v1:${fp(K2)}:`));
    // Done: the old key can go.
    setKeys(K2);
    expect(openSecret(row.secret, loadConfig({ SECRETS_KEY: K2 }))).toBe(rotated.secret);
    await deliverOne();
    expect(r.received.at(-1)!.verified).toEqual([true, true]);
    // A second run finds nothing to do.
    expect((await cli(['secrets', 'rotate'], { SECRETS_KEY: K2 })).stdout).toContain(`${t.slug}\tresealed=0`);
  }, 120_000);

  it('a secret no configured key opens is not sent, and the attempt says why without the secret', async () => {
    setKeys(randomBytes(32).toString('base64'));
    const before = r.received.length;
    await t.context().em.transactional(async (em) => {
      const { dbOf } = await import('../../../src/platform/context.js');
      await recordEvent(t.context(), dbOf(em), 'offer.published', { offer: '0b1c2d3e-0000-4000-8000-000000000003', edition: '0b1c2d3e-0000-4000-8000-000000000002', status: ['published'] });
    });
    let deliveries: { state: string; error?: string }[] = [];
    const deadline = Date.now() + 30_000;
    while (!deliveries.some((d) => d.state === 'failed') && Date.now() < deadline) {
      await deliverWebhooks(t.context(), { retry: { baseMs: 30, capMs: 200, disableAfterMs: 86_400_000 } });
      deliveries = (await t.get(`/webhooks/${hook.uuid}/deliveries`)).body;
    }
    const failed = deliveries.find((d) => d.state === 'failed')!;
    expect(failed.error).toMatch(/^not sent: a stored secret is sealed with key [0-9a-f]{8}, which is neither SECRETS_KEY nor in SECRETS_KEY_PREVIOUS$/);
    expect(r.received.length).toBe(before);
    setKeys(K2);
  });
});

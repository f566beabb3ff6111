import { describe, expect, it } from 'vitest';
import { useHarness, type TestTenant } from '../../harness/harness.js';
import { poolGuardOf } from '../../../src/platform/db/orm.js';
import type { RetryReason } from '../../../src/platform/db/attempts.js';
import { edition, offer } from '../offers/helpers.js';

// Issue 23, item 2: `DELETE /participants/{uuid}` and `DELETE /accounts/{uuid}` of the same family at once
// answered 500 (a deadlock) in 45 of 100 pairs. Every multi-row delete now takes its locks in one order
// (accounts, participants, offers, each by uuid; docs/decisions.md "Lock order"), so the pair never deadlocks:
// no 5xx, and not even a retried deadlock (the service's retries, platform/db/attempts.ts, would hide one).
const { h, t } = useHarness();

async function family(t: TestTenant, offers: string[], i: number) {
  const account = (await t.post('/accounts', { email: `pair-${i}-${Math.random().toString(36).slice(2, 8)}@example.org`, firstname: 'Eva', lastname: 'Paar' })).body;
  const children = [];
  for (const name of ['Ali', 'Bo']) {
    const p = await t.post('/participants', { firstname: name, lastname: 'Paar', dateOfBirth: '2016-05-23', account: account.uuid });
    expect(p.status, p.text).toBe(201);
    children.push(p.body.uuid as string);
  }
  // Every other family applies (both children, two offers): the offers' locks join the order.
  if (i % 2 === 0) {
    for (const child of children) {
      for (const o of offers) {
        const a = await t.post('/attendances', { offer: o, participant: child });
        expect(a.status, a.text).toBe(201);
      }
    }
  }
  return { account: account.uuid as string, children };
}

describe('deleting a participant and its family account at the same moment', () => {
  it('never deadlocks: 100 pairs, no 5xx, no deadlock to retry', { timeout: 240_000 }, async () => {
    const ed = await edition(t);
    const offers = [(await offer(t, { name: 'Paar A', edition: ed.uuid, maxParticipants: 500 })).uuid, (await offer(t, { name: 'Paar B', edition: ed.uuid, maxParticipants: 500 })).uuid];
    const retries: RetryReason[] = [];
    poolGuardOf(h.orm)!.on({ retried: (_schema, reason) => retries.push(reason) });
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const f = await family(t, offers, i);
      const [child, account] = await Promise.all([t.del(`/participants/${f.children[0]}`), t.del(`/accounts/${f.account}`)]);
      statuses.push(child.status, account.status);
      expect([child.status, account.status], `${child.text} ${account.text}`).toEqual([204, 204]);
    }
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(retries.filter((r) => r === 'deadlock')).toEqual([]);
  });
});

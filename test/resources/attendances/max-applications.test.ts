import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';
import { apply, createEdition, createOffer, createParticipant, transitionOk } from './helpers.js';

// Issue 13 item 5b, D4: an `application_system` task's `maxApplications` is the most applications one child
// may have in the edition while that phase runs (withdrawn ones do not count); POST /attendances beyond it
// is 422.

const { h, t } = useHarness();

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00');
const running = (maxApplications: number | null) => ({
  type: 'application_system', applicationSystem: 'firstcome', maxApplications,
  begin: iso(Date.now() - 86_400_000), end: iso(Date.now() + 86_400_000),
});

describe('maxApplications on POST /attendances', () => {
  it('refuses the application beyond the running phase\'s limit with 422; withdrawn ones do not count', async () => {
    const ed = await createEdition(t, { tasks: [running(2)] });
    const offers = await Promise.all([0, 1, 2, 3].map(() => createOffer(t, { edition: ed.uuid, maxParticipants: null })));
    const child = await createParticipant(t);
    const first = await apply(t, offers[0].uuid, child.uuid);
    await apply(t, offers[1].uuid, child.uuid);
    const res = await t.post('/attendances', { offer: offers[2].uuid, participant: child.uuid });
    const p = expectProblem(res, 422);
    expect(p.type).toBe('/errors/422');
    expect(p.detail).toMatch(/^participant: .*at most 2 .*maxApplications/);
    // Nothing was created.
    expect((await t.get(`/attendances?participant=${child.uuid}`)).body).toHaveLength(2);
    // Applying again for an offer already applied for reuses that application: not refused.
    expect((await apply(t, offers[1].uuid, child.uuid)).status).toBe('confirmed');
    // A withdrawal frees one.
    await transitionOk(t, first.uuid, 'withdraw');
    await apply(t, offers[2].uuid, child.uuid);
    expectProblem(await t.post('/attendances', { offer: offers[3].uuid, participant: child.uuid }), 422);
    // ... and a withdrawn application applied for again counts again.
    expectProblem(await t.post('/attendances', { offer: offers[0].uuid, participant: child.uuid }), 422);
    // Another child is not affected.
    const sibling = await createParticipant(t);
    await apply(t, offers[3].uuid, sibling.uuid);
  });

  it('concurrent applications of one child cannot pass the limit together', async () => {
    const ed = await createEdition(t, { tasks: [running(1)] });
    const offers = await Promise.all([0, 1, 2, 3].map(() => createOffer(t, { edition: ed.uuid, maxParticipants: null })));
    const child = await createParticipant(t);
    const results = await Promise.all(offers.map((o) => t.post('/attendances', { offer: o.uuid, participant: child.uuid })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expectProblem(r, 422);
  });

  it('has no limit outside a running phase, with null, or counting other editions', async () => {
    const past = await createEdition(t, { tasks: [{ ...running(1), begin: iso(Date.now() - 3 * 86_400_000), end: iso(Date.now() - 2 * 86_400_000) }] });
    const unlimited = await createEdition(t, { tasks: [running(null)] });
    const child = await createParticipant(t);
    for (const ed of [past, unlimited]) {
      for (let i = 0; i < 2; i++) await apply(t, (await createOffer(t, { edition: ed.uuid, maxParticipants: null })).uuid, child.uuid);
    }
    const limited = await createEdition(t, { tasks: [running(1)] });
    await apply(t, (await createOffer(t, { edition: limited.uuid, maxParticipants: null })).uuid, child.uuid);
    expectProblem(await t.post('/attendances', { offer: (await createOffer(t, { edition: limited.uuid, maxParticipants: null })).uuid, participant: child.uuid }), 422);
  });
});

import { describe, it, expect } from 'vitest';
import {
  OFFER_TRANSITIONS,
  applyOfferTransition,
  matchesStatusFilter,
  mayApplyOfferTransition,
  normalizePlaces,
  offerTransitionsFor,
  offerTransitionsFromPlaces,
  type OfferPlace,
} from '../../src/domain/offer-workflow.js';

const now = new Date('2027-07-01T10:00:00+02:00');
const future = new Date('2027-07-20T09:00:00+02:00');
const past = new Date('2027-06-20T09:00:00+02:00');
const admin = { role: 'admin' as const, ownOffer: false, firstDateBegin: future, now };
const organiser = { role: 'organiser' as const, ownOffer: true, firstDateBegin: future, now };

// D5 table, per marking: target of each transition, or '-'.
const MARKINGS: Array<{ places: OfferPlace[]; expected: Record<string, OfferPlace[] | '-'> }> = [
  {
    places: ['draft'],
    expected: { complete: ['completed'], approve: ['reviewed'], unapprove: '-', publish: ['published'], cancel: '-', relaunch: '-', unpublish: '-' },
  },
  {
    places: ['completed'],
    expected: { complete: '-', approve: ['reviewed'], unapprove: '-', publish: ['published'], cancel: '-', relaunch: '-', unpublish: '-' },
  },
  {
    places: ['reviewed'],
    expected: { complete: '-', approve: '-', unapprove: ['completed'], publish: ['published'], cancel: '-', relaunch: '-', unpublish: '-' },
  },
  {
    places: ['published'],
    expected: { complete: '-', approve: '-', unapprove: '-', publish: '-', cancel: ['published', 'cancelled'], relaunch: '-', unpublish: ['unpublished'] },
  },
  {
    places: ['published', 'cancelled'],
    expected: { complete: '-', approve: '-', unapprove: '-', publish: '-', cancel: '-', relaunch: ['published'], unpublish: ['unpublished'] },
  },
  {
    places: ['unpublished'],
    expected: { complete: '-', approve: '-', unapprove: '-', publish: ['published'], cancel: '-', relaunch: '-', unpublish: '-' },
  },
];

describe('offer workflow (D5)', () => {
  const cases = MARKINGS.flatMap(({ places, expected }) =>
    OFFER_TRANSITIONS.map((transition) => ({ places, transition, to: expected[transition] })),
  );

  it.each(cases)('admin: $places --$transition--> $to', ({ places, transition, to }) => {
    const r = applyOfferTransition({ ...admin, places, transition });
    if (to === '-') {
      expect(r).toMatchObject({ ok: false, code: 'state_conflict', reason: 'not_allowed', current: places });
      if (!r.ok && r.reason === 'not_allowed') {
        expect(r.possible).toEqual(offerTransitionsFromPlaces(places));
        expect(r.detail).toContain(places.join(', '));
      }
    } else {
      expect(r).toEqual({ ok: true, transition, from: places, to });
    }
  });

  it('lists possible transitions per marking in a stable order', () => {
    expect(offerTransitionsFor({ ...admin, places: ['draft'] })).toEqual(['complete', 'approve', 'publish']);
    expect(offerTransitionsFor({ ...admin, places: ['cancelled', 'published'] })).toEqual(['relaunch', 'unpublish']);
    expect(offerTransitionsFor({ ...organiser, places: ['draft'] })).toEqual(['complete']);
    expect(offerTransitionsFor({ ...organiser, places: ['published'] })).toEqual(['cancel']);
    expect(offerTransitionsFor({ ...organiser, places: ['published'], firstDateBegin: past })).toEqual([]);
    expect(offerTransitionsFor({ ...organiser, places: ['published'], ownOffer: false })).toEqual([]);
  });

  it.each([
    // transition, firstDateBegin, ownOffer, allowed for organiser
    ['complete', future, true, true],
    ['complete', past, true, true],
    ['complete', future, false, false],
    ['approve', future, true, false],
    ['unapprove', future, true, false],
    ['publish', future, true, false],
    ['unpublish', future, true, false],
    ['cancel', future, true, true],
    ['cancel', past, true, false],
    ['cancel', now, true, false], // the first date has begun
    ['cancel', null, true, true], // D10: no dates, always
    ['relaunch', future, true, true],
    ['relaunch', past, true, false],
    ['relaunch', null, true, true],
    ['relaunch', future, false, false],
  ] as const)('organiser %s (first date %s, own %s) -> %s', (transition, firstDateBegin, ownOffer, allowed) => {
    expect(mayApplyOfferTransition(transition, { ...organiser, firstDateBegin, ownOffer })).toBe(allowed);
  });

  it('checks permission before state (403 whatever the state, D10)', () => {
    const r = applyOfferTransition({ ...organiser, places: ['draft'], transition: 'publish' });
    expect(r).toMatchObject({ ok: false, code: 'not_permitted', reason: 'forbidden' });
    const r2 = applyOfferTransition({ ...organiser, places: ['draft'], transition: 'cancel', firstDateBegin: past });
    expect(r2).toMatchObject({ ok: false, code: 'not_permitted' });
    // permitted but impossible from state: 409
    const r3 = applyOfferTransition({ ...organiser, places: ['draft'], transition: 'cancel' });
    expect(r3).toMatchObject({ ok: false, code: 'state_conflict', possible: ['complete'] });
  });

  it('refuses cancel on a cancelled offer with 409', () => {
    const r = applyOfferTransition({ ...admin, places: ['published', 'cancelled'], transition: 'cancel' });
    expect(r).toMatchObject({ ok: false, code: 'state_conflict', current: ['published', 'cancelled'] });
  });

  it.each(['', 'Publish', 'confirm', 'await_email', 'delete'])('unknown transition %j is 422', (transition) => {
    expect(applyOfferTransition({ ...admin, places: ['draft'], transition })).toMatchObject({ ok: false, code: 'unknown_transition' });
    expect(applyOfferTransition({ ...organiser, ownOffer: false, places: ['draft'], transition })).toMatchObject({
      code: 'unknown_transition',
    });
  });

  it('normalizes markings and matches the status filter', () => {
    expect(normalizePlaces(['cancelled', 'published', 'published'])).toEqual(['published', 'cancelled']);
    expect(matchesStatusFilter(['published', 'cancelled'], ['published'])).toBe(true);
    expect(matchesStatusFilter(['published'], ['cancelled'])).toBe(false);
    expect(matchesStatusFilter(['draft'], ['draft', 'reviewed'])).toBe(true);
  });
});
